import Dispatch
import Foundation
import Synchronization
import WCSEngine
import WCSMediaSeam
import WCSTransport

/// One published or played stream (`FPWCSApi2Stream`, api-surface.md §2.7). Status comes only from
/// the server (`notifyStreamStatusEvent`, `fail`) or from local failures; callbacks run on the
/// session's callback queue.
public final class FPWCSApi2Stream: @unchecked Sendable {
  // @unchecked Sendable: the `let`s are set once in init; mutable state sits behind Mutexes.

  /// Stream callback (`StreamCallback`): receives the stream.
  public typealias StreamCallback = (FPWCSApi2Stream?) -> Void
  /// Stream event callback.
  public typealias StreamEventCallback = (FPWCSApi2StreamEvent?) -> Void

  private struct Callbacks {
    var status: [kFPWCSStreamStatus: UncheckedBox<StreamCallback>] = [:]
    var event: UncheckedBox<StreamEventCallback>?
    var waiters: [UUID: CheckedContinuation<Void, any Error>] = [:]
    var statusContinuations: [UUID: AsyncStream<kFPWCSStreamStatus>.Continuation] = [:]
  }

  /// The stream's `mediaSessionId` (a UUID made by the client); a new one after each ICE
  /// restart, since WCS takes a new offer only as a new stream.
  var mediaSessionId: String { currentMediaSessionId.withLock { $0 } }
  private let currentMediaSessionId: Mutex<String>
  let name: String
  private weak let session: FPWCSApi2Session?
  private let callbackQueue: DispatchQueue
  let constraints: FPWCSApi2MediaConstraints
  private let display: (any VideoRenderer)?
  /// What a played stream renders into: `display` behind a keeper of the newest frame (local
  /// snapshots); nil without a display.
  let lastFrame: LastFrameRenderer?
  /// `snapshot(timeout:)` calls waiting for the server's answer.
  let snapshotWaiters = Mutex<[UUID: CheckedContinuation<Data, any Error>]>([:])
  private let record: Bool
  private let rtmpUrl: String?
  private let custom: [String: JSONValue]?
  private let transport: kFPWCSTransport
  private let cvoExtension: Bool
  private let stripCodecs: [String]
  private let preferredVideoCodec: String?
  private let h264Profile: H264OfferedProfile?
  /// The stream's ICE servers and policy over the session's.
  private let iceSettings: ICESettings
  private let state: Mutex<StreamState>
  private let connectionState = Mutex<MediaConnectionState>(.new)
  /// Where played audio is heard (`setAudioOutput`, `setLoudspeakerStatus`, options).
  private let audioOutput: Mutex<MediaConnectionRequest.AudioOutput>
  /// Held through a whole `setAudioOutput` call (remembering and opening the device), so that
  /// concurrent calls take turns and the remembered output is the one the connection got last.
  private let audioOutputCalls = Mutex(())
  /// `stop()` was called: the media connection is released before the server's STOPPED
  /// arrives, so a sound output asked for meanwhile would never open.
  private let stopRequested = Atomic<Bool>(false)
  private let callbacks = Mutex(Callbacks())
  private let quality = Mutex(QualityState())

  private struct QualityState {
    var enabled = false
    var estimator = ConnectionQualityEstimator()
    var callback: UncheckedBox<ConnectionQualityCallback>?
  }

  /// Connection-quality callback: the class and the smoothed client and server video bitrates
  /// in bits per second (their numeric type is UNCONFIRMED for iOS).
  public typealias ConnectionQualityCallback = (kFPWCSConnectionQuality, Double, Double) -> Void

  init(session: FPWCSApi2Session, options: FPWCSApi2StreamOptions) throws(WCSError) {
    guard let name = options.name, !name.isEmpty else {
      throw .invalidOptions("name must be provided")
    }
    try FPWCSApi2StreamLimits.validate(name: name)
    let constraints = MediaRequestBuilder.effective(options.constraints)
    try FPWCSApi2StreamLimits.validate(constraints)
    let mediaSessionId = UUID().uuidString.lowercased()
    self.currentMediaSessionId = Mutex(mediaSessionId)
    self.name = name
    self.session = session
    self.callbackQueue = session.callbackQueue
    self.constraints = constraints
    self.display = options.display
    self.lastFrame = options.display.map { LastFrameRenderer(wrapping: $0) }
    self.record = options.record
    self.rtmpUrl = options.rtmpUrl
    self.custom = try options.custom.map { dictionary throws(WCSError) in
      try JSONConversion.object(dictionary, path: "custom")
    }
    self.transport = options.transport
    self.cvoExtension = options.cvoExtension
    self.stripCodecs = (options.stripCodecs ?? []).map { "\($0)" }
    self.preferredVideoCodec = options.preferredVideoCodec
    self.h264Profile = options.h264Profile
    self.audioOutput = Mutex(options.audioOutput)
    self.iceSettings = try ICESettings(
      servers: options.iceServers, policy: options.iceTransportPolicy
    ).over(session.iceSettings)
    self.state = Mutex(StreamState(id: mediaSessionId, name: name))
  }

