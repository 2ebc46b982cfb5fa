import Foundation
import Synchronization
import WCSDevices
import WCSEventLoop
import WCSMediaSeam
import WCSPeerConnection
import WCSProtocols

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
public final class NativeMediaConnection: MediaConnection, Sendable {
  // Every entry point hops to `loop` (`loop.execute`/`loop.submit`), where `loopState` lives;
  // `trackEnabled`, `playoutSinkOverride` and `audioOutput` sit behind mutexes; the rest is
  // immutable.

  /// The request this connection serves.
  public let request: MediaConnectionRequest
  /// The loop the transport runs on.
  public let loop: EventLoop
  let parameters: NativeEncodingParameters
  let configuration: NativeMediaBackend.Configuration
  let onStateChange: @Sendable (MediaConnectionState) -> Void
  weak let backend: NativeMediaBackend?
  let trackEnabled = Mutex<[CaptureDevice.Kind: Bool]>([:])
  let playoutSinkOverride = Mutex<(any PlayoutAudioSink)?>(nil)
  /// The sound output of played audio (`setAudioOutput`, `request.audio.output`).
  let audioOutput = Mutex(AudioOutputState())
  let cname = PeerConnection.randomToken(16)
  let localSSRC: UInt32
  let videoSSRC: UInt32
  let rtxSSRC: UInt32
  let audioSSRC: UInt32

  // MARK: loop state
  /// Everything that changes on the loop, in one value checked to be used there only (any use
  /// off the loop traps); the properties below forward to it.
  let loopState: LoopBoundBox<LoopState>
  var peerConnection: PeerConnection? {
    _read { yield loopState.value.peerConnection }
    _modify { yield &loopState.value.peerConnection }
  }
  var state: MediaConnectionState {
    _read { yield loopState.value.state }
    _modify { yield &loopState.value.state }
  }
  var closed: Bool {
    _read { yield loopState.value.closed }
    _modify { yield &loopState.value.closed }
  }
  var videoTrack: VideoSendTrack? {
    _read { yield loopState.value.videoTrack }
    _modify { yield &loopState.value.videoTrack }
  }
  var audioTrack: AudioSendTrack? {
    _read { yield loopState.value.audioTrack }
    _modify { yield &loopState.value.audioTrack }
  }
  var videoSource: (any NativeCaptureSource)? {
    _read { yield loopState.value.videoSource }
    _modify { yield &loopState.value.videoSource }
  }
  var videoDeviceID: String? {
    _read { yield loopState.value.videoDeviceID }
    _modify { yield &loopState.value.videoDeviceID }
  }
  var audioSource: (any NativeCaptureSource)? {
    _read { yield loopState.value.audioSource }
    _modify { yield &loopState.value.audioSource }
  }
  var publishSession: RTPPublishSession? {
    _read { yield loopState.value.publishSession }
    _modify { yield &loopState.value.publishSession }
  }
  var pacerTimer: EventLoopTimer? {
    _read { yield loopState.value.pacerTimer }
    _modify { yield &loopState.value.pacerTimer }
  }
  var pacerDeadline: MediaInstant? {
    _read { yield loopState.value.pacerDeadline }
    _modify { yield &loopState.value.pacerDeadline }
  }
  var videoPayloadType: UInt8 {
    _read { yield loopState.value.videoPayloadType }
    _modify { yield &loopState.value.videoPayloadType }
  }
  var h264PacketizationMode: Int? {
    _read { yield loopState.value.h264PacketizationMode }
    _modify { yield &loopState.value.h264PacketizationMode }
  }
  var audioPayloadType: UInt8 {
    _read { yield loopState.value.audioPayloadType }
    _modify { yield &loopState.value.audioPayloadType }
  }
  var rtxPayloadType: UInt8? {
    _read { yield loopState.value.rtxPayloadType }
    _modify { yield &loopState.value.rtxPayloadType }
  }
  var playSession: RTPPlaySession {
    _read { yield loopState.value.playSession }
    _modify { yield &loopState.value.playSession }
  }
  var videoReceiveTrack: VideoReceiveTrack? {
    _read { yield loopState.value.videoReceiveTrack }
    _modify { yield &loopState.value.videoReceiveTrack }
  }
  var audioReceiveTrack: AudioReceiveTrack? {
    _read { yield loopState.value.audioReceiveTrack }
    _modify { yield &loopState.value.audioReceiveTrack }
  }
  var playoutSync: PlayoutSync? {
    _read { yield loopState.value.playoutSync }
    _modify { yield &loopState.value.playoutSync }
  }
  var pollTimer: EventLoopTimer? {
    _read { yield loopState.value.pollTimer }
    _modify { yield &loopState.value.pollTimer }
  }
  var pollDeadline: MediaInstant? {
    _read { yield loopState.value.pollDeadline }
    _modify { yield &loopState.value.pollDeadline }
  }
  /// `pollDeadline` as an instant.
  var pollAt: ContinuousClock.Instant? { pollDeadline?.continuousInstant }
  var audioPlayoutTimer: EventLoopTimer? {
    _read { yield loopState.value.audioPlayoutTimer }
    _modify { yield &loopState.value.audioPlayoutTimer }
  }
  var counters: MediaConnectionStats {
    _read { yield loopState.value.counters }
    _modify { yield &loopState.value.counters }
  }
  var extra: DetailedStatistics {
    _read { yield loopState.value.extra }
    _modify { yield &loopState.value.extra }
  }
  var rateWindow: (start: MediaInstant, bytes: UInt64)? {
    _read { yield loopState.value.rateWindow }
    _modify { yield &loopState.value.rateWindow }
  }
  var mediaStarted: Bool {
    _read { yield loopState.value.mediaStarted }
    _modify { yield &loopState.value.mediaStarted }
  }
  var iceServerNotes: [String] {
    _read { yield loopState.value.iceServerNotes }
    _modify { yield &loopState.value.iceServerNotes }
  }
  var hostAddressWatcher: EventLoopHostAddressWatcher? {
    _read { yield loopState.value.hostAddressWatcher }
    _modify { yield &loopState.value.hostAddressWatcher }
  }
  var captureFailure: (kind: CaptureDevice.Kind, reason: String)? {
    _read { yield loopState.value.captureFailure }
    _modify { yield &loopState.value.captureFailure }
  }
  var transportWideCCID: UInt8? {
    _read { yield loopState.value.transportWideCCID }
    _modify { yield &loopState.value.transportWideCCID }
  }
  /// Origin of the microsecond clock the transport-wide feedback generator (TWCC) uses.
  let mediaClockOrigin: MediaInstant
  let mediaClock = NativeMediaClock()

