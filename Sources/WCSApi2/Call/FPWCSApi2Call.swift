import Dispatch
import Foundation
import Synchronization
import WCSMediaSeam
import WCSTransport

/// Options of an outgoing call (`FPWCSApi2CallOptions`, wcs-rooms-and-calls.md §B.9): read once
/// by `FPWCSApi2Session.createCall(_:)`.
public final class FPWCSApi2CallOptions {
  /// The dialled user or number (free text; the gateway makes the SIP URI with `sipDomain`, or
  /// uses it as is when it is a `sip:` URI). Required.
  public var callee: String?
  /// Display name shown to the called party; `nil` = the own SIP login.
  public var visibleName: String?
  /// Media sent; `nil` = audio only (`FPWCSApi2MediaConstraints(audio: true, video: false)`).
  public var localConstraints: FPWCSApi2MediaConstraints?
  /// Media asked from the other side; `nil` = the same parts as `localConstraints`.
  public var remoteConstraints: FPWCSApi2MediaConstraints?
  /// Local preview of a video call.
  public var localDisplay: (any VideoRenderer)?
  /// The other side's video.
  public var remoteDisplay: (any VideoRenderer)?
  /// App data for the server's REST hooks (`custom`, JSON-compatible values).
  public var custom: [String: Any]?
  /// Extra SIP header fields of the INVITE (`inviteParameters`, e.g. `["X-Room": "12"]`).
  public var inviteParameters: [String: String]?

  /// Empty options.
  public init() {}
}

/// One SIP call through the server's WebRTC–SIP gateway (`FPWCSApi2Call`,
/// wcs-rooms-and-calls.md §B). Outgoing calls come from `FPWCSApi2Session.createCall(_:)`,
/// incoming ones from `onIncomingCallCallback`. The server decides every status after PENDING;
/// callbacks run on the session's callback queue. Usable from any thread: its state sits behind
/// locks and the compiler checks the `Sendable` conformance.
public final class FPWCSApi2Call: Sendable {

  /// Call callback (`CallCallback`): receives the call.
  public typealias CallCallback = (FPWCSApi2Call?) -> Void
  /// DTMF callback (Linux addition): the call, the digits the far end pressed (`0-9 * # A-D`)
  /// and how they came (`.fpwcsCallDTMFRFC2833` or `.fpwcsCallDTMFInfo`).
  public typealias DTMFCallback = (FPWCSApi2Call?, String, kFPWCSCallDTMF) -> Void

  /// Digits kept for `getReceivedDTMF()`, the newest.
  static let receivedDTMFLimit = 256

  private struct Callbacks {
    var status: [kFPWCSCallStatus: UncheckedBox<CallCallback>] = [:]
    var waiters: [UUID: CheckedContinuation<Void, any Error>] = [:]
    var statusContinuations: [UUID: AsyncStream<kFPWCSCallStatus>.Continuation] = [:]
    var dtmf: UncheckedBox<DTMFCallback>?
    var receivedDTMF = ""
  }

  /// `callId`.
  let callId: String
  private let incoming: Bool
  private let uuid = UUID()
  private weak let session: FPWCSApi2Session?
  private let callbackQueue: DispatchQueue
  private let state: Mutex<CallState>
  private let callbacks = Mutex(Callbacks())
  /// Boxed: constraints and renderers are app objects the session reads on its work queue.
  private let media = Mutex(UncheckedBox(MediaOptions()))

  struct MediaOptions {
    var localConstraints: FPWCSApi2MediaConstraints?
    var remoteConstraints: FPWCSApi2MediaConstraints?
    var localDisplay: (any VideoRenderer)?
    var remoteDisplay: (any VideoRenderer)?
    var custom: [String: JSONValue]?
    /// Where the far end's audio is heard besides the playout sink (`setLoudspeakerStatus`).
    var audioOutput: MediaConnectionRequest.AudioOutput = .none
  }

