import Foundation
import WCSMedia
import WCSTransport

/// The Swift side of the `peer`, `peer-lite` and `peer-offer` scenarios: a `PeerConnection` on
/// 127.0.0.1 that answers the browser's offer (full ICE or ICE-lite) or makes the offer itself,
/// sends Opus and VP8 once connected, and counts and decodes what the browser sends.
///
/// Page messages, answerer: `{type: "offer", sdp}` → `{type: "answer", sdp}` (or `{type:
/// "answer", error}`). Offerer: `{type: "ready"}` → `{type: "offer", sdp}`, then `{type:
/// "answer", sdp}` → `{type: "answerApplied"}` (with `error` on failure). Both:
/// `{type: "peerStatus"}` → `{type: "peerStatus", state, received: {...}, sent: {...}}`.
///
/// Every mutable field is touched only on `loop` (messages hop there with `loop.execute`,
/// `finish()` reads with `loop.submit`), checked: they live in a `LoopBoundBox`.
final class PeerConnectionScenario: InteropScenario, Sendable {
  enum Role {
    /// The browser offers; we answer, as an ICE-lite agent when `iceLite`.
    case answerer(iceLite: Bool)
    /// We offer (sendrecv Opus + VP8, `SDPOfferBuilder`); the browser answers.
    case offerer
  }

  let role: Role
  let loop: EventLoop
  /// The scenario's mutable state, on `loop` only.
  private struct State {
    var connection: PeerConnection?
    var receiver: MediaReceiveCounter?
    var sender: SyntheticMediaSender?
    var states: [String] = []
    var events: [String] = []
    var errors: [String] = []
    var audioPacketsSent = 0
    var videoPacketsSent = 0
    var connectedAt: ContinuousClock.Instant?
    var answeredAt: ContinuousClock.Instant?
    var secondsToConnect: Double?
    var lastKeyFrameRequest: ContinuousClock.Instant?
  }

  private let state: LoopBoundBox<State>

  init(role: Role) {
    self.role = role
    let loop = EventLoop(label: "InteropPeer.PeerConnection")
    self.loop = loop
    state = LoopBoundBox(State(), loop: loop)
  }

  private var iceLite: Bool {
    if case .answerer(let iceLite) = role { return iceLite }
    return false
  }

  func handle(_ message: JSONValue, reply: @escaping @Sendable (JSONValue) -> Void) {
    let sdp = message["sdp"]?.stringValue ?? ""
    switch (message["type"]?.stringValue, role) {
    case ("offer", .answerer):
      loop.execute { [self] in answer(sdp, reply: reply) }
    case ("ready", .offerer):
      loop.execute { [self] in offer(reply: reply) }
    case ("answer", .offerer):
      loop.execute { [self] in applyAnswer(sdp, reply: reply) }
    case ("peerStatus", _):
      loop.execute { [self] in reply(status(type: "peerStatus")) }
    default:
      loop.execute { [self] in
        state.value.errors.append("unexpected page message \(message["type"]?.stringValue ?? "?")")
      }
    }
  }

  func finish() -> JSONValue {
    let summary = loop.submit { () -> JSONValue in
      let summary = status(type: "final")
      state.value.connection?.close()
      state.value.connection = nil
      return summary
    }
    loop.shutdown()
    return summary
  }

  private func makeConnection() -> PeerConnection {
    var configuration = PeerConnectionConfiguration.loopback
    configuration.iceLite = iceLite
    let connection = PeerConnection(configuration: configuration, loop: loop)
    state.value.connection = connection
    connection.onEvent = { [weak self] event in self?.handleEvent(event) }
    return connection
  }

  private func answer(_ offer: String, reply: @escaping @Sendable (JSONValue) -> Void) {
    let connection = makeConnection()
    do {
      try connection.setRemoteDescription(offer: offer)
      let answer = try Self.onlyOpusAndVP8(try connection.createAnswer())
      guard let remote = connection.remoteOffer else { throw PeerConnectionError.notConnected }
      var generator = SystemRandomNumberGenerator()
      try prepareMedia(
        remote, connection: connection,
        audioSSRC: UInt32.random(in: 1...UInt32.max, using: &generator),
        videoSSRC: UInt32.random(in: 1...UInt32.max, using: &generator))
      state.value.answeredAt = loop.now()
      reply(.object(["type": "answer", "sdp": .string(answer)]))
    } catch {
      state.value.errors.append("answer: \(error)")
      reply(.object(["type": "answer", "error": .string("\(error)")]))
    }
  }

