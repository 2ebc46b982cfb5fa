import Foundation
import Synchronization
import WCSMedia

/// The media side of `wcs-local-server` (wcs-protocol.md §9.3): per stream an ICE-lite
/// answerer `PeerConnection` (candidates inline with `a=end-of-candidates`, DTLS role chosen by
/// the answerer, `active` to an `actpass` offer), and an SFU relay from each publisher to its
/// players — SSRC, payload type, sequence number and timestamp rewritten per player; RTCP
/// terminated per leg (our own RR to publishers, SR to players); PLI/FIR from players forwarded
/// as PLI to the publisher at most once per `keyFrameRequestIntervalMillis` (a request inside
/// the interval is deferred to its end, not dropped); recording to WebM.
///
/// Loss is repaired on both legs (RFC 4585 §6.2.1): the relay NACKs the publisher for what it
/// lost (`NACKGenerator`, on a timer) and forwards the retransmissions to the players and the
/// recording; it answers each player's NACKs from a per-publisher cache of the last
/// `packetCacheSize` packets, by RTX (RFC 4588, its own SSRC and numbering per player) where
/// the player offered it and by plain resend otherwise, within a per-player rate limit. RTX
/// from the publisher is unwrapped. Per-leg counters (`RelayLegStatistics`) are logged at each
/// stream's end and every `statisticsInterval`.
///
/// Threading (`@unchecked Sendable`): the relay state (`publishers`, `players`, the timers,
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
    /// Retransmissions sent to one player per second, at most (a NACK storm costs no more).
    public var retransmissionsPerSecondPerPlayer = 500
    /// Retransmissions one player may get at once before the per-second rate applies.
    public var retransmissionBurstPerPlayer = 250
    /// When and how often the relay NACKs a publisher for the packets it lost.
    public var nack = NACKGenerator.Configuration()
    /// Interval of the per-leg statistics log lines (`--stats`); nil logs them only at each
    /// stream's end.
    public var statisticsInterval: Duration?
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
  private var statisticsTimer: EventLoopTimer?
  private var random = SystemRandomNumberGenerator()
  private var isShutDown = false

  /// Media SSRCs one publisher may send (audio and video, and room for a restarted encoder).
  static let maxSourcesPerPublisher = 4

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

  /// The counters of every leg now, by `mediaSessionId`. Callable from any thread.
  public func legStatistics() -> [String: RelayLegStatistics] {
    loop.submit {
      var result: [String: RelayLegStatistics] = [:]
      for (id, publisher) in publishers { result[id] = publisher.statistics }
      for (id, player) in players { result[id] = playerStatistics(player) }
      return result
    }
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
      for publisher in publishers.values { cancelTimers(publisher) }
      publishers = [:]
      players = [:]
      if let reportTimer { loop.cancel(reportTimer) }
      reportTimer = nil
      if let statisticsTimer { loop.cancel(statisticsTimer) }
      statisticsTimer = nil
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
      if let publisher = publishers[id] { _ = requestKeyFrame(publisher) }
    }
    scheduleReports()
    scheduleStatistics()
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
      let offer = try SDPParser.parse(request.offerSDP).description
      let answered = try SDPParser.parse(answer).description
      // What the answer kept: RTX the publisher may send us, the kinds we may NACK.
      publisher.retransmissionPayloadTypes = RelayCodecs.retransmissionPayloadTypes(in: answered)
      publisher.retransmissionSSRCs = RelayCodecs.retransmissionSSRCs(in: offer)
      publisher.nackKinds = RelayCodecs.kindsWithNACK(in: answered)
      // The signalled video SSRC (RFC 5576), so a PLI can go out before the first packet
      // (a player connecting first); the first packet's SSRC replaces it.
      publisher.videoSSRC = offer.media.first { $0.media == "video" && !$0.isRejected }?
        .ssrcAttributes.map(\.ssrc).first { publisher.retransmissionSSRCs[$0] == nil }
      publisher.statistics.retransmissionNegotiated = !publisher.retransmissionPayloadTypes
        .isEmpty
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
      let rtxSSRCs: [RelayCodec.Kind: UInt32] = [.audio: newSSRC(), .video: newSSRC()]
      let answer = try RelayAnswer.restrict(
        try connection.createAnswer(),
        ssrcs: ["audio": ssrcs[.audio] ?? 1, "video": ssrcs[.video] ?? 2],
        retransmissionSSRCs: ["audio": rtxSSRCs[.audio] ?? 3, "video": rtxSSRCs[.video] ?? 4],
        cname: "wcs-\(request.streamName)")
      let player = RelayPlayer(
        mediaSessionId: id, sourceMediaSessionId: request.sourceMediaSessionId,
        streamName: request.streamName, peerConnection: connection, codecs: codecs,
        ssrcs: ssrcs, retransmissionSSRCs: rtxSSRCs,
        retransmissionSequenceNumbers: [
          .audio: UInt16.random(in: 0...0x7FFF, using: &random),
          .video: UInt16.random(in: 0...0x7FFF, using: &random),
        ],
        resends: RelayResendLimiter(
          perSecond: configuration.retransmissionsPerSecondPerPlayer,
          burst: configuration.retransmissionBurstPerPlayer,
          capacity: configuration.packetCacheSize))
      let answered = try SDPParser.parse(answer).description
      for (rtx, media) in RelayCodecs.retransmissionPayloadTypes(in: answered) {
        player.retransmissionPayloadTypes[media] = rtx
      }
      player.statistics.retransmissionNegotiated = !player.retransmissionPayloadTypes.isEmpty
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
      cancelTimers(publisher)
      configuration.log("media \(id): \(publisher.statistics.summary)")
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
      configuration.log("media \(id): \(playerStatistics(player).summary)")
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
    guard let parsed = try? RTPHeader.parse(raw) else { return }
    var header = parsed.header
    var bytes = [UInt8](raw)
    var payloadRange = parsed.payloadRange
    var retransmitted = false
    if let repaired = publisher.retransmissionPayloadTypes[header.payloadType] {
      // RTX (RFC 4588 §4): restore the original packet; an RTX packet without payload is
      // padding (bandwidth probing) and carries nothing to relay.
      guard let codec = publisher.codecs[repaired],
        let mediaSSRC = publisher.mediaSSRC(repairedBy: header.ssrc, kind: codec.kind),
        let packet = try? RTPPacket.parse(raw),
        let restored = try? RTXPacketFormat.unwrap(
          packet, ssrc: mediaSSRC, payloadType: repaired),
        let restoredBytes = try? restored.serialized(),
        let reparsed = restoredBytes.withUnsafeBytes({ try? RTPHeader.parse($0) })
      else { return }
      header = reparsed.header
      bytes = restoredBytes
      payloadRange = reparsed.payloadRange
      retransmitted = true
    }
    guard let codec = publisher.codecs[header.payloadType] else { return }
    publisher.statistics.packetsIn += 1
    let now = nowMillis()
    let ssrc = header.ssrc
    if publisher.caches[ssrc] == nil {
      // Each source costs a cache of `packetCacheSize` packets: a publisher inventing SSRCs
      // gets no more than a few.
      guard publisher.caches.count < Self.maxSourcesPerPublisher else {
        publisher.statistics.packetsRefused += 1
        return
      }
      publisher.caches[ssrc] = RelayPacketCache(capacity: configuration.packetCacheSize)
      publisher.reception[ssrc] = RelayReceptionStatistics(ssrc: ssrc, clockRate: codec.clockRate)
    }
    // A second copy (a resend crossing our repeated NACK, or a replay the SRTP window let
    // through after a wrap) is dropped: players and the recording have the first.
    if publisher.caches[ssrc]?.packet(header.sequenceNumber) != nil {
      publisher.statistics.duplicatesDropped += 1
      return
    }
    publisher.caches[ssrc]?.store(bytes, sequenceNumber: header.sequenceNumber)
    publisher.reception[ssrc]?.record(
      sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, now: now,
      retransmitted: retransmitted)
    switch codec.kind {
    case .video: publisher.videoSSRC = ssrc
    case .audio: publisher.audioSSRC = ssrc
    }
    if publisher.nackKinds.contains(codec.kind) {
      trackLoss(publisher, ssrc: ssrc, sequenceNumber: header.sequenceNumber, now: now)
    } else if retransmitted {
      publisher.statistics.retransmissions += 1
    }
    guard payloadRange.lowerBound <= payloadRange.upperBound, payloadRange.upperBound <= bytes.count
    else { return }
    let startsKeyFrame =
      codec.kind == .video && Self.startsVP8KeyFrame(bytes[payloadRange])
    if startsKeyFrame {
      publisher.statistics.keyFrames += 1
      // The last PLI is answered: a deferred one may go out sooner.
      if let deadline = publisher.keyFrameRequests.keyFrameArrived() {
        if let timer = publisher.keyFrameTimer { loop.cancel(timer) }
        scheduleDeferredKeyFrame(publisher, at: deadline)
      }
    }
    if let recording = publisher.recording {
      let payload = Array(bytes[payloadRange])
      switch codec.kind {
      case .video:
        // A frame the file lost for good: its next key frame, asked for like a player's.
        if recording.addVideo(
          sequenceNumber: header.sequenceNumber, timestamp: header.timestamp,
          marker: header.marker, payload: payload)
        {
          _ = requestKeyFrame(publisher)
        }
      case .audio: recording.addAudio(payload, timestamp: header.timestamp)
      }
    }
    for playerId in publisher.playerIds {
      guard let player = players[playerId], player.connected else { continue }
      if relay(bytes, ssrc: ssrc, codec: codec, from: publisher, to: player, now: now),
        startsKeyFrame
      {
        player.statistics.keyFrames += 1
      }
    }
  }

  /// Whether a VP8 RTP payload (RFC 7741 §4.2 descriptor first) starts a key frame: the first
  /// packet of partition 0 whose VP8 frame tag has the P bit clear (RFC 6386 §9.1).
  static func startsVP8KeyFrame(_ payload: ArraySlice<UInt8>) -> Bool {
    guard let (descriptor, length) = try? VP8PayloadDescriptor.parse(Array(payload.prefix(8))),
      descriptor.startsFrame, payload.count > length
    else { return false }
    return payload[payload.startIndex + length] & 0x01 == 0
  }

  /// Feeds one packet of a NACKed kind to the SSRC's loss tracker and arms the NACK timer when
  /// a new gap appeared.
  private func trackLoss(
    _ publisher: RelayPublisher, ssrc: UInt32, sequenceNumber: UInt16, now: Int64
  ) {
    var tracker =
      publisher.losses.removeValue(forKey: ssrc)
      ?? RelayLossTracker(generator: NACKGenerator(configuration: configuration.nack))
    let highest = tracker.sequence.highest
    let extended = tracker.sequence.extend(sequenceNumber)
    let recoveredBefore = tracker.generator.recoveredAfterRequest
    tracker.generator.packetArrived(Int64(extended), now: Double(now) / 1000)
    // A NACKed packet arriving: its resend (a merely reordered one was never asked for).
    if tracker.generator.recoveredAfterRequest > recoveredBefore {
      publisher.statistics.retransmissions += 1
    }
    let gap = highest.map { Int64(extended) - Int64($0) - 1 } ?? 0
    if gap > 0 { publisher.statistics.packetsLost += Int(gap) }
    let wantsKeyFrame = tracker.generator.takeKeyFrameRequest()
    let deadline = gap > 0 ? tracker.generator.nextDeadline(roundTripTime: nil) : nil
    publisher.losses[ssrc] = tracker
    if wantsKeyFrame { _ = requestKeyFrame(publisher) }
    if let deadline { scheduleNACKs(publisher, at: Int64((deadline * 1000).rounded(.up))) }
  }

  private func scheduleNACKs(_ publisher: RelayPublisher, at deadline: Int64) {
    if let current = publisher.nackTimerDeadline, current <= deadline { return }
    if let timer = publisher.nackTimer { loop.cancel(timer) }
    publisher.nackTimerDeadline = deadline
    let delay = max(0, deadline - nowMillis())
    publisher.nackTimer = loop.schedule(after: .milliseconds(delay)) {
      [weak self, weak publisher] in
      guard let self, let publisher else { return }
      publisher.nackTimer = nil
      publisher.nackTimerDeadline = nil
      self.sendNACKs(publisher)
    }
  }

  /// Sends the NACKs due on the publisher's leg, one generic NACK per SSRC (RFC 4585 §6.2.1),
  /// and arms the timer for the next.
  private func sendNACKs(_ publisher: RelayPublisher) {
    guard publishers[publisher.mediaSessionId] === publisher else { return }
    let now = nowMillis()
    let seconds = Double(now) / 1000
    var feedback: [RTCPPacket] = []
    var next: Double?
    for ssrc in publisher.losses.keys.sorted() {
      guard var tracker = publisher.losses[ssrc] else { continue }
      let givenUpBefore = tracker.generator.givenUp
      let due = tracker.generator.due(now: seconds, roundTripTime: nil)
      publisher.statistics.packetsGivenUp += tracker.generator.givenUp - givenUpBefore
      if let deadline = tracker.generator.nextDeadline(roundTripTime: nil) {
        next = min(next ?? deadline, deadline)
      }
      publisher.losses[ssrc] = tracker
      guard !due.isEmpty else { continue }
      publisher.statistics.nackedPackets += due.count
      feedback.append(
        .genericNACK(
          RTCPGenericNACK(
            senderSSRC: publisher.rtcpSSRC, mediaSSRC: ssrc,
            lost: due.map { UInt16(truncatingIfNeeded: $0) })))
    }
    if !feedback.isEmpty {
      sendRTCP(
        [.receiverReport(RTCPReceiverReport(ssrc: publisher.rtcpSSRC))] + feedback,
        on: publisher.peerConnection, failures: &publisher.statistics.sendFailures)
    }
    if let next { scheduleNACKs(publisher, at: Int64((next * 1000).rounded(.up))) }
  }

  /// Sends `bytes` to `player`, rewritten; true when it went out.
  @discardableResult
  private func relay(
    _ bytes: [UInt8], ssrc: UInt32, codec: RelayCodec, from publisher: RelayPublisher,
    to player: RelayPlayer, now: Int64
  ) -> Bool {
    if player.rewriters[ssrc] == nil {
      guard let outgoing = player.ssrcs[codec.kind] else { return false }
      let sameKind = publisher.codecs.filter { $0.value.kind == codec.kind }
      let map = RelayCodecs.payloadTypeMap(publisher: sameKind, player: player.codecs)
      guard !map.isEmpty else { return false }
      player.rewriters[ssrc] = RelayRTPRewriter(
        ssrc: outgoing, payloadTypes: map,
        sequenceOffset: UInt16.random(in: 0...UInt16.max, using: &random),
        timestampOffset: UInt32.random(in: 0...UInt32.max, using: &random))
      player.clockRates[ssrc] = codec.clockRate
    }
    guard let out = player.rewriters[ssrc]?.rewrite(bytes, now: now) else { return false }
    return sendRTP(out, to: player)
  }

  private func sendRTP(_ bytes: [UInt8], to player: RelayPlayer) -> Bool {
    do {
      try player.peerConnection.sendRTP(bytes)
      player.statistics.packetsOut += 1
      return true
    } catch {
      player.statistics.sendFailures += 1
      return false
    }
  }

  private func sendRTCP(
    _ packets: [RTCPPacket], on connection: PeerConnection, failures: inout Int
  ) {
    do {
      try connection.sendRTCP(try RTCPPacket.serializeCompound(packets))
    } catch {
      failures += 1
    }
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
      case .pictureLossIndication, .fullIntraRequest:
        player.statistics.keyFrameRequests += 1
        switch requestKeyFrame(publisher) {
        case .forward: player.statistics.keyFrameRequestsForwarded += 1
        case .deferred: player.statistics.keyFrameRequestsDeferred += 1
        case nil: break
        }
      case .genericNACK(let nack):
        answer(nack, from: player, publisher: publisher, now: now)
      case .receiverReport(let report):
        for block in report.reports where player.ssrcs.values.contains(block.ssrc) {
          // Negative when duplicates outnumber losses (RFC 3550 §6.4.1): nothing was lost.
          player.lostBySSRC[block.ssrc] = max(0, Int(block.packetsLost))
        }
      default: break
      }
    }
  }

  /// Answers a player's generic NACK from the publisher's cache: RTX when the player
  /// negotiated it for the codec, else the packet as first sent (same sequence number: SRTP
  /// `allow_repeat_tx`). Each sequence number is resent at most once per 0.8 × the leg's RTT,
  /// and within the player's rate limit.
  private func answer(
    _ nack: RTCPGenericNACK, from player: RelayPlayer, publisher: RelayPublisher, now: Int64
  ) {
    guard
      let (sourceSSRC, rewriter) = player.rewriters.first(where: {
        $0.value.ssrc == nack.mediaSSRC
      })
    else { return }
    let rtt = player.peerConnection.stats.roundTripTime.map { Self.millis($0) } ?? 50
    let minimumInterval = max(5, rtt * 8 / 10)
    let kind = player.ssrcs.first { $0.value == nack.mediaSSRC }?.key
    for lost in nack.lostSequenceNumbers {
      player.statistics.nackedPackets += 1
      guard let cached = publisher.caches[sourceSSRC]?.packet(rewriter.sourceSequenceNumber(lost))
      else {
        player.statistics.nacksUnanswerable += 1
        continue
      }
      switch player.resends.admit(lost, now: now, minimumIntervalMillis: minimumInterval) {
      case .tooSoon:
        player.statistics.nacksUnanswerable += 1
        continue
      case .rateLimited:
        player.statistics.nacksRateLimited += 1
        continue
      case .send: break
      }
      guard var out = player.rewriters[sourceSSRC]?.rewrite(cached, now: now, countsAsSent: false)
      else { continue }
      if let kind, let rtxSSRC = player.retransmissionSSRCs[kind],
        let rtxPayloadType = player.retransmissionPayloadTypes[out[1] & 0x7F],
        let original = try? RTPPacket.parse(out),
        let sequenceNumber = player.retransmissionSequenceNumbers[kind]
      {
        let wrapped = RTXPacketFormat.wrap(
          original, ssrc: rtxSSRC, payloadType: rtxPayloadType, sequenceNumber: sequenceNumber)
        guard let bytes = try? wrapped.serialized() else { continue }
        player.retransmissionSequenceNumbers[kind] = sequenceNumber &+ 1
        out = bytes
      }
      if sendRTP(out, to: player) {
        player.statistics.nacksAnswered += 1
        player.statistics.retransmissions += 1
      }
    }
  }

  /// Asks the publisher for a key frame (PLI, RFC 4585 §6.3.1) now or, inside the limit's
  /// interval, when it ends; nil when there is no video to ask about yet (its first frame is a
  /// key frame anyway).
  private func requestKeyFrame(_ publisher: RelayPublisher) -> KeyFrameRequestLimiter.Decision? {
    guard publisher.connected, publisher.videoSSRC != nil else { return nil }
    let now = nowMillis()
    let decision = publisher.keyFrameRequests.request(now: now)
    switch decision {
    case .forward:
      sendPictureLossIndication(publisher)
    case .deferred(let until):
      if publisher.keyFrameTimer == nil { scheduleDeferredKeyFrame(publisher, at: until) }
    }
    return decision
  }

  private func scheduleDeferredKeyFrame(_ publisher: RelayPublisher, at deadline: Int64) {
    publisher.keyFrameTimer = loop.schedule(after: .milliseconds(max(0, deadline - nowMillis()))) {
      [weak self, weak publisher] in
      guard let self, let publisher, self.publishers[publisher.mediaSessionId] === publisher
      else { return }
      publisher.keyFrameTimer = nil
      if publisher.keyFrameRequests.takeDeferred(now: self.nowMillis()) {
        self.sendPictureLossIndication(publisher)
      } else if let due = publisher.keyFrameRequests.deferredDeadline {
        self.scheduleDeferredKeyFrame(publisher, at: max(due, self.nowMillis() + 1))
      }
    }
  }

  private func sendPictureLossIndication(_ publisher: RelayPublisher) {
    guard let video = publisher.videoSSRC else { return }
    publisher.statistics.keyFrameRequests += 1
    sendRTCP(
      [
        .receiverReport(RTCPReceiverReport(ssrc: publisher.rtcpSSRC)),
        .pictureLossIndication(
          RTCPPictureLossIndication(senderSSRC: publisher.rtcpSSRC, mediaSSRC: video)),
      ], on: publisher.peerConnection, failures: &publisher.statistics.sendFailures)
  }

  private func cancelTimers(_ publisher: RelayPublisher) {
    if let timer = publisher.nackTimer { loop.cancel(timer) }
    if let timer = publisher.keyFrameTimer { loop.cancel(timer) }
    publisher.nackTimer = nil
    publisher.nackTimerDeadline = nil
    publisher.keyFrameTimer = nil
  }

  /// The player's counters with the loss its newest receiver reports gave.
  private func playerStatistics(_ player: RelayPlayer) -> RelayLegStatistics {
    var statistics = player.statistics
    statistics.packetsLost = player.lostBySSRC.values.reduce(0, +)
    return statistics
  }

  static func millis(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1000 + duration.components.attoseconds
      / 1_000_000_000_000_000
  }

  // MARK: - Statistics

  private func scheduleStatistics() {
    guard let interval = configuration.statisticsInterval, statisticsTimer == nil, !isShutDown,
      !(publishers.isEmpty && players.isEmpty)
    else { return }
    statisticsTimer = loop.schedule(after: interval) { [weak self] in
      guard let self else { return }
      self.statisticsTimer = nil
      for id in self.publishers.keys.sorted() {
        if let publisher = self.publishers[id] {
          self.configuration.log("media \(id): \(publisher.statistics.summary)")
        }
      }
      for id in self.players.keys.sorted() {
        if let player = self.players[id] {
          self.configuration.log("media \(id): \(self.playerStatistics(player).summary)")
        }
      }
      self.scheduleStatistics()
    }
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
      sendRTCP(
        [report], on: publisher.peerConnection, failures: &publisher.statistics.sendFailures)
    }
    for player in players.values where player.connected {
      for (source, rewriter) in player.rewriters {
        guard let last = rewriter.lastTimestamp else { continue }
        let clockRate = Int64(player.clockRates[source] ?? 90_000)
        let elapsed = UInt32(truncatingIfNeeded: (now - rewriter.lastSentAt) * clockRate / 1000)
        let report = RTCPSenderReport(
          ssrc: rewriter.ssrc, ntpTimestamp: ntp, rtpTimestamp: last &+ elapsed,
          packetCount: rewriter.packetCount, octetCount: rewriter.octetCount)
        sendRTCP(
          [.senderReport(report)], on: player.peerConnection,
          failures: &player.statistics.sendFailures)
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