  init(session: FPWCSApi2Session, state: CallState, media: MediaOptions) {
    self.callId = state.id
    self.incoming = state.incoming
    self.session = session
    self.callbackQueue = session.callbackQueue
    self.state = Mutex(state)
    self.media.withLock { $0 = UncheckedBox(media) }
  }

  deinit {
    let continuations = callbacks.withLock { $0.statusContinuations.values }
    for continuation in continuations { continuation.finish() }
  }

  // MARK: faithful API

  /// Places the outgoing call: PENDING, then `call` with the SDP offer; TRYING, RING,
  /// ESTABLISHED (or BUSY, FAILED with the reason) arrive through the callbacks.
  /// - Throws: `WCSError.invalidSessionState` unless the session is Established or Registered,
  ///   `.invalidCallState` unless the call is a NEW outgoing one, `.media` when the engine
  ///   cannot start.
  public func call() throws {
    guard let session else { throw WCSError.disconnected }
    try session.startCall(self, answering: false)
  }

  /// Answers an incoming call (NEW or RING): PENDING, then ESTABLISHED from the server. Set
  /// `setLocalConstraints`/`setRemoteDisplay` first to answer with video. Throws as `call()`.
  public func answer() throws {
    guard let session else { throw WCSError.disconnected }
    try session.startCall(self, answering: true)
  }

  /// Ends the call: CANCEL, BYE or a rejection on the SIP side; media stops at once and the
  /// server's FINISH follows. A call never sent ends at once with FINISH. Does nothing after
  /// the end.
  public func hangup() {
    session?.callInput(self) { core in core.calls.hangup(callId) }
  }

  /// Puts an ESTABLISHED call on hold (re-INVITE `a=sendonly` on the SIP side); HOLD follows.
  /// - Throws: `WCSError.invalidCallState` unless ESTABLISHED.
  public func hold() throws {
    try throwingInput { core throws(WCSError) in try core.calls.hold(callId, true) }
  }

  /// Takes a held call back (re-INVITE `a=sendrecv`); ESTABLISHED follows.
  /// - Throws: `WCSError.invalidCallState` unless HOLD.
  public func unhold() throws {
    try throwingInput { core throws(WCSError) in try core.calls.hold(callId, false) }
  }

  /// Blind transfer to `target` (a user, number or SIP URI): REFER on the SIP side. The call is
  /// held first; `getTransferStatus()` follows the server's `notifyTransferEvent`s.
  /// - Throws: `WCSError.invalidCallState` unless ESTABLISHED or HOLD, `.invalidArgument` for an
  ///   empty target.
  public func transfer(_ target: String) throws {
    try throwingInput { core throws(WCSError) in try core.calls.transfer(callId, target: target) }
  }

  /// Sends DTMF digits (`0-9 * # A-D`, at most 64): RFC 4733 telephone-events
  /// (`.fpwcsCallDTMFRFC2833`) or SIP INFO, generated by the gateway.
  /// - Throws: `WCSError.invalidArgument` for other characters, `.invalidCallState` unless
  ///   ESTABLISHED.
  public func sendDTMF(_ digits: String, type: kFPWCSCallDTMF) throws {
    try throwingInput { core throws(WCSError) in
      try core.calls.sendDTMF(callId, digits: digits, type: type)
    }
  }

  /// Mutes the microphone (silence goes out).
  public func muteAudio() { setMuted(audio: true, true) }
  /// Unmutes the microphone.
  public func unmuteAudio() { setMuted(audio: true, false) }
  /// Mutes the camera.
  public func muteVideo() { setMuted(audio: false, true) }
  /// Unmutes the camera.
  public func unmuteVideo() { setMuted(audio: false, false) }
  /// Whether the microphone is muted.
  public func isAudioMuted() -> Bool { state.withLock { $0.localAudioMuted } }
  /// Whether the camera is muted.
  public func isVideoMuted() -> Bool { state.withLock { $0.localVideoMuted } }

  /// Moves a video call to the next camera; nothing happens without one.
  public func switchCamera() {
    session?.callConnection(self).map { try? $0.switchCamera() }
  }

