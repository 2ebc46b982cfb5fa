import Foundation
import Synchronization

/// One publish or play connection of the native backend: a `PeerConnection` on the event loop
/// (ICE, DTLS-SRTP, RTCP mux, BUNDLE), RTP send streams fed by the encode tracks (publish) or
/// receive streams feeding the decode tracks (play).
///
/// Publish: capture source → `VideoSendTrack`/`AudioSendTrack` (own serial queues) → RTP send
/// stream (history, RTX, SR) → SRTP → UDP. Incoming RTCP: NACK → retransmission, PLI/FIR → key
/// frame, REMB → bandwidth estimate → encoder bitrate within the constraints' bounds.
/// Play: SRTP → RTP receive stream per SSRC (learnt from the negotiated payload types; jitter
/// buffer, NACK, PLI, RR) → VP8/Opus decode queues → the request's renderer / the playout sink.
///
/// Every method may be called from any thread; completions and `onStateChange` run on the loop.
public final class NativeMediaConnection: MediaConnection, @unchecked Sendable {
  // @unchecked Sendable: everything under "loop state" is used on `loop` only (every entry point
  // hops there with `loop.execute`/`loop.submit`); `trackEnabled` and `playoutSink` sit behind
  // mutexes; the rest is immutable.

  /// Counters beyond `MediaConnectionStats`: codec and RTCP activity, for tests and monitoring.
  public struct DetailedStatistics: Sendable, Equatable {
    /// The transport summary.
    public var summary = MediaConnectionStats()
    /// Pictures the VP8 encoder produced.
    public var framesEncoded = 0
    /// Key frames among them.
    public var keyFramesEncoded = 0
    /// Opus frames encoded.
    public var audioFramesEncoded = 0
    /// Pictures decoded and rendered.
    public var framesDecoded = 0
    /// Opus frames decoded (FEC and concealment not included).
    public var audioFramesDecoded = 0
    /// Packets retransmitted after NACK.
    public var retransmissions = 0
    /// Key frame requests (PLI/FIR) served.
    public var keyFrameRequests = 0
    /// NACK packets sent (play).
    public var nacksSent = 0
    /// PLI packets sent (play).
    public var plisSent = 0
    /// Sender reports sent (publish).
    public var senderReports = 0
    /// Receiver reports sent (play).
    public var receiverReports = 0
    /// Round-trip time from RTCP report blocks, seconds; `nil` until measured.
    public var roundTripTime: Double?
    /// Current VP8 encoder target, bits per second (publish).
    public var videoEncoderBitrate = 0
    /// RTP packets dropped because they were malformed or of an unknown payload type.
    public var malformedPackets = 0
  }

  struct ReceiveEntry {
    var stream: RTPReceiveStream
    let isVideo: Bool
    var lastPacketAt: ContinuousClock.Instant
  }

  /// A second source of the same kind replaces the current one only after the current one was
  /// silent this long (a sender restart), so stray packets cannot hijack the decoder.
  static let sourceTakeoverSilence: Duration = .seconds(2)

  /// The request this connection serves.
  public let request: MediaConnectionRequest
  /// The loop the transport runs on.
  public let loop: EventLoop
  let parameters: NativeEncodingParameters
  private let configuration: NativeMediaBackend.Configuration
  private let onStateChange: @Sendable (MediaConnectionState) -> Void
  private weak var backend: NativeMediaBackend?
  private let trackEnabled = Mutex<[CaptureDevice.Kind: Bool]>([:])
  private let playoutSinkOverride = Mutex<(any PlayoutAudioSink)?>(nil)
  private let cname = PeerConnection.randomToken(16)
  private let localSSRC: UInt32
  private let videoSSRC: UInt32
  private let rtxSSRC: UInt32
  private let audioSSRC: UInt32

  // MARK: loop state
  private var peerConnection: PeerConnection?
  private var state: MediaConnectionState = .new
  private var closed = false
  private var videoTrack: VideoSendTrack?
  private var audioTrack: AudioSendTrack?
  private(set) var videoSource: (any NativeCaptureSource)?
  private(set) var videoDeviceID: String?
  private var audioSource: (any NativeCaptureSource)?
  private var videoSend: RTPSendStream?
  private var audioSend: RTPSendStream?
  private var estimator: SendSideBandwidthEstimator?
  private var videoPayloadType: UInt8 = 96
  private var audioPayloadType: UInt8 = 111
  private var rtxPayloadType: UInt8?
  private var receivers: [UInt32: ReceiveEntry] = [:]
  private var rtxSource: (ssrc: UInt32, lastPacketAt: ContinuousClock.Instant)?
  private var videoReceiveTrack: VideoReceiveTrack?
  private var audioReceiveTrack: AudioReceiveTrack?
  private var pollTimer: EventLoopTimer?
  private var counters = MediaConnectionStats()
  private var extra = DetailedStatistics()
  private var rateWindow: (start: ContinuousClock.Instant, bytes: UInt64)?
  private let mediaClock = NativeMediaClock()