  /// The session, for extensions in other files.
  var ownerSession: FPWCSApi2Session? { session }

  deinit {
    for waiter in snapshotWaiters.withLock({ $0.values }) {
      waiter.resume(throwing: WCSError.disconnected)
    }
    let (waiters, continuations) = callbacks.withLock {
      ($0.waiters.values, $0.statusContinuations.values)
    }
    for waiter in waiters { waiter.resume(throwing: WCSError.disconnected) }
    for continuation in continuations { continuation.finish() }
  }

  func connectionRequest(published: Bool) -> MediaConnectionRequest {
    var request = MediaRequestBuilder.connectionRequest(
      constraints, direction: published ? .publish : .play,
      display: published ? display : lastFrame ?? display, transport: transport,
      stripCodecs: stripCodecs)
    if !published { request.audio?.output = audioOutput.withLock { $0 } }
    request.preferredVideoCodec = preferredVideoCodec
    request.h264Profile = h264Profile
    iceSettings.apply(to: &request)
    return request
  }

  func streamRequest(published: Bool) -> StreamRequest {
    MediaRequestBuilder.streamRequest(
      name: name, published: published, constraints: constraints, record: record, rtmpUrl: rtmpUrl,
      custom: custom, transport: transport, cvoExtension: cvoExtension, stripCodecs: stripCodecs)
  }

  // MARK: faithful API

  /// The stream id (`mediaSessionId`).
  public func getStreamID() -> String { mediaSessionId }
  /// The stream name.
  public func getName() -> String { name }
  /// Current status.
  public func getStatus() -> kFPWCSStreamStatus { state.withLock { $0.status } }
  /// Why the stream failed or stopped, mapped from the `info` of `notifyStreamStatusEvent` or
  /// `fail` (wcs-protocol.md §5.2).
  public func getStatusInfo() -> kFPWCSStreamStatusInfo { state.withLock { $0.statusInfo } }
  /// The server's `info` text as received (Linux addition; the iOS SDK only maps it).
  public func getInfo() -> String? { state.withLock { $0.info } }
  /// The server-side recording file name with extension (`recordName` of
  /// `notifyStreamStatusEvent`, wcs-protocol.md §6), once the server sent it.
  public func getRecordName() -> String? { state.withLock { $0.recordName } }
  /// `true` once `publish()` was called on this object, `false` for a player.
  public func isPublished() -> Bool { state.withLock { $0.published } }
  /// The stream's bitrate, bits per second (0 = unknown): for a publisher as the server reports
  /// it (`inboundVideoRate`, NOT_ENOUGH_BANDWIDTH info); for a player the measured receive
  /// bitrate of its media connection (sampled every `bandwidthSampleInterval`), or the server's
  /// figure when it sent one since.
  public func getRemoteBitrate() -> Int { state.withLock { $0.remoteBitrate } }
  /// Available bandwidth, bits per second (0 = unknown): for a publisher the congestion
  /// controller's estimate of its media connection (sampled every `bandwidthSampleInterval`);
  /// otherwise the figure of the last NOT_ENOUGH_BANDWIDTH from the server.
  public func getNetworkBandwidth() -> Int { state.withLock { $0.networkBandwidth } }
  /// `true` when the local audio track is muted.
  public func isAudioMuted() -> Bool { state.withLock { $0.localAudioMuted } }
  /// `true` when the local video track is muted.
  public func isVideoMuted() -> Bool { state.withLock { $0.localVideoMuted } }
  /// The WebRTC connection state (Linux addition); `.failed` carries the cause
  /// (`MediaConnectionFailure`: ICE, consent, DTLS, or a lost camera/microphone).
  public func getConnectionState() -> MediaConnectionState { connectionState.withLock { $0 } }