  /// Plays the far end's audio on the default sound output (`true`) or stops playing it there
  /// (`false`): the Linux mapping of the iOS loudspeaker switch, as on a played stream. Before
  /// `call()`/`answer()` the choice is remembered; afterwards the device is opened at once.
  /// - Throws: `WCSError.media(.audioOutputUnavailable(reason))` when the device cannot be
  ///   opened (the call goes on without it).
  public func setLoudspeakerStatus(_ enable: Bool) throws {
    let output: MediaConnectionRequest.AudioOutput = enable ? .defaultDevice : .none
    changeMedia { $0.audioOutput = output }
    guard let connection = session?.callConnection(self) else { return }
    do throws(MediaBackendError) {
      try connection.setAudioOutput(output)
    } catch {
      throw WCSError.media(error)
    }
  }

  /// Sets the callback for one status, replacing an earlier one. Returns self.
  @discardableResult
  public func on(_ status: kFPWCSCallStatus, callback: @escaping CallCallback) -> FPWCSApi2Call {
    callbacks.withLock { $0.status[status] = UncheckedBox(callback) }
    return self
  }

  /// Sets the callback for DTMF from the far end (Linux addition; WCS documents no such
  /// event): it fires once per key press, in order, on the callback queue, with the digit and
  /// whether it came as an RFC 4733 telephone-event or a SIP INFO. Replaces an earlier one.
  /// Returns self.
  @discardableResult
  public func onDTMF(_ callback: @escaping DTMFCallback) -> FPWCSApi2Call {
    callbacks.withLock { $0.dtmf = UncheckedBox(callback) }
    return self
  }

  /// Every DTMF digit the far end pressed so far, in order (the last 256); Linux addition.
  public func getReceivedDTMF() -> String { callbacks.withLock { $0.receivedDTMF } }

  /// `callId`.
  public func getId() -> String { callId }
  /// A UUID for CallKit-style bookkeeping (`getUuid`; `FPWCSApi2Session.getCallByUUID`).
  public func getUuid() -> UUID { uuid }
  /// Current status.
  public func getStatus() -> kFPWCSCallStatus { state.withLock { $0.status } }
  /// Whether the server offered this call (an incoming SIP INVITE).
  public func isIncoming() -> Bool { incoming }
  /// The caller: the remote party of an incoming call, the own SIP login of an outgoing one.
  public func getCaller() -> String { state.withLock { $0.caller } }
  /// The callee: the dialled party, or the own login for an incoming call.
  public func getCallee() -> String { state.withLock { $0.callee } }
  /// The display name (`visibleName`) the call carries.
  public func getVisibleName() -> String? { state.withLock { $0.visibleName } }
  /// `hasVideo` (Linux addition): for an incoming call, whether the caller's offer has video
  /// the gateway can bridge (VP8), also shown as `getRemoteConstraints()?.video`; for an
  /// outgoing one, whether the call asked for video.
  public func hasVideo() -> Bool { state.withLock { $0.hasVideo } }
  /// The last reason text (`info`, e.g. `Normal call clearing`, `Busy Here`), Linux addition.
  public func getInfo() -> String? { state.withLock { $0.info } }
  /// The last SIP response code the server reported (`sipStatus`), 0 when none; Linux addition.
  public func getSipStatus() -> Int { state.withLock { $0.sipStatus } }
  /// The transfer's status (ACCEPTED, TRYING, COMPLETED, FAILED) once `transfer` was asked.
  public func getTransferStatus() -> String? { state.withLock { $0.transferStatus } }
  /// The constraints media is sent with.
  public func getLocalConstraints() -> FPWCSApi2MediaConstraints? {
    mediaOptions.localConstraints
  }
  /// The constraints asked from the other side.
  public func getRemoteConstraints() -> FPWCSApi2MediaConstraints? {
    mediaOptions.remoteConstraints
  }
  /// Sets the constraints of an incoming call before `answer()`.
  public func setLocalConstraints(_ constraints: FPWCSApi2MediaConstraints?) {
    changeMedia { $0.localConstraints = constraints }
  }
  /// Sets the remote constraints before `answer()`.
  public func setRemoteConstraints(_ constraints: FPWCSApi2MediaConstraints?) {
    changeMedia { $0.remoteConstraints = constraints }
  }
  /// Sets the local preview before `call()`/`answer()`.
  public func setLocalDisplay(_ display: (any VideoRenderer)?) {
    changeMedia { $0.localDisplay = display }
  }
  /// Sets the remote video output before `call()`/`answer()`.
  public func setRemoteDisplay(_ display: (any VideoRenderer)?) {
    changeMedia { $0.remoteDisplay = display }
  }