  init(
    request: MediaConnectionRequest, configuration: NativeMediaBackend.Configuration,
    backend: NativeMediaBackend, onStateChange: @escaping @Sendable (MediaConnectionState) -> Void
  ) {
    self.request = request
    self.configuration = configuration
    self.backend = backend
    self.onStateChange = onStateChange
    loop = configuration.loop
    parameters = NativeEncodingParameters(request: request)
    var generator = SystemRandomNumberGenerator()
    var ssrcs: Set<UInt32> = []
    while ssrcs.count < 4 { ssrcs.insert(UInt32.random(in: 1...UInt32.max, using: &generator)) }
    let values = Array(ssrcs)
    localSSRC = values[0]
    videoSSRC = values[1]
    rtxSSRC = values[2]
    audioSSRC = values[3]
  }

  deinit {
    let peerConnection = peerConnection
    let loop = loop
    if let peerConnection { loop.execute { peerConnection.close() } }
  }

  // MARK: - MediaConnection

  /// Opens the capture tracks (publish) and the PeerConnection, and returns the offer:
  /// send-only VP8 (+ RTX) and Opus for publish, receive-only for play, CRLF line ends.
  /// Completes with `.deviceUnavailable` when an encoder or source cannot be made,
  /// `.offerFailed` when sockets cannot be bound, `.closed` after `close()`.
  public func createOffer(
    completion: @escaping @Sendable (Result<String, MediaBackendError>) -> Void
  ) {
    loop.execute { completion(self.makeOffer()) }
  }

  /// Applies the server's answer after the constraints' munging (Opus options, x-google
  /// bitrate bounds, wcs-protocol.md §4.4), sets up the RTP streams on the negotiated payload
  /// types and starts ICE and DTLS. Completes with `.answerRejected` when it does not parse or
  /// fit the offer.
  public func setRemoteAnswer(
    _ sdp: String, completion: @escaping @Sendable (Result<Void, MediaBackendError>) -> Void
  ) {
    loop.execute { completion(self.applyAnswer(sdp)) }
  }

  /// Mutes (`false`: black pictures / silence are sent) or unmutes a published track.
  public func setTrackEnabled(_ kind: CaptureDevice.Kind, enabled: Bool) {
    trackEnabled.withLock { $0[kind] = enabled }
    loop.execute {
      switch kind {
      case .video: self.videoTrack?.isEnabled = enabled
      case .audio: self.audioTrack?.isEnabled = enabled
      }
    }
  }

  /// Moves the published video to the next video device (virtual camera, file sources, in
  /// `NativeMediaBackend.devices()` order); with an app capturer, restarts it with the next
  /// device. Throws `.deviceUnavailable` when there is no other video device or nothing is
  /// published, `.closed` after close.
  public func switchCamera() throws(MediaBackendError) {
    let result: Result<Void, MediaBackendError> = loop.submit { self.switchVideoSource() }
    try result.get()
  }

  /// Reads the transport counters.
  public func stats(completion: @escaping @Sendable (MediaConnectionStats) -> Void) {
    loop.execute { completion(self.collectStatistics().summary) }
  }

  /// Reads the detailed counters (codecs, RTCP, RTT).
  public func detailedStatistics(completion: @escaping @Sendable (DetailedStatistics) -> Void) {
    loop.execute { completion(self.collectStatistics()) }
  }

  /// Sends this connection's played audio to `sink` instead of the backend's playout sink.
  public func setPlayoutSink(_ sink: (any PlayoutAudioSink)?) {
    playoutSinkOverride.withLock { $0 = sink }
  }

  /// Stops capture and playout, closes the PeerConnection (DTLS close_notify, sockets) and
  /// reports `.closed`. Idempotent; returns when everything is released.
  public func close() {
    loop.submit { self.closeOnLoop() }
  }