  /// Remote publisher's audio mute state as last reported; `nil` before any report.
  public func getAudioState() -> FPWCSApi2MediaState? {
    state.withLock { $0.remoteAudioMuted }.map { FPWCSApi2MediaState(muted: $0) }
  }
  /// Remote publisher's video mute state as last reported; `nil` before any report.
  public func getVideoState() -> FPWCSApi2MediaState? {
    state.withLock { $0.remoteVideoMuted }.map { FPWCSApi2MediaState(muted: $0) }
  }

  /// Starts publishing: sends `publishStream` with a send-only SDP offer (wcs-protocol.md §3.1);
  /// Publishing (or Failed) arrives through the callbacks.
  /// - Throws: `WCSError.invalidSessionState` unless the session is Established,
  ///   `.invalidStreamState` unless the stream is New, `.media` when the engine cannot start,
  ///   `.invalidOption` when the constraints were changed out of `FPWCSApi2StreamLimits`.
  public func publish() throws {
    guard let session else { throw WCSError.disconnected }
    try session.startStream(self, published: true)
  }

  /// Starts playing: sends `playStream` with a receive-only SDP offer (wcs-protocol.md §3.1);
  /// Pending, then Playing (or Failed) through the callbacks. Throws as `publish()`.
  public func play() throws {
    guard let session else { throw WCSError.disconnected }
    try session.startStream(self, published: false)
  }

  /// Stops publishing (`unPublishStream` → Unpublished) or playing (`stopStream` → Stopped).
  /// In New the stream fails locally; in Pending the stop goes out when the server answers; after
  /// the end it does nothing.
  public func stop() throws {
    stopRequested.store(true, ordering: .relaxed)
    session?.stopStream(self)
  }

  /// Sets the callback for one status, replacing an earlier one. Returns self.
  @discardableResult
  public func on(_ status: kFPWCSStreamStatus, callback: @escaping StreamCallback)
    -> FPWCSApi2Stream
  {
    callbacks.withLock { $0.status[status] = UncheckedBox(callback) }
    return self
  }

  /// Sets the callback for stream events (`notifyStreamEvent`, wcs-protocol.md §4.6: remote mute
  /// changes, data messages, ...).
  public func onStreamEvent(_ callback: @escaping StreamEventCallback) {
    callbacks.withLock { $0.event = UncheckedBox(callback) }
  }

  /// Asks the server whether a stream with this name can be played now (`availableStream`);
  /// `callback` gets the answer and the server's reason text, on the callback queue.
  public func available(_ callback: @escaping (Bool, String?) -> Void) {
    guard let session else {
      let box = UncheckedBox(callback)
      callbackQueue.async { box.value(false, "\(WCSError.disconnected)") }
      return
    }
    session.checkAvailable(name: name, callback: callback)
  }

  /// Mutes the outgoing audio track (also before publishing); subscribers get `audioMuted`.
  public func muteAudio() { session?.setMuted(self, audio: true, muted: true) }
  /// Unmutes the outgoing audio track.
  public func unmuteAudio() { session?.setMuted(self, audio: true, muted: false) }
  /// Mutes the outgoing video track; subscribers get `videoMuted`.
  public func muteVideo() { session?.setMuted(self, audio: false, muted: true) }
  /// Unmutes the outgoing video track.
  public func unmuteVideo() { session?.setMuted(self, audio: false, muted: false) }

  /// Sends a JSON object to every subscriber (`sendStreamEvent` type `data`), only while
  /// publishing; otherwise (or for non-JSON values) nothing is sent. See `sendDataChecked(_:)`.
  public func sendData(_ data: [String: Any]) {
    try? sendDataChecked(data)
  }

  /// Moves publishing to the next camera; failures are ignored (see `trySwitchCamera()`).
  public func switchCamera() {
    try? trySwitchCamera()
  }

  /// Freezes capture orientation of a custom `FPWCSVideoCapturer`; nothing to do for Linux cameras.
  public func lockCameraOrientation() {
    (constraints.video?.videoCapturer as? any FPWCSVideoCapturer)?.lockCameraOrientation()
  }

  /// Releases the orientation lock of a custom `FPWCSVideoCapturer`.
  public func unlockCameraOrientation() {
    (constraints.video?.videoCapturer as? any FPWCSVideoCapturer)?.unlockCameraOrientation()
  }

