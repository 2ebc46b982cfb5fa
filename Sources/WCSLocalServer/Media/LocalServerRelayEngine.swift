import Foundation
import Synchronization
import WCSEventLoop
import WCSPeerConnection
import WCSProtocols

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
/// Threading: the relay state (`publishers`, `players`, `pulls`, the timers, `random`) is
/// touched only on `loop`, where `perform` sends every request and where the connections call
/// back, and is checked to be (a `LoopBoundBox`: any use off the loop traps); `outbox` is a
/// `Mutex`.
///
/// This file holds the connections' lifecycle; the relay itself is in `+Forwarding`, `+Repair`
/// (NACK and RTX), `+KeyFrames` (PLI) and `+Reports` (RTCP reports, statistics).
public final class LocalServerRelayEngine: LocalServerMediaEngineHooks, Sendable {
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
    /// Whether publishers keep their video since the last key frame for `snapshot` requests
    /// (wcs-protocol.md §3): a copy of each video payload into the frame assembler, decoded
    /// only when a snapshot is asked for. Off, every `snapshot` is answered `snapshotFailed`
    /// (`snapshotsOffReason`) and the relay path does no snapshot work. Default: on.
    public var snapshots = true
    /// Bounds of `rtmpUrl` re-publications (queue, timeouts, retries).
    var rtmpPush = RTMPPushLimits()
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
  let configuration: Configuration
  private let outbox = Mutex(Outbox())

  /// The relay's state, on the loop only.
  private struct RelayState {
    var publishers: [String: RelayPublisher] = [:]
    var players: [String: RelayPlayer] = [:]
    var pulls: [String: RelayPull] = [:]
    var reportTimer: EventLoopTimer?
    var statisticsTimer: EventLoopTimer?
    var random = SystemRandomNumberGenerator()
    var isShutDown = false
  }
  private let state: LoopBoundBox<RelayState>

  // The state's parts, each checked to be used on the loop.
  var publishers: [String: RelayPublisher] {
    get { state.value.publishers }
    _modify { yield &state.value.publishers }
  }
  var players: [String: RelayPlayer] {
    get { state.value.players }
    _modify { yield &state.value.players }
  }
  /// RTSP/RTMP sources being pulled, by source id (`PullSourceName`).
  var pulls: [String: RelayPull] {
    get { state.value.pulls }
    _modify { yield &state.value.pulls }
  }
  var reportTimer: EventLoopTimer? {
    get { state.value.reportTimer }
    _modify { yield &state.value.reportTimer }
  }
  var statisticsTimer: EventLoopTimer? {
    get { state.value.statisticsTimer }
    _modify { yield &state.value.statisticsTimer }
  }
  var random: SystemRandomNumberGenerator {
    get { state.value.random }
    _modify { yield &state.value.random }
  }
  var isShutDown: Bool {
    get { state.value.isShutDown }
    _modify { yield &state.value.isShutDown }
  }

  /// Media SSRCs one publisher may send (audio and video, and room for a restarted encoder).
  package static let maxSourcesPerPublisher = 4

  /// Creates an engine with its own event loop.
  public init(configuration: Configuration) {
    var configuration = configuration
    configuration.peerConnection.iceLite = true
    self.configuration = configuration
    loop = EventLoop(label: "wcs-local-server.media")
    state = LoopBoundBox(RelayState(), loop: loop)
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
        publisher.rtmpPush?.stop()
      }
      for player in players.values { player.peerConnection.close() }
      for pull in pulls.values { pull.reader.stop() }
      pulls = [:]
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

  func emit(_ event: LocalServerMediaEvent) {
    let wakeUp = outbox.withLock { box in
      box.events.append(event)
      return box.wakeUp
    }
    wakeUp?()
  }

  /// How long from now until `deadline` (zero when it has passed), for a loop timer.
  func delay(until deadline: MediaInstant) -> Duration {
    max(.zero, deadline - loop.mediaNow()).duration
  }

  func handle(_ request: LocalServerMediaRequest) {
    guard !isShutDown else { return }
    switch request {
    case .createPublisher(let publisher): createPublisher(publisher)
    case .createPlayer(let player): createPlayer(player)
    case .releaseMedia(let id, let recordName): release(id, recordName: recordName)
    case .requestKeyFrame(let id):
      if let publisher = publishers[id] { _ = requestKeyFrame(publisher) }
    case .snapshot(let source, let requestId): snapshot(of: source, requestId: requestId)
    }
    scheduleReports()
    scheduleStatistics()
  }

  func newSSRC() -> UInt32 { UInt32.random(in: 1...UInt32.max, using: &random) }