  /// The PeerConnection's local addresses (empty before the offer and after close); for tests.
  public var localAddresses: [ICETransportAddress] {
    loop.submit { self.peerConnection?.localAddresses ?? [] }
  }

  /// Whether `close()` ran.
  public var isClosed: Bool { loop.submit { self.closed } }

  // MARK: - Offer

  private func makeOffer() -> Result<String, MediaBackendError> {
    loop.assertInEventLoop()
    guard !closed else { return .failure(.closed) }
    guard peerConnection == nil else { return .failure(.offerFailed("offer already created")) }
    if request.direction == .publish {
      do throws(MediaBackendError) {
        try openSendTracks()
      } catch {
        return .failure(error)
      }
    } else {
      do throws(MediaBackendError) {
        try openReceiveTracks()
      } catch {
        return .failure(error)
      }
    }
    let peerConnection = PeerConnection(
      configuration: configuration.peerConnection, loop: loop)
    peerConnection.onEvent = { [weak self] event in self?.handle(event) }
    peerConnection.onRTP = { [weak self] ssrc, packet in self?.receiveRTP(ssrc, packet) }
    peerConnection.onRTCP = { [weak self] packet in self?.receiveRTCP(packet) }
    self.peerConnection = peerConnection
    let publish = request.direction == .publish
    let audio = request.audio.map { _ in
      SDPOfferParameters.Audio(
        direction: publish ? .sendonly : .recvonly, ssrc: audioSSRC, trackId: "audio-\(cname)",
        opusPayloadType: Int(audioPayloadType), includeG711: false)
    }
    let video = request.video.map { _ in
      SDPOfferParameters.Video(
        direction: publish ? .sendonly : .recvonly, ssrc: videoSSRC, trackId: "video-\(cname)",
        vp8PayloadType: Int(videoPayloadType),
        rtx: SDPOfferParameters.RTX(payloadType: 97, ssrc: rtxSSRC))
    }
    do {
      let sdp = try peerConnection.createOffer(
        audio: audio, video: video, mode: publish ? .publish : .play, cname: cname)
      return .success(sdp)
    } catch {
      return .failure(.offerFailed("\(error)"))
    }
  }

  private func openSendTracks() throws(MediaBackendError) {
    let enabled = trackEnabled.withLock { $0 }
    if let video = request.video {
      let track: VideoSendTrack
      do {
        track = try VideoSendTrack(parameters: parameters, preview: request.renderer) {
          [weak self] payloads, _ in
          guard let self else { return }
          self.loop.execute { self.sendMedia(payloads, video: true) }
        }
      } catch {
        throw .deviceUnavailable("VP8 encoder: \(error)")
      }
      track.isEnabled = enabled[.video] ?? true
      videoTrack = track
      let deviceID = video.deviceID ?? NativeMediaDevices.virtualCameraID
      videoSource = try makeVideoSource(deviceID: deviceID, capturer: video.capturer, track: track)
      videoDeviceID = deviceID
    }
    if let audio = request.audio {
      let track: AudioSendTrack
      do {
        track = try AudioSendTrack(parameters: parameters) { [weak self] payload in
          guard let self else { return }
          self.loop.execute { self.sendMedia([payload], video: false) }
        }
      } catch {
        throw .deviceUnavailable("Opus encoder: \(error)")
      }
      track.isEnabled = enabled[.audio] ?? true
      audioTrack = track
      audioSource = try makeAudioSource(deviceID: audio.deviceID, track: track)
    }
  }

  private func makeVideoSource(
    deviceID: String, capturer: RTCVideoCapturer?, track: VideoSendTrack
  ) throws(MediaBackendError) -> any NativeCaptureSource {
    if let capturer {
      let device = backend?.devices().first { $0.kind == .video && $0.id == deviceID }
      return CapturerSource(capturer: capturer, track: track, clock: mediaClock, device: device)
    }
    if let path = NativeMediaDevices.filePath(fromID: deviceID) {
      return try FileCaptureSource(
        path: path, videoTrack: track, audioTrack: nil, clock: mediaClock)
    }
    guard deviceID == NativeMediaDevices.virtualCameraID else {
      throw .deviceUnavailable("unknown camera \(deviceID)")
    }
    return VirtualCameraSource(track: track, clock: mediaClock)
  }