  private func offer(reply: @escaping @Sendable (JSONValue) -> Void) {
    let connection = makeConnection()
    var generator = SystemRandomNumberGenerator()
    let audioSSRC = UInt32.random(in: 1...UInt32.max, using: &generator)
    let videoSSRC = UInt32.random(in: 1...UInt32.max, using: &generator)
    do {
      let offer = try connection.createOffer(
        audio: SDPOfferParameters.Audio(
          direction: .sendrecv, ssrc: audioSSRC, trackId: "interop-audio", includeG711: false),
        video: SDPOfferParameters.Video(
          direction: .sendrecv, ssrc: videoSSRC, trackId: "interop-video"),
        mode: .asGiven)
      guard let local = connection.localSessionDescription else {
        throw PeerConnectionError.notConnected
      }
      try prepareMedia(local, connection: connection, audioSSRC: audioSSRC, videoSSRC: videoSSRC)
      reply(.object(["type": "offer", "sdp": .string(offer)]))
    } catch {
      state.value.errors.append("offer: \(error)")
      reply(.object(["type": "offer", "error": .string("\(error)")]))
    }
  }

  private func applyAnswer(_ answer: String, reply: @escaping @Sendable (JSONValue) -> Void) {
    do {
      guard let connection = state.value.connection else {
        throw PeerConnectionError.notConnected
      }
      try connection.setRemoteDescription(answer: answer)
      state.value.answeredAt = loop.now()
      reply(.object(["type": "answerApplied"]))
    } catch {
      state.value.errors.append("answer: \(error)")
      reply(.object(["type": "answerApplied", "error": .string("\(error)")]))
    }
  }

  /// Sets up counting of what arrives and sending of ours, with the payload types, MIDs and
  /// MID extension ids of `description` (the offer, whichever side made it: its payload types
  /// hold both ways).
  private func prepareMedia(
    _ description: SessionDescription, connection: PeerConnection, audioSSRC: UInt32,
    videoSSRC: UInt32
  ) throws {
    let audio = description.media.first { $0.media == "audio" }
    let video = description.media.first { $0.media == "video" }
    let opus = audio?.payloadTypes(forCodec: "opus").first.flatMap { UInt8(exactly: $0) }
    let vp8 = video?.payloadTypes(forCodec: "VP8").first.flatMap { UInt8(exactly: $0) }
    let receiver = MediaReceiveCounter(opusPayloadType: opus, vp8PayloadType: vp8)
    state.value.receiver = receiver
    connection.onRTP = { [weak self] _, packet in
      receiver.receiveRTP(packet)
      if receiver.needsKeyFrame { self?.requestKeyFrame() }
    }
    connection.onRTCP = { [weak self] packet in
      if receiver.receiveRTCP(packet) { self?.state.value.sender?.requestKeyFrame() }
    }
    guard let audio, let video, let opus, let vp8 else {
      state.value.errors.append("no Opus audio or no VP8 video section; sending nothing")
      return
    }
    state.value.sender = try SyntheticMediaSender(
      audio: .init(
        payloadType: opus, ssrc: audioSSRC, mid: audio.mid,
        midExtensionID: Self.midExtensionID(audio)),
      video: .init(
        payloadType: vp8, ssrc: videoSSRC, mid: video.mid,
        midExtensionID: Self.midExtensionID(video)))
  }

  /// The answer without the codecs we neither send nor decode (RED, ULPFEC, RTX, H264, VP9,
  /// AV1, G.711, ...), as a real answerer accepts only what it handles: the browser then sends
  /// plain Opus and VP8.
  private static func onlyOpusAndVP8(_ answer: String) throws -> String {
    var description = try SDPParser.parse(answer).description
    let names = Set(
      description.media.flatMap { section in section.rtpMaps.map { $0.encodingName.lowercased() } })
    description.stripCodecs(names.subtracting(["opus", "vp8"]).sorted())
    return SDPWriter.write(description)
  }

  private static func midExtensionID(_ section: MediaDescription) -> UInt8? {
    section.headerExtensions.first { $0.uri == "urn:ietf:params:rtp-hdrext:sdes:mid" }
      .flatMap { UInt8(exactly: $0.id) }.flatMap { (1...14).contains($0) ? $0 : nil }
  }