  /// Reads the WebRTC statistics; `callback` gets `nil` when there is no connection.
  public func getStats(_ callback: @escaping (FPWCSApi2StreamStats?) -> Void) {
    let box = UncheckedBox(callback)
    guard let connection = session?.connection(of: self) else {
      callbackQueue.async { box.value(nil) }
      return
    }
    let queue = callbackQueue
    // The native engine's detailed counters (NACK, PLI, key frames) come in the same read.
    if let native = connection as? NativeMediaConnection {
      native.detailedStatistics { detailed in
        native.iceStatistics { ice in
          queue.async {
            box.value(FPWCSApi2StreamStats(detailed.summary, detailed: detailed, ice: ice))
          }
        }
      }
      return
    }
    connection.stats { stats in queue.async { box.value(FPWCSApi2StreamStats(stats)) } }
  }

  /// Turns the connection-quality estimate on or off: each server video-rate report
  /// (`inboundVideoRate`/`outboundVideoRate`) is compared with the local RTP bitrate
  /// (wcs-protocol.md §4.7) and the result goes to `onConnectionQualityCallback`.
  public func enableConnectionQualityCalculation(_ enable: Bool) {
    quality.withLock {
      $0.enabled = enable
      if !enable { $0.estimator = ConnectionQualityEstimator() }
    }
  }

  /// Sets the connection-quality callback (runs on the callback queue).
  public func onConnectionQualityCallback(_ callback: @escaping ConnectionQualityCallback) {
    quality.withLock { $0.callback = UncheckedBox(callback) }
  }

  // MARK: Swift-native additions

  /// Publishes and returns once Publishing.
  /// - Throws: the `publish()` errors, `WCSError.streamFailed` with the server's info,
  ///   `.streamEnded` if stopped first, `.disconnected` if the session ends first.
  public func publish() async throws {
    try await start(published: true)
  }

  /// Plays and returns once Playing; throws as `publish() async`.
  public func play() async throws {
    try await start(published: false)
  }

  /// `sendData` that reports why nothing was sent.
  /// - Throws: `WCSError.invalidArgument` for non-JSON values, `.invalidStreamState` unless publishing.
  public func sendDataChecked(_ data: [String: Any]) throws {
    let payload = JSONValue.object(try JSONConversion.object(data))
    guard let session else { throw WCSError.disconnected }
    try session.sendStreamData(self, payload: payload)
  }

  /// `switchCamera` that reports failures.
  /// - Throws: `WCSError.invalidStreamState` without a media connection, `.media` from the engine.
  public func trySwitchCamera() throws {
    guard let connection = session?.connection(of: self) else {
      throw WCSError.invalidStreamState(getStatus(), operation: "switch camera")
    }
    do throws(MediaBackendError) {
      try connection.switchCamera()
    } catch {
      throw WCSError.media(error)
    }
  }

  /// Plays (`true`) or stops playing (`false`) the played stream's audio on the default sound
  /// output: the Linux mapping of the iOS loudspeaker switch (Linux has no earpiece; the sound
  /// system's default sink is the "loudspeaker"). Same as `setAudioOutput(.defaultDevice)` /
  /// `setAudioOutput(.none)`; see there for when it applies and what it throws.
  public func setLoudspeakerStatus(_ enable: Bool) throws {
    try setAudioOutput(enable ? .defaultDevice : .none)
  }

  /// Plays the played stream's audio on a sound output (Linux addition): `.defaultDevice`,
  /// `.device(name)` (a PulseAudio sink or ALSA PCM name) or `.none` (stops and closes the
  /// device). While the stream has a media connection (Pending, Playing) the device is opened
  /// before this returns; before `play()` the choice is remembered and applied when `play()`
  /// creates the connection. A device failure never stops the stream.
  /// - Throws: `WCSError.invalidStreamState` for a published stream, or when asking for an output
  ///   on a stream that has ended or is stopping (`stop()` called);
  ///   `.media(.audioOutputUnavailable(reason))` when the device cannot be opened (`reason`: the
  ///   sound system's message, e.g. no PulseAudio server and no ALSA device).
  public func setAudioOutput(_ output: MediaConnectionRequest.AudioOutput) throws {
    let status = getStatus()
    guard !isPublished() else {
      throw WCSError.invalidStreamState(
        status, operation: "play audio on a sound output (the stream is published, not played)")
    }
    if status.isTerminal, output != .none {
      throw WCSError.invalidStreamState(status, operation: "play audio on a sound output")
    }
    if stopRequested.load(ordering: .relaxed), output != .none {
      throw WCSError.invalidStreamState(
        status, operation: "play audio on a sound output (the stream is stopping)")
    }
    try audioOutputCalls.withLock { _ throws(WCSError) in
      audioOutput.withLock { $0 = output }
      guard let connection = session?.connection(of: self) else { return }
      do throws(MediaBackendError) {
        try connection.setAudioOutput(output)
      } catch {
        throw WCSError.media(error)
      }
    }
  }