  private func makeAudioSource(deviceID: String?, track: AudioSendTrack)
    throws(MediaBackendError) -> any NativeCaptureSource
  {
    if backend?.usesExternalAudio == true {
      let source = ExternalAudioSource(track: track)
      backend?.register(externalAudio: source)
      return source
    }
    let id = deviceID ?? NativeMediaDevices.virtualMicrophoneID
    if let path = NativeMediaDevices.filePath(fromID: id) {
      return try FileCaptureSource(
        path: path, videoTrack: nil, audioTrack: track, clock: mediaClock)
    }
    guard id == NativeMediaDevices.virtualMicrophoneID else {
      throw .deviceUnavailable("unknown microphone \(id)")
    }
    return VirtualMicrophoneSource(
      track: track, clock: mediaClock,
      microphone: VirtualMicrophone(channels: parameters.audioChannels))
  }

  private func openReceiveTracks() throws(MediaBackendError) {
    if request.video != nil {
      do {
        videoReceiveTrack = try VideoReceiveTrack(renderer: request.renderer) {
          [weak self] in
          guard let self else { return }
          self.loop.execute { self.requestKeyFrameFromSender() }
        }
      } catch {
        throw .deviceUnavailable("VP8 decoder: \(error)")
      }
    }
    if let audio = request.audio {
      do {
        audioReceiveTrack = try AudioReceiveTrack(channels: audio.useStereo ? 2 : 1) {
          [weak self] in
          guard let self else { return nil }
          if let sink = self.playoutSinkOverride.withLock({ $0 }) {
            return self.backend?.isPlayoutMuted == true ? nil : sink
          }
          return self.backend?.currentPlayoutSink()
        }
      } catch {
        throw .deviceUnavailable("Opus decoder: \(error)")
      }
    }
  }

  // MARK: - Answer

  private func applyAnswer(_ sdp: String) -> Result<Void, MediaBackendError> {
    loop.assertInEventLoop()
    guard !closed else { return .failure(.closed) }
    guard let peerConnection else { return .failure(.answerRejected("no offer was created")) }
    var answer: SessionDescription
    do {
      answer = try SDPParser.parse(sdp).description
    } catch {
      return .failure(.answerRejected("unparsable SDP: \(error)"))
    }
    NativeAnswerMunging.apply(to: &answer, request: request)
    do {
      try peerConnection.setRemoteDescription(answer: SDPWriter.write(answer))
    } catch {
      return .failure(.answerRejected("\(error)"))
    }
    if let analysis = peerConnection.remoteAnswer { adoptPayloadTypes(analysis) }
    let now = loop.now()
    if request.direction == .publish {
      setUpSendStreams(now: now)
    }
    schedulePoll()
    return .success(())
  }

  private func adoptPayloadTypes(_ analysis: SDPAnswerAnalysis) {
    for section in analysis.media where !section.isRejected {
      for codec in section.codecs {
        let name = codec.rtpMap.encodingName.lowercased()
        guard let payloadType = UInt8(exactly: codec.payloadType), payloadType < 128 else {
          continue
        }
        if section.kind == "audio", name == "opus" {
          audioPayloadType = payloadType
        } else if section.kind == "video", name == "vp8" {
          videoPayloadType = payloadType
        }
      }
      guard section.kind == "video" else { continue }
      rtxPayloadType = nil
      for codec in section.codecs where codec.rtpMap.encodingName.lowercased() == "rtx" {
        let apt = codec.formatParameters?.parameters.first { $0.name == "apt" }?.value
        if apt.flatMap({ UInt8($0) }) == videoPayloadType {
          rtxPayloadType = UInt8(exactly: codec.payloadType)
        }
      }
    }
  }

  private func setUpSendStreams(now: ContinuousClock.Instant) {
    let wallClock = NTPTimestamp(date: Date())
    if videoTrack != nil {
      videoSend = RTPSendStream(
        configuration: RTPSendStream.Configuration(
          ssrc: videoSSRC, payloadType: videoPayloadType, clockRate: 90_000,
          retransmission: rtxPayloadType.map {
            RTPReceiveStream.Retransmission(ssrc: rtxSSRC, payloadType: $0)
          }, cname: cname, minBitrate: parameters.minVideoBitrate,
          maxBitrate: parameters.maxVideoBitrate, startBitrate: parameters.startVideoBitrate),
        now: now, wallClock: wallClock)
      let estimator = SendSideBandwidthEstimator(
        startBitrate: parameters.startVideoBitrate, minBitrate: parameters.minVideoBitrate,
        maxBitrate: parameters.maxVideoBitrate, probing: false)
      estimator.onTargetBitrateChanged = { [weak self] bitrate in
        self?.applyTargetBitrate(bitrate)
      }
      self.estimator = estimator
    }
    if audioTrack != nil {
      audioSend = RTPSendStream(
        configuration: RTPSendStream.Configuration(
          ssrc: audioSSRC, payloadType: audioPayloadType, clockRate: 48_000, cname: cname,
          minBitrate: 6_000, maxBitrate: 510_000, startBitrate: parameters.audioBitrate),
        now: now, wallClock: wallClock)
    }
  }

