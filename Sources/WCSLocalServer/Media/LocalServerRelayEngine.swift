import Foundation
import Synchronization
import WCSMedia

/// The media side of `wcs-local-server` (wcs-protocol.md §9.3): per stream an ICE-lite
/// answerer `PeerConnection` (candidates inline with `a=end-of-candidates`, DTLS role chosen by
/// the answerer, `active` to an `actpass` offer), and an SFU relay from each publisher to its
/// players — SSRC, payload type, sequence number and timestamp rewritten per player; RTCP
/// terminated per leg (our own RR to publishers, SR to players); PLI/FIR from players forwarded
/// as PLI to the publisher at most once per `keyFrameRequestIntervalMillis`; NACKs served from
/// a per-publisher cache of the last `packetCacheSize` packets; recording to WebM.
///
/// Threading (`@unchecked Sendable`): the relay state (`publishers`, `players`, `reportTimer`,
/// `random`) is touched only on `loop`, where `perform` sends every request and where the
/// connections call back; `outbox` is a `Mutex`.
public final class LocalServerRelayEngine: LocalServerMediaEngineHooks, @unchecked Sendable {
  /// Engine settings.
  public struct Configuration: Sendable {
    /// Where recordings are written (the server's records directory).
    public var recordsDirectory: String
    /// ICE/DTLS settings of every connection; ICE-lite is forced on. Default: loopback allowed,
    /// no receive coalescing (`PeerConnectionConfiguration.receiveCoalescing`), no network
    /// emulation (`networkEmulation`, `send` being what the relay sends).
    public var peerConnection: PeerConnectionConfiguration
    /// RR/SR interval per leg, ms (RFC 3550 §6.2 allows a fixed interval for few members).
    public var reportIntervalMillis: Int64 = 1000
    /// Minimum time between key frame requests sent to one publisher, ms.
    public var keyFrameRequestIntervalMillis: Int64 = 1000
    /// RTP packets kept per publisher SSRC for NACK retransmission.
    public var packetCacheSize = 1024
    /// Receives media log lines (failed connections, recordings that could not be written),
    /// on the engine's loop. Default: none.
    public var log: @Sendable (String) -> Void = { _ in }

    /// Records into `recordsDirectory`; media on the host addresses of `bindAddress`
    /// (`127.0.0.1` → loopback only; `0.0.0.0` → every interface).
    public init(recordsDirectory: String, bindAddress: String = "127.0.0.1") {
      self.recordsDirectory = recordsDirectory
      // No receive coalescing: the relay forwards each packet as it arrives and has no periodic
      // media timer for packets to share wake-ups with, only the reports and watchdogs, so
      // coalescing would save about one wake-up a second and hold the packets arriving within
      // the window before each of those timers (up to 25 ms), in the path to every player.
      var peerConnection = PeerConnectionConfiguration(
        iceLite: true, allowLoopback: true, receiveCoalescing: .zero)
      if bindAddress != "0.0.0.0", bindAddress != "::", let address = ICEIPAddress(bindAddress) {
        peerConnection.hostAddresses = [address]
      }
      self.peerConnection = peerConnection
    }
  }

  private struct Outbox {
    var events: [LocalServerMediaEvent] = []
    var wakeUp: (@Sendable () -> Void)?
  }

  /// The loop every connection and the relay run on.
  public let loop: EventLoop
  private let configuration: Configuration
  private let outbox = Mutex(Outbox())
  private let epoch = ContinuousClock.now

  // Loop only.
  private var publishers: [String: RelayPublisher] = [:]
  private var players: [String: RelayPlayer] = [:]
  private var reportTimer: EventLoopTimer?
  private var random = SystemRandomNumberGenerator()
  private var isShutDown = false

  /// Creates an engine with its own event loop.
  public init(configuration: Configuration) {
    var configuration = configuration
    configuration.peerConnection.iceLite = true
    self.configuration = configuration
    loop = EventLoop(label: "wcs-local-server.media")
  }