  init(
    request: MediaConnectionRequest, configuration: NativeMediaBackend.Configuration,
    backend: NativeMediaBackend, onStateChange: @escaping @Sendable (MediaConnectionState) -> Void
  ) {
    self.request = request
    self.configuration = configuration
    self.backend = backend
    self.onStateChange = onStateChange
    loop = configuration.loop
    mediaClockOrigin = MediaInstant.now()
    parameters = NativeEncodingParameters(request: request)
    var generator = SystemRandomNumberGenerator()
    var ssrcs: Set<UInt32> = []
    while ssrcs.count < 4 { ssrcs.insert(UInt32.random(in: 1...UInt32.max, using: &generator)) }
    let values = Array(ssrcs)
    localSSRC = values[0]
    videoSSRC = values[1]
    rtxSSRC = values[2]
    audioSSRC = values[3]
    loopState = LoopBoundBox(LoopState(), loop: loop)
  }

  deinit {
    let peerConnection = loopState.valueInOwnersDeinit.peerConnection
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

  /// Moves the published video to the next video device (virtual camera, file sources, V4L2
  /// cameras, in `NativeMediaBackend.devices()` order); with an app capturer, restarts it with the next
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
  /// reports `.closed`. Idempotent; returns when everything is released, and no frame reaches
  /// the renderer or a playout sink afterwards (a `render(_:)` call already running on a
  /// track's queue may still be finishing: it may be the caller). Callable from `render(_:)`.
  public func close() {
    loop.submit { self.closeOnLoop() }
  }

  /// The PeerConnection's local addresses (empty before the offer and after close); for tests.
  public var localAddresses: [ICETransportAddress] {
    loop.submit { self.peerConnection?.localAddresses ?? [] }
  }

  /// Whether `close()` ran.
  public var isClosed: Bool { loop.submit { self.closed } }

  /// Why the connection went `.failed` because of its capture device (a camera unplugged
  /// while publishing, a microphone whose sound server died): the device's own message, as in
  /// `MediaConnectionFailure.captureDeviceLost`; `nil` otherwise, and for failures of the
  /// transport (ICE, DTLS), which `onStateChange` reports. Waits for the loop (inline on it).
  public var failureReason: String? { loop.submit { self.captureFailure?.reason } }

  /// A capture source's failure callback: hops to the loop, stops the media and reports
  /// `.failed(.captureDeviceLost(kind, reason))` once.
  func captureFailureHandler(kind: CaptureDevice.Kind) -> @Sendable (String) -> Void {
    { [weak self] reason in
      guard let self else { return }
      self.loop.execute { self.failCapture(kind: kind, reason: reason) }
    }
  }

  func failCapture(kind: CaptureDevice.Kind, reason: String) {
    loop.assertInEventLoop()
    guard !closed, captureFailure == nil, !state.isFailed else { return }
    captureFailure = (kind, reason)
    stopMedia()
    report(.failed(.captureDeviceLost(kind, reason)))
  }

  // MARK: - Events

  func handle(_ event: PeerConnectionEvent) {
    guard case .stateChanged(let newState) = event else { return }
    let mapped: MediaConnectionState
    switch newState {
    case .new: mapped = .new
    case .connecting, .disconnected: mapped = .connecting
    case .connected: mapped = .connected
    case .failed(let error): mapped = .failed(failure(of: error))
    case .closed: mapped = .closed
    }
    if mapped == .connected, state != .connected { startMedia() }
    if mapped.isFailed { stopMedia() }
    report(mapped)
  }

  /// The cause WCSApi2 sees: an ICE failure after media started is lost consent (RFC 7675);
  /// before, no pair worked, said with what was tried (`noCandidatePairReason`).
  func failure(of error: PeerConnectionError) -> MediaConnectionFailure {
    switch error {
    case .iceFailed:
      return mediaStarted ? .consentExpired : .noCandidatePair(tried: noCandidatePairReason())
    case .dtls(let dtls): return .dtls("\(dtls)")
    default: return .transport("\(error)")
    }
  }

  /// Reports a state change once; the first failure cause is kept (a transport failure after a
  /// lost camera is not reported again).
  func report(_ newState: MediaConnectionState) {
    guard newState != state, !(newState.isFailed && state.isFailed) else { return }
    state = newState
    onStateChange(newState)
  }

  /// Starts capture and playout the first time the transport is up (a reconnection after
  /// `.disconnected` keeps them running).
  func startMedia() {
    guard !mediaStarted else { return }
    mediaStarted = true
    videoSource?.start()
    audioSource?.start()
    if let track = audioReceiveTrack {
      track.start()
      scheduleAudioPlayout(at: loop.mediaNow())
    }
    videoTrack?.requestKeyFrame()
  }

  /// Runs a playout turn of the audio receive track at `deadline` and at each turn it asks
  /// for next. Call on the loop.
  func scheduleAudioPlayout(at deadline: MediaInstant) {
    audioPlayoutTimer = loop.schedule(at: deadline, leeway: tuning.audioTurnLeeway) {
      [weak self] in
      guard let self, !self.closed, let track = self.audioReceiveTrack else { return }
      let now = self.loop.mediaNow()
      track.playDue(now: now)
      // A sink may have closed the connection or stopped the media from `play`, on the loop.
      guard !self.closed, track.isRunning else { return }
      let next = track.nextTurn(after: now)
      // This closure again, rather than a new one each turn.
      if let again = self.loop.scheduleFiringActionAgain(
        at: next, leeway: self.tuning.audioTurnLeeway)
      {
        self.audioPlayoutTimer = again
      } else {
        self.scheduleAudioPlayout(at: next)
      }
    }
  }

  func stopMedia() {
    if let audioPlayoutTimer { loop.cancel(audioPlayoutTimer) }
    audioPlayoutTimer = nil
    videoSource?.stop()
    audioSource?.stop()
    audioReceiveTrack?.stop()
    videoReceiveTrack?.stop()
    videoTrack?.stop()
  }

  func closeOnLoop() {
    loop.assertInEventLoop()
    guard !closed else { return }
    closed = true
    hostAddressWatcher?.close()
    hostAddressWatcher = nil
    if let pollTimer { loop.cancel(pollTimer) }
    pollTimer = nil
    pollDeadline = nil
    if let pacerTimer { loop.cancel(pacerTimer) }
    pacerTimer = nil
    pacerDeadline = nil
    stopMedia()
    closeAudioOutput()
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
    playSession.removeStreams()
    report(.closed)
  }

  func switchVideoSource() -> Result<Void, MediaBackendError> {
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
    if mediaStarted {
      source.start()
      track.requestKeyFrame()
    }
    return .success(())
  }
}