  // MARK: Swift-native additions

  /// Places (outgoing) or answers (incoming) the call and returns once ESTABLISHED.
  /// - Throws: `WCSError.callEnded` with BUSY, FAILED (and the SIP reason) or FINISH when the
  ///   call ends first; what `call()`/`answer()` throw.
  public func connect() async throws {
    let key = UUID()
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      callbacks.withLock { $0.waiters[key] = continuation }
      do {
        if isIncoming() { try answer() } else { try call() }
      } catch {
        if let waiter = callbacks.withLock({ $0.waiters.removeValue(forKey: key) }) {
          waiter.resume(throwing: error)
        }
      }
    }
  }

  /// Every status from now on, in order; finishes after the terminal one (BUSY, FAILED, FINISH).
  public var statusUpdates: AsyncStream<kFPWCSCallStatus> {
    let (stream, continuation) = AsyncStream.makeStream(of: kFPWCSCallStatus.self)
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

  // MARK: internals (session work queue)

  /// The default constraints of a call: audio only.
  static func audioOnly() -> FPWCSApi2MediaConstraints {
    let constraints = FPWCSApi2MediaConstraints()
    constraints.audio = FPWCSApi2AudioConstraints()
    return constraints
  }

  var mediaOptions: MediaOptions { media.withLock { $0.value } }

  private func changeMedia(_ body: (inout MediaOptions) -> Void) {
    media.withLock { box in
      var options = box.value
      body(&options)
      box = UncheckedBox(options)
    }
  }

  func update(_ newState: CallState) {
    state.withLock { $0 = newState }
  }

  func deliverStatus(_ status: kFPWCSCallStatus, state newState: CallState) {
    update(newState)
    let terminal = status.isTerminal
    let (callback, continuations, waiters) = callbacks.withLock { c in
      let continuations = Array(c.statusContinuations.values)
      if terminal { c.statusContinuations = [:] }
      var waiters: [CheckedContinuation<Void, any Error>] = []
      if status == .fpwcsCallStatusEstablished || terminal {
        waiters = Array(c.waiters.values)
        c.waiters = [:]
      }
      return (c.status[status], continuations, waiters)
    }
    for continuation in continuations {
      continuation.yield(status)
      if terminal { continuation.finish() }
    }
    for waiter in waiters {
      if terminal {
        waiter.resume(throwing: WCSError.callEnded(status, info: newState.info))
      } else {
        waiter.resume()
      }
    }
    // Strong capture: a call that just ended may have no other owner.
    callbackQueue.async { callback?.value(self) }
  }

  func deliverDTMF(_ digits: String, type: kFPWCSCallDTMF) {
    let callback = callbacks.withLock { c in
      c.receivedDTMF = String((c.receivedDTMF + digits).suffix(Self.receivedDTMFLimit))
      return c.dtmf
    }
    callbackQueue.async { callback?.value(self, digits, type) }
  }

  private func setMuted(audio: Bool, _ muted: Bool) {
    session?.callInput(self) { core in core.calls.setMuted(callId, audio: audio, muted: muted) }
  }

  private func throwingInput(_ body: (SessionCore) throws(WCSError) -> [CallEffect])
    throws(WCSError)
  {
    guard let session else { throw .disconnected }
    try session.callThrowingInput(self, body)
  }
}