  /// Queues `request` for the loop; results come back through `takeEvents()`.
  public func perform(_ request: LocalServerMediaRequest) {
    loop.execute { [self] in handle(request) }
  }

  /// Events since the last call, oldest first.
  public func takeEvents() -> [LocalServerMediaEvent] {
    outbox.withLock { box in
      defer { box.events.removeAll() }
      return box.events
    }
  }

  /// Remembers the driver's wake-up function.
  public func attach(wakeUp: @escaping @Sendable () -> Void) {
    outbox.withLock { $0.wakeUp = wakeUp }
  }

  /// Closes every connection (recordings still open are discarded: the core released the
  /// recorded ones with their names first) and stops the loop.
  public func shutdown() {
    loop.submit {
      isShutDown = true
      for publisher in publishers.values {
        publisher.peerConnection.close()
        publisher.recording?.discard()
      }
      for player in players.values { player.peerConnection.close() }
      publishers = [:]
      players = [:]
      if let reportTimer { loop.cancel(reportTimer) }
      reportTimer = nil
    }
    loop.shutdown()
  }

  // MARK: - Loop

  private func emit(_ event: LocalServerMediaEvent) {
    let wakeUp = outbox.withLock { box in
      box.events.append(event)
      return box.wakeUp
    }
    wakeUp?()
  }

  /// ms on a monotonic clock (statistics and limits only compare these).
  func nowMillis() -> Int64 {
    let elapsed = ContinuousClock.now - epoch
    return elapsed.components.seconds * 1000 + elapsed.components.attoseconds
      / 1_000_000_000_000_000
  }

  private func handle(_ request: LocalServerMediaRequest) {
    guard !isShutDown else { return }
    switch request {
    case .createPublisher(let publisher): createPublisher(publisher)
    case .createPlayer(let player): createPlayer(player)
    case .releaseMedia(let id, let recordName): release(id, recordName: recordName)
    case .requestKeyFrame(let id):
      if let publisher = publishers[id] { requestKeyFrame(publisher) }
    }
    scheduleReports()
  }

  private func newSSRC() -> UInt32 { UInt32.random(in: 1...UInt32.max, using: &random) }

  private func createPublisher(_ request: LocalServerPublisherRequest) {
    let id = request.mediaSessionId
    let connection = PeerConnection(configuration: configuration.peerConnection, loop: loop)
    do {
      let codecs = try RelayAnswer.offeredCodecs(request.offerSDP)
      try connection.setRemoteDescription(offer: request.offerSDP)
      let answer = try RelayAnswer.restrict(try connection.createAnswer())
      let publisher = RelayPublisher(
        mediaSessionId: id, streamName: request.streamName, peerConnection: connection,
        codecs: codecs, rtcpSSRC: newSSRC(),
        keyFrameRequests: KeyFrameRequestLimiter(
          intervalMillis: configuration.keyFrameRequestIntervalMillis))
      if request.record {
        let kinds = Set(codecs.values.map(\.kind))
        publisher.recording = RelayRecording(
          temporaryPath: temporaryRecordingPath(id),
          hasVideo: kinds.contains(.video) && request.hasVideo,
          hasAudio: kinds.contains(.audio) && request.hasAudio)
      }
      publishers[id] = publisher
      connection.onEvent = { [weak self] event in self?.connectionEvent(id, event) }
      connection.onRTP = { [weak self, weak publisher] _, packet in
        guard let self, let publisher else { return }
        self.publisherRTP(publisher, packet)
      }
      connection.onRTCP = { [weak self, weak publisher] packet in
        guard let self, let publisher else { return }
        self.publisherRTCP(publisher, packet)
      }
      emit(.answerReady(mediaSessionId: id, sdp: answer))
    } catch {
      connection.close()
      configuration.log("media \(id): offer refused: \(error)")
      emit(.failed(mediaSessionId: id, reason: Self.reason(error)))
    }
  }