  private func applyTargetBitrate(_ bitrate: Int) {
    guard var stream = videoSend else { return }
    stream.targetBitrate = bitrate
    videoSend = stream
    videoTrack?.setBitrate(stream.targetBitrate)
  }

  // MARK: - Events

  private func handle(_ event: PeerConnectionEvent) {
    guard case .stateChanged(let newState) = event else { return }
    let mapped: MediaConnectionState
    switch newState {
    case .new: mapped = .new
    case .connecting, .disconnected: mapped = .connecting
    case .connected: mapped = .connected
    case .failed: mapped = .failed
    case .closed: mapped = .closed
    }
    if mapped == .connected, state != .connected { startMedia() }
    if mapped == .failed { stopMedia() }
    report(mapped)
  }

  private func report(_ newState: MediaConnectionState) {
    guard newState != state else { return }
    state = newState
    onStateChange(newState)
  }

  private func startMedia() {
    videoSource?.start()
    audioSource?.start()
    audioReceiveTrack?.start()
    videoTrack?.requestKeyFrame()
  }

  private func stopMedia() {
    videoSource?.stop()
    audioSource?.stop()
    audioReceiveTrack?.stop()
  }

  private func closeOnLoop() {
    loop.assertInEventLoop()
    guard !closed else { return }
    closed = true
    if let pollTimer { loop.cancel(pollTimer) }
    pollTimer = nil
    stopMedia()
    if let source = audioSource as? ExternalAudioSource {
      backend?.unregister(externalAudio: source)
    }
    peerConnection?.onRTP = nil
    peerConnection?.onRTCP = nil
    peerConnection?.close()
    peerConnection?.onEvent = nil
    videoSource = nil
    audioSource = nil
    videoTrack = nil
    audioTrack = nil
    videoReceiveTrack = nil
    audioReceiveTrack = nil
    receivers.removeAll()
    report(.closed)
  }

  private func switchVideoSource() -> Result<Void, MediaBackendError> {
    loop.assertInEventLoop()
    guard !closed else { return .failure(.closed) }
    guard let track = videoTrack, let current = videoDeviceID else {
      return .failure(.deviceUnavailable("no published video track"))
    }
    let cameras = (backend?.devices() ?? [NativeMediaDevices.virtualCamera]).filter {
      $0.kind == .video
    }
    guard cameras.count > 1 else { return .failure(.deviceUnavailable("no other camera")) }
    let index = cameras.firstIndex { $0.id == current } ?? -1
    let next = cameras[(index + 1) % cameras.count]
    let source: any NativeCaptureSource
    do throws(MediaBackendError) {
      source = try makeVideoSource(
        deviceID: next.id, capturer: request.video?.capturer, track: track)
    } catch {
      return .failure(error)
    }
    videoSource?.stop()
    videoSource = source
    videoDeviceID = next.id
    if state == .connected {
      source.start()
      track.requestKeyFrame()
    }
    return .success(())
  }

  // MARK: - Media out

  private func sendMedia(_ payloads: [PacketizedPayload], video: Bool) {
    guard !closed, let peerConnection, peerConnection.state == .connected else { return }
    let now = loop.now()
    for payload in payloads {
      let packet: RTPPacket
      if video {
        guard var stream = videoSend else { return }
        packet = stream.send(payload, now: now)
        videoSend = stream
      } else {
        guard var stream = audioSend else { return }
        packet = stream.send(payload, now: now)
        audioSend = stream
      }
      guard let bytes = try? packet.serialized() else { continue }
      sendRTP(bytes)
    }
  }