  private func handleEvent(_ event: PeerConnectionEvent) {
    switch event {
    case .stateChanged(let newState):
      state.value.states.append("\(newState)")
      if newState == .connected, state.value.connectedAt == nil {
        state.value.connectedAt = loop.now()
        if let answeredAt = state.value.answeredAt {
          state.value.secondsToConnect = MediaDuration(answeredAt.duration(to: loop.now())).seconds
        }
        scheduleAudio()
        scheduleVideo()
      }
    case .selectedPair(let pair): state.value.events.append("selectedPair \(pair)")
    case .dtlsConnected(let role, let profile): state.value.events.append("dtls \(role) \(profile)")
    case .remoteClosed: state.value.events.append("remoteClosed")
    case .localCandidate, .gatheringComplete: break
    }
  }

  /// Sends a PLI (RFC 4585 §6.3.1) for the browser's video, at most every 300 ms: Chrome sends
  /// key frames only on request, so a lost first key frame would otherwise never be repaired.
  private func requestKeyFrame() {
    guard let connection = state.value.connection, connection.state == .connected,
      let receiver = state.value.receiver, let mediaSSRC = receiver.videoSSRC,
      let sender = state.value.sender
    else { return }
    let now = loop.now()
    if let last = state.value.lastKeyFrameRequest, last.duration(to: now) < .milliseconds(300) {
      return
    }
    state.value.lastKeyFrameRequest = now
    do {
      let packet = try RTCPPacket.serializeCompound([
        .receiverReport(RTCPReceiverReport(ssrc: sender.video.ssrc)),
        .pictureLossIndication(
          RTCPPictureLossIndication(senderSSRC: sender.video.ssrc, mediaSSRC: mediaSSRC)),
      ])
      try connection.sendRTCP(packet)
      receiver.keyFrameRequested()
    } catch {
      state.value.errors.append("PLI: \(error)")
    }
  }

  private func scheduleAudio() {
    guard let connection = state.value.connection, connection.state == .connected,
      let sender = state.value.sender
    else { return }
    do {
      try connection.sendRTP(try sender.nextAudioPacket())
      state.value.audioPacketsSent += 1
    } catch {
      state.value.errors.append("audio: \(error)")
      return
    }
    loop.schedule(after: .milliseconds(20)) { [weak self] in self?.scheduleAudio() }
  }

  private func scheduleVideo() {
    guard let connection = state.value.connection, connection.state == .connected,
      let sender = state.value.sender
    else { return }
    do {
      for packet in try sender.nextVideoPackets() {
        try connection.sendRTP(packet)
        state.value.videoPacketsSent += 1
      }
    } catch {
      state.value.errors.append("video: \(error)")
      return
    }
    loop.schedule(after: .milliseconds(1000 / SyntheticMediaSender.frameRate)) { [weak self] in
      self?.scheduleVideo()
    }
  }

  private func status(type: String) -> JSONValue {
    let state = self.state.value
    let stats = state.connection?.stats
    return .object([
      "type": .string(type),
      "iceLite": .bool(iceLite),
      "signalingRole": .string(state.connection?.signalingRole.map { "\($0)" } ?? "none"),
      "state": .string(state.connection.map { "\($0.state)" } ?? "none"),
      "states": .array(state.states.map { .string($0) }),
      "events": .array(state.events.map { .string($0) }),
      "errors": .array(state.errors.map { .string($0) }),
      "secondsToConnect": state.secondsToConnect.map { .number($0) } ?? .null,
      "received": state.receiver?.json ?? .null,
      "sent": .object([
        "audioPackets": .number(Double(state.audioPacketsSent)),
        "videoPackets": .number(Double(state.videoPacketsSent)),
        "videoFramesEncoded": .number(Double(state.sender?.videoFramesEncoded ?? 0)),
        "keyFramesEncoded": .number(Double(state.sender?.keyFramesEncoded ?? 0)),
        "audioSSRC": state.sender.map { .number(Double($0.audio.ssrc)) } ?? .null,
        "videoSSRC": state.sender.map { .number(Double($0.video.ssrc)) } ?? .null,
      ]),
      "transport": .object([
        "rtpPacketsReceived": .number(Double(stats?.rtpPacketsReceived ?? 0)),
        "rtcpPacketsReceived": .number(Double(stats?.rtcpPacketsReceived ?? 0)),
        "rtpPacketsSent": .number(Double(stats?.rtpPacketsSent ?? 0)),
        "srtpDrops": .number(Double(stats?.srtpDrops ?? 0)),
        "unexpectedDatagrams": .number(Double(stats?.unexpectedDatagrams ?? 0)),
        "dtlsRole": stats?.dtlsRole.map { .string("\($0)") } ?? .null,
        "protectionProfile": stats?.protectionProfile.map { .string("\($0)") } ?? .null,
        "selectedPair": stats?.selectedPair.map { .string("\($0)") } ?? .null,
      ]),
    ])
  }
}