  private func createPlayer(_ request: LocalServerPlayerRequest) {
    let id = request.mediaSessionId
    let connection = PeerConnection(configuration: configuration.peerConnection, loop: loop)
    do {
      let codecs = try RelayAnswer.offeredCodecs(request.offerSDP)
      try connection.setRemoteDescription(offer: request.offerSDP)
      let ssrcs: [RelayCodec.Kind: UInt32] = [.audio: newSSRC(), .video: newSSRC()]
      let answer = try RelayAnswer.restrict(
        try connection.createAnswer(),
        ssrcs: ["audio": ssrcs[.audio] ?? 1, "video": ssrcs[.video] ?? 2],
        cname: "wcs-\(request.streamName)")
      let player = RelayPlayer(
        mediaSessionId: id, sourceMediaSessionId: request.sourceMediaSessionId,
        peerConnection: connection, codecs: codecs, ssrcs: ssrcs)
      players[id] = player
      publishers[request.sourceMediaSessionId]?.playerIds.append(id)
      connection.onEvent = { [weak self] event in self?.connectionEvent(id, event) }
      connection.onRTCP = { [weak self, weak player] packet in
        guard let self, let player else { return }
        self.playerRTCP(player, packet)
      }
      emit(.answerReady(mediaSessionId: id, sdp: answer))
    } catch {
      connection.close()
      configuration.log("media \(id): offer refused: \(error)")
      emit(.failed(mediaSessionId: id, reason: Self.reason(error)))
    }
  }

  private func release(_ id: String, recordName: String?) {
    if let publisher = publishers.removeValue(forKey: id) {
      publisher.peerConnection.close()
      if let recording = publisher.recording {
        if let recordName,
          recording.finish(
            renamingTo: (configuration.recordsDirectory as NSString).appendingPathComponent(
              recordName))
        {
          emit(.recordingFinished(mediaSessionId: id, recordName: recordName))
        } else {
          configuration.log(
            "media \(id): recording not kept: \(recording.lastError ?? "no record name")")
          recording.discard()
        }
      }
    } else if let player = players.removeValue(forKey: id) {
      player.peerConnection.close()
      publishers[player.sourceMediaSessionId]?.playerIds.removeAll { $0 == id }
    }
  }

  private func connectionEvent(_ id: String, _ event: PeerConnectionEvent) {
    guard case .stateChanged(let state) = event else { return }
    switch state {
    case .connected:
      if let publisher = publishers[id], !publisher.connected {
        publisher.connected = true
        emit(.connected(mediaSessionId: id, codecs: Self.codecNames(publisher.codecs)))
      } else if let player = players[id], !player.connected {
        player.connected = true
        emit(.connected(mediaSessionId: id, codecs: Self.codecNames(player.codecs)))
      }
    case .failed(let error):
      guard publishers[id] != nil || players[id] != nil else { return }
      configuration.log("media \(id): connection failed: \(error)")
      emit(.failed(mediaSessionId: id, reason: Self.reason(error)))
    default: break
    }
  }

  // MARK: - Relay

  private func publisherRTP(_ publisher: RelayPublisher, _ raw: UnsafeRawBufferPointer) {
    guard let parsed = try? RTPHeader.parse(raw),
      let codec = publisher.codecs[parsed.header.payloadType]
    else { return }
    let header = parsed.header
    let bytes = [UInt8](raw)
    let now = nowMillis()
    let ssrc = header.ssrc
    if publisher.caches[ssrc] == nil {
      publisher.caches[ssrc] = RelayPacketCache(capacity: configuration.packetCacheSize)
      publisher.reception[ssrc] = RelayReceptionStatistics(ssrc: ssrc, clockRate: codec.clockRate)
    }
    publisher.caches[ssrc]?.store(bytes, sequenceNumber: header.sequenceNumber)
    publisher.reception[ssrc]?.record(
      sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, now: now)
    if codec.kind == .video { publisher.videoSSRC = ssrc }
    if let recording = publisher.recording,
      parsed.payloadRange.lowerBound <= parsed.payloadRange.upperBound,
      parsed.payloadRange.upperBound <= bytes.count
    {
      let payload = Array(bytes[parsed.payloadRange])
      switch codec.kind {
      case .video:
        recording.addVideo(
          sequenceNumber: header.sequenceNumber, timestamp: header.timestamp,
          marker: header.marker, payload: payload)
      case .audio: recording.addAudio(payload, timestamp: header.timestamp)
      }
    }
    for playerId in publisher.playerIds {
      guard let player = players[playerId], player.connected else { continue }
      relay(bytes, ssrc: ssrc, codec: codec, from: publisher, to: player, now: now)
    }
  }