  /// The sound output chosen with `setAudioOutput(_:)`, `setLoudspeakerStatus(_:)` or the
  /// options (Linux addition).
  public func getAudioOutput() -> MediaConnectionRequest.AudioOutput {
    audioOutput.withLock { $0 }
  }

  /// Every status callback from now on (including event-like Resize/NotEnoughtBandwidth), in
  /// order; finishes after the terminal status.
  public var statusUpdates: AsyncStream<kFPWCSStreamStatus> {
    let (stream, continuation) = AsyncStream.makeStream(of: kFPWCSStreamStatus.self)
    let key = UUID()
    if getStatus().isTerminal {
      continuation.finish()
      return stream
    }
    callbacks.withLock { $0.statusContinuations[key] = continuation }
    continuation.onTermination = { [weak self] _ in
      _ = self?.callbacks.withLock { $0.statusContinuations.removeValue(forKey: key) }
    }
    return stream
  }

  private func start(published: Bool) async throws {
    let key = UUID()
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      callbacks.withLock { $0.waiters[key] = continuation }
      do {
        guard let session else { throw WCSError.disconnected }
        try session.startStream(self, published: published)
      } catch {
        let waiter = callbacks.withLock { $0.waiters.removeValue(forKey: key) }
        waiter?.resume(throwing: error)
      }
    }
  }

  // MARK: driven by the session (on its work queue)

  func update(_ newState: StreamState) {
    state.withLock { $0 = newState }
  }

  /// Takes the `mediaSessionId` of the connection an ICE restart made.
  func adoptMediaSessionId(_ id: String) {
    currentMediaSessionId.withLock { $0 = id }
  }

  func setConnectionState(_ newState: MediaConnectionState) {
    connectionState.withLock { $0 = newState }
  }

  func deliverStatus(_ status: kFPWCSStreamStatus, state: StreamState) {
    let terminal = state.status.isTerminal
    let (callback, continuations, waiters) = callbacks.withLock { c in
      let continuations = Array(c.statusContinuations.values)
      if terminal { c.statusContinuations = [:] }
      var waiters: [CheckedContinuation<Void, any Error>] = []
      if status == .fpwcsStreamStatusPublishing || status == .fpwcsStreamStatusPlaying || terminal {
        waiters = Array(c.waiters.values)
        c.waiters = [:]
      }
      return (c.status[status], continuations, waiters)
    }
    // Strong capture: a stream that just ended may have no other owner, and its callback must
    // still receive it.
    callbackQueue.async { callback?.value(self) }
    for continuation in continuations {
      continuation.yield(status)
      if terminal { continuation.finish() }
    }
    for waiter in waiters {
      switch state.status {
      case .fpwcsStreamStatusFailed:
        waiter.resume(
          throwing: WCSError.streamFailed(statusInfo: state.statusInfo, info: state.info))
      case .fpwcsStreamStatusUnpublished, .fpwcsStreamStatusStopped:
        waiter.resume(throwing: WCSError.streamEnded(state.status))
      default:
        waiter.resume()
      }
    }
  }

  var isQualityCalculationEnabled: Bool { quality.withLock { $0.enabled } }

  /// One pair of bitrates (bits per second) for the quality estimate; any thread.
  func addQualitySample(clientBitrate: Int, serverBitrate: Int) {
    let result = quality.withLock {
      q -> (UncheckedBox<ConnectionQualityCallback>?, kFPWCSConnectionQuality, Double, Double)? in
      guard q.enabled else { return nil }
      let r = q.estimator.update(
        clientBitrate: Double(clientBitrate), serverBitrate: Double(serverBitrate))
      return (q.callback, r.quality, r.clientFiltered, r.serverFiltered)
    }
    guard let (callback, level, client, server) = result, let callback else { return }
    callbackQueue.async { callback.value(level, client, server) }
  }

  func deliverEvent(_ event: FPWCSApi2StreamEvent) {
    snapshotEvent(event)
    let callback = callbacks.withLock { $0.event }
    callbackQueue.async { callback?.value(event) }
  }
}