  private func sendRTP(_ bytes: [UInt8]) {
    guard let peerConnection else { return }
    do {
      try peerConnection.sendRTP(bytes)
      counters.packetsSent += 1
      counters.bytesSent += UInt64(bytes.count)
    } catch {
      // Not connected yet (or any more): media before DTLS finished is dropped by design.
    }
  }

  private func sendRTCP(_ packets: [RTCPPacket]) {
    guard !packets.isEmpty, let peerConnection,
      let bytes = try? RTCPPacket.serializeCompound(packets)
    else { return }
    try? peerConnection.sendRTCP(bytes)
  }

  // MARK: - Media in

  private func receiveRTP(_ ssrc: UInt32, _ raw: UnsafeRawBufferPointer) {
    guard !closed, raw.count >= 12 else { return }
    let bytes = [UInt8](raw)
    let now = loop.now()
    counters.packetsReceived += 1
    counters.bytesReceived += UInt64(bytes.count)
    let payloadType = bytes[1] & 0x7F
    var mediaSSRC = ssrc
    var packet: RTPPacket
    do {
      packet = try RTPPacket.parse(bytes)
    } catch {
      extra.malformedPackets += 1
      return
    }
    if let rtx = rtxPayloadType, payloadType == rtx {
      // RTX (RFC 4588): the answer of a relay may carry no ssrc-group, so the repaired
      // stream is the one video source seen, and its RTX stream the first RTX SSRC seen
      // (taken over like a media source after a silence).
      if let current = rtxSource, current.ssrc != ssrc,
        now - current.lastPacketAt < Self.sourceTakeoverSilence
      {
        extra.malformedPackets += 1
        return
      }
      rtxSource = (ssrc, now)
      guard let video = receivers.first(where: { $0.value.isVideo })?.key,
        let restored = try? RTXPacketFormat.unwrap(
          packet, ssrc: video, payloadType: videoPayloadType)
      else {
        extra.malformedPackets += 1
        return
      }
      packet = restored
      mediaSSRC = video
    }
    if receivers[mediaSSRC] == nil {
      guard
        let entry = makeReceiver(ssrc: mediaSSRC, payloadType: packet.header.payloadType, now: now)
      else {
        extra.malformedPackets += 1
        return
      }
      receivers[mediaSSRC] = entry
    }
    guard var entry = receivers[mediaSSRC] else { return }
    entry.lastPacketAt = now
    let result = entry.stream.receive(packet, now: now)
    receivers[mediaSSRC] = entry
    if case .success(let output) = result { deliver(output, isVideo: entry.isVideo, now: now) }
  }

  private func makeReceiver(ssrc: UInt32, payloadType: UInt8, now: ContinuousClock.Instant)
    -> ReceiveEntry?
  {
    let isVideo: Bool
    if payloadType == videoPayloadType, videoReceiveTrack != nil {
      isVideo = true
    } else if payloadType == audioPayloadType, audioReceiveTrack != nil {
      isVideo = false
    } else {
      return nil
    }
    if let current = receivers.first(where: { $0.value.isVideo == isVideo }) {
      guard now - current.value.lastPacketAt >= Self.sourceTakeoverSilence else { return nil }
      receivers[current.key] = nil
    }
    let configuration = RTPReceiveStream.Configuration(
      ssrc: ssrc, localSSRC: localSSRC, payloadType: payloadType,
      clockRate: isVideo ? 90_000 : 48_000, nackEnabled: isVideo, buffersPackets: isVideo)
    return ReceiveEntry(
      stream: RTPReceiveStream(configuration: configuration, now: now), isVideo: isVideo,
      lastPacketAt: now)
  }

  private func deliver(
    _ output: RTPReceiveStream.Output, isVideo: Bool, now: ContinuousClock.Instant
  ) {
    if isVideo {
      videoReceiveTrack?.handle(output.packets, now: now)
    } else {
      audioReceiveTrack?.handle(output.packets)
    }
    sendRTCP(output.rtcp)
  }

  private func requestKeyFrameFromSender() {
    for key in Array(receivers.keys) where receivers[key]?.isVideo == true {
      receivers[key]?.stream.requestKeyFrame()
    }
  }

  private func receiveRTCP(_ raw: UnsafeRawBufferPointer) {
    guard !closed, let packets = try? RTCPPacket.parseCompound(raw) else { return }
    let now = loop.now()
    for packet in packets {
      if case .senderReport(let report) = packet {
        for key in Array(receivers.keys) {
          receivers[key]?.stream.handleSenderReport(report, now: now)
        }
      }
      if var stream = videoSend {
        let output = stream.handle(packet, now: now)
        videoSend = stream
        process(output, video: true, now: now)
      }
      if var stream = audioSend {
        let output = stream.handle(packet, now: now)
        audioSend = stream
        process(output, video: false, now: now)
      }
    }
  }