  private func relay(
    _ bytes: [UInt8], ssrc: UInt32, codec: RelayCodec, from publisher: RelayPublisher,
    to player: RelayPlayer, now: Int64
  ) {
    if player.rewriters[ssrc] == nil {
      guard let outgoing = player.ssrcs[codec.kind] else { return }
      let sameKind = publisher.codecs.filter { $0.value.kind == codec.kind }
      let map = RelayCodecs.payloadTypeMap(publisher: sameKind, player: player.codecs)
      guard !map.isEmpty else { return }
      player.rewriters[ssrc] = RelayRTPRewriter(
        ssrc: outgoing, payloadTypes: map,
        sequenceOffset: UInt16.random(in: 0...UInt16.max, using: &random),
        timestampOffset: UInt32.random(in: 0...UInt32.max, using: &random))
      player.clockRates[ssrc] = codec.clockRate
    }
    guard let out = player.rewriters[ssrc]?.rewrite(bytes, now: now) else { return }
    try? player.peerConnection.sendRTP(out)
  }

  private func publisherRTCP(_ publisher: RelayPublisher, _ raw: UnsafeRawBufferPointer) {
    guard let packets = try? RTCPPacket.parseCompound(raw) else { return }
    let now = nowMillis()
    for packet in packets {
      if case .senderReport(let report) = packet {
        publisher.reception[report.ssrc]?.senderReportReceived(
          ntpTimestamp: report.ntpTimestamp, now: now)
      }
    }
  }

  private func playerRTCP(_ player: RelayPlayer, _ raw: UnsafeRawBufferPointer) {
    guard let packets = try? RTCPPacket.parseCompound(raw),
      let publisher = publishers[player.sourceMediaSessionId]
    else { return }
    let now = nowMillis()
    for packet in packets {
      switch packet {
      case .pictureLossIndication, .fullIntraRequest: requestKeyFrame(publisher)
      case .genericNACK(let nack):
        guard
          let (sourceSSRC, rewriter) = player.rewriters.first(where: {
            $0.value.ssrc == nack.mediaSSRC
          })
        else { continue }
        for lost in nack.lostSequenceNumbers {
          let source = rewriter.sourceSequenceNumber(lost)
          guard let cached = publisher.caches[sourceSSRC]?.packet(source),
            let out = player.rewriters[sourceSSRC]?.rewrite(cached, now: now, countsAsSent: false)
          else { continue }
          try? player.peerConnection.sendRTP(out)
        }
      default: break
      }
    }
  }

  private func requestKeyFrame(_ publisher: RelayPublisher) {
    guard publisher.connected, let video = publisher.videoSSRC,
      publisher.keyFrameRequests.shouldForward(now: nowMillis())
    else { return }
    let compound: [RTCPPacket] = [
      .receiverReport(RTCPReceiverReport(ssrc: publisher.rtcpSSRC)),
      .pictureLossIndication(
        RTCPPictureLossIndication(senderSSRC: publisher.rtcpSSRC, mediaSSRC: video)),
    ]
    guard let bytes = try? RTCPPacket.serializeCompound(compound) else { return }
    try? publisher.peerConnection.sendRTCP(bytes)
  }