  func createPublisher(_ request: LocalServerPublisherRequest) {
    let id = request.mediaSessionId
    let connection = PeerConnection(configuration: configuration.peerConnection, loop: loop)
    do {
      _ = try RelayAnswer.offeredCodecs(request.offerSDP)
      try connection.setRemoteDescription(offer: request.offerSDP)
      let answer = try RelayAnswer.keepingFirstVideoCodec(
        RelayAnswer.restrict(try connection.createAnswer()))
      // What the publisher may send: the codecs its answer kept.
      let codecs = RelayCodecs.payloadTypes(in: try SDPParser.parse(answer).description)
      let publisher = RelayPublisher(
        mediaSessionId: id, streamName: request.streamName, peerConnection: connection,
        codecs: codecs, rtcpSSRC: newSSRC(),
        keyFrameRequests: KeyFrameRequestLimiter(
          interval: .milliseconds(Int(configuration.keyFrameRequestIntervalMillis))))
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
      if Self.codecNames(codecs).videoCodec == "H264" { publisher.snapshots.codec = .h264 }
      if request.record {
        let kinds = Set(codecs.values.map(\.kind))
        // The core names the record by the same rule (`recordExtensionH264`).
        let format: RelayRecording.Format =
          Self.codecNames(codecs).videoCodec == "H264" ? .mp4 : .webm
        publisher.recording = RelayRecording(
          temporaryPath: temporaryRecordingPath(id, fileExtension: format.fileExtension),
          format: format, hasVideo: kinds.contains(.video) && request.hasVideo,
          hasAudio: kinds.contains(.audio) && request.hasAudio)
      }
      publishers[id] = publisher
      if let url = request.rtmpUrl {
        startRTMPPush(publisher, url: url, limits: configuration.rtmpPush)
      }
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

  func createPlayer(_ request: LocalServerPlayerRequest) {
    if createPulledPlayer(request) { return }
    let id = request.mediaSessionId
    let connection = PeerConnection(configuration: configuration.peerConnection, loop: loop)
    do {
      let codecs = try RelayAnswer.offeredCodecs(request.offerSDP)
      if let publisher = publishers[request.sourceMediaSessionId],
        !RelayCodecs.playerTakesVideo(publisher: publisher.codecs, player: codecs)
      {
        throw RelayAnswerError.transcodingRequired
      }
      try connection.setRemoteDescription(offer: request.offerSDP)
      let ssrcs: [RelayCodec.Kind: UInt32] = [.audio: newSSRC(), .video: newSSRC()]
      let rtxSSRCs: [RelayCodec.Kind: UInt32] = [.audio: newSSRC(), .video: newSSRC()]
      let answer = try RelayAnswer.restrict(
        RelayAnswer.keepingVideoFormats(
          try connection.createAnswer(),
          for: publishers[request.sourceMediaSessionId]?.codecs ?? [:]),
        ssrcs: ["audio": ssrcs[.audio] ?? 1, "video": ssrcs[.video] ?? 2],
        retransmissionSSRCs: ["audio": rtxSSRCs[.audio] ?? 3, "video": rtxSSRCs[.video] ?? 4],
        cname: Self.cname(streamName: request.streamName))
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

  func release(_ id: String, recordName: String?) {
    if let publisher = publishers.removeValue(forKey: id) {
      cancelTimers(publisher)
      configuration.log("media \(id): \(publisher.statistics.summary)")
      publisher.peerConnection.close()
      publisher.rtmpPush?.stop()
      if let recording = publisher.recording {
        if let recordName,
          let stored = recording.finish(
            directory: configuration.recordsDirectory, name: recordName)
        {
          if stored != recordName {
            configuration.log("media \(id): \(recordName) exists, recorded as \(stored)")
          }
          emit(.recordingFinished(mediaSessionId: id, recordName: stored))
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
      releasePulledPlayer(id, source: player.sourceMediaSessionId)
    } else if !pulls.isEmpty {
      releasePulledPlayer(id, source: nil)
    }
  }

  func connectionEvent(_ id: String, _ event: PeerConnectionEvent) {
    guard case .stateChanged(let state) = event else { return }
    switch state {
    case .connected:
      if let publisher = publishers[id], !publisher.connected {
        publisher.connected = true
        emit(.connected(mediaSessionId: id, codecs: Self.codecNames(publisher.codecs)))
      } else if let player = players[id], !player.connected {
        player.connected = true
        emit(
          .connected(
            mediaSessionId: id,
            codecs: Self.codecNames(
              publishers[player.sourceMediaSessionId]?.codecs ?? player.codecs)))
      }
    case .failed(let error):
      guard publishers[id] != nil || players[id] != nil else { return }
      configuration.log("media \(id): connection failed: \(error)")
      emit(.failed(mediaSessionId: id, reason: Self.reason(error)))
    default: break
    }
  }

  // MARK: - Names

  /// A hidden (never served over HTTP) work file for the recording of `id`: the readable part
  /// of the id maps `a.b` and `a_b` alike, so a random part keeps two live recordings apart.
  func temporaryRecordingPath(_ id: String, fileExtension: String = "webm") -> String {
    let safe = String(
      id.unicodeScalars.map {
        CharacterSet.alphanumerics.contains($0) || $0 == "-" ? Character($0) : "_"
      })
    return (configuration.recordsDirectory as NSString).appendingPathComponent(
      ".recording-\(safe.prefix(64))-\(UUID().uuidString.lowercased()).\(fileExtension)")
  }

  static func codecNames(_ codecs: [UInt8: RelayCodec]) -> LocalServerMediaCodecs {
    let values = codecs.values
    return LocalServerMediaCodecs(
      audioCodec: values.contains { $0.kind == .audio } ? "opus" : nil,
      videoCodec: values.first { $0.kind == .video }.map {
        $0.name.uppercased() == "H264" ? "H264" : "VP8"
      })
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