  private func process(_ output: RTPSendStream.Output, video: Bool, now: ContinuousClock.Instant) {
    for bytes in output.packets { sendRTP(bytes) }
    sendRTCP(output.rtcp)
    let micros = Int64(Date().timeIntervalSince1970 * 1_000_000)
    for event in output.events {
      switch event {
      case .keyFrameRequested:
        if video { videoTrack?.requestKeyFrame() }
      case .roundTripTime(let rtt):
        extra.roundTripTime = rtt
        estimator?.onRoundTripTime(Int64(rtt * 1_000_000))
      case .receiverEstimatedMaxBitrate(let bitrate):
        estimator?.onREMB(REMBUpdate(bitrate: Int(clamping: bitrate)), now: micros)
      case .receptionReport(let block):
        if video || videoSend == nil { counters.packetsLost = Int64(block.packetsLost) }
      }
    }
  }

  // MARK: - Timers and statistics

  private func schedulePoll() {
    pollTimer = loop.schedule(after: .milliseconds(10)) { [weak self] in
      guard let self, !self.closed else { return }
      self.poll()
      self.schedulePoll()
    }
  }

  private func poll() {
    let now = loop.now()
    for key in Array(receivers.keys) {
      guard var entry = receivers[key] else { continue }
      let output = entry.stream.poll(now: now)
      receivers[key] = entry
      deliver(output, isVideo: entry.isVideo, now: now)
    }
    if var stream = videoSend {
      let output = stream.poll(now: now)
      videoSend = stream
      process(output, video: true, now: now)
    }
    if var stream = audioSend {
      let output = stream.poll(now: now)
      audioSend = stream
      process(output, video: false, now: now)
    }
    if let rtt = videoSend?.roundTripTime ?? audioSend?.roundTripTime {
      for key in Array(receivers.keys) { receivers[key]?.stream.roundTripTime = rtt }
    }
    updateBitrate(now: now)
  }

  private func updateBitrate(now: ContinuousClock.Instant) {
    let bytes = request.direction == .publish ? counters.bytesSent : counters.bytesReceived
    guard let window = rateWindow else {
      rateWindow = (now, bytes)
      return
    }
    let elapsed = now - window.start
    guard elapsed >= .seconds(1) else { return }
    let seconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    counters.currentVideoBitrate = Int(Double(bytes - window.bytes) * 8 / seconds)
    rateWindow = (now, bytes)
  }

  private func collectStatistics() -> DetailedStatistics {
    var result = extra
    result.summary = counters
    if let estimator { result.summary.availableOutgoingBitrate = estimator.targetBitrate }
    if let video = videoTrack?.statistics {
      result.framesEncoded = video.framesEncoded
      result.keyFramesEncoded = video.keyFramesEncoded
      result.videoEncoderBitrate = video.bitrate
    }
    result.audioFramesEncoded = audioTrack?.statistics.framesEncoded ?? 0
    result.framesDecoded = videoReceiveTrack?.statistics.framesDecoded ?? 0
    result.audioFramesDecoded = audioReceiveTrack?.statistics.decodedFrames ?? 0
    for stream in [videoSend, audioSend].compactMap({ $0 }) {
      result.retransmissions += stream.counters.retransmissions
      result.keyFrameRequests += stream.counters.keyFrameRequests
      result.senderReports += stream.counters.senderReports
      if result.roundTripTime == nil { result.roundTripTime = stream.roundTripTime }
    }
    for entry in receivers.values {
      result.nacksSent += entry.stream.counters.nacksSent
      result.plisSent += entry.stream.counters.plisSent
      result.receiverReports += entry.stream.counters.receiverReportsSent
      result.malformedPackets += entry.stream.counters.malformedPackets
      if request.direction == .play {
        result.summary.packetsLost += Int64(entry.stream.statistics.cumulativeLost)
      }
    }
    if let rtt = peerConnection?.stats.roundTripTime, result.roundTripTime == nil {
      let (seconds, attoseconds) = rtt.components
      result.roundTripTime = Double(seconds) + Double(attoseconds) * 1e-18
    }
    return result
  }
}