  // MARK: - Reports

  private func scheduleReports() {
    guard reportTimer == nil, !isShutDown, !(publishers.isEmpty && players.isEmpty) else { return }
    reportTimer = loop.schedule(after: .milliseconds(configuration.reportIntervalMillis)) {
      [weak self] in
      guard let self else { return }
      self.reportTimer = nil
      self.sendReports()
      self.scheduleReports()
    }
  }

  private func sendReports() {
    let now = nowMillis()
    let ntp = Self.ntpNow()
    for publisher in publishers.values where publisher.connected {
      var blocks: [RTCPReportBlock] = []
      for ssrc in publisher.reception.keys.sorted() {
        if let block = publisher.reception[ssrc]?.reportBlock(now: now) { blocks.append(block) }
      }
      let report = RTCPPacket.receiverReport(
        RTCPReceiverReport(ssrc: publisher.rtcpSSRC, reports: Array(blocks.prefix(31))))
      if let bytes = try? RTCPPacket.serializeCompound([report]) {
        try? publisher.peerConnection.sendRTCP(bytes)
      }
    }
    for player in players.values where player.connected {
      for (source, rewriter) in player.rewriters {
        guard let last = rewriter.lastTimestamp else { continue }
        let clockRate = Int64(player.clockRates[source] ?? 90_000)
        let elapsed = UInt32(truncatingIfNeeded: (now - rewriter.lastSentAt) * clockRate / 1000)
        let report = RTCPSenderReport(
          ssrc: rewriter.ssrc, ntpTimestamp: ntp, rtpTimestamp: last &+ elapsed,
          packetCount: rewriter.packetCount, octetCount: rewriter.octetCount)
        if let bytes = try? RTCPPacket.serializeCompound([.senderReport(report)]) {
          try? player.peerConnection.sendRTCP(bytes)
        }
      }
    }
  }

  /// Wall clock as a 64-bit NTP timestamp (RFC 3550 §4: seconds since 1900, 32.32 fixed point).
  static func ntpNow() -> UInt64 {
    let seconds = Date().timeIntervalSince1970 + 2_208_988_800
    let whole = UInt64(seconds)
    let fraction = UInt64((seconds - Double(whole)) * 4_294_967_296)
    return whole << 32 | (fraction & 0xFFFF_FFFF)
  }

  // MARK: - Names

  private func temporaryRecordingPath(_ id: String) -> String {
    let safe = String(
      id.unicodeScalars.map {
        CharacterSet.alphanumerics.contains($0) || $0 == "-" ? Character($0) : "_"
      })
    return (configuration.recordsDirectory as NSString).appendingPathComponent(
      ".recording-\(safe.prefix(64)).webm")
  }

  static func codecNames(_ codecs: [UInt8: RelayCodec]) -> LocalServerMediaCodecs {
    let values = codecs.values
    return LocalServerMediaCodecs(
      audioCodec: values.contains { $0.kind == .audio } ? "opus" : nil,
      videoCodec: values.contains { $0.kind == .video } ? "VP8" : nil)
  }

  /// FAILED `info` for an error (wcs-protocol.md §5.2 wording where there is one).
  static func reason(_ error: any Error) -> String {
    if let error = error as? RelayAnswerError { return error.info }
    if error is SDPParseError { return WCSStreamInfo.malformedOffer }
    if let error = error as? PeerConnectionError {
      switch error {
      case .unanswerableOffer(let reason): return RelayAnswerError.offer(reason).info
      case .iceFailed: return "Failed by ICE timeout"
      case .dtls: return "Failed by DTLS error"
      // The client's own SDP is at fault: say so rather than "internal error".
      case .sdp, .incompatibleSetup: return WCSStreamInfo.malformedOffer
      default: return WCSStreamInfo.failedByInternalError
      }
    }
    // The detail (internal type names, errno) is logged by the caller, not shown to clients.
    return WCSStreamInfo.failedByInternalError
  }
}
