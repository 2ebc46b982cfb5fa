import Dispatch
import Foundation
import WCSMediaSeam
import WCSTransport

/// SIP calls of a session (wcs-rooms-and-calls.md §B.9): creating, looking up, incoming calls,
/// and carrying out the call core's effects on the work queue.
extension FPWCSApi2Session {
  /// Incoming-call callback (`IncomingCallCallback`): receives the new call (status NEW or RING).
  public typealias IncomingCallCallback = (FPWCSApi2Call?) -> Void

  /// Creates an outgoing call (status NEW); nothing is sent until `call()`.
  /// - Throws: `WCSError.invalidOptions` without a callee, `.invalidOption` for a callee or
  ///   visible name over 256 characters or with 32 calls live, `.invalidArgument` for non-JSON
  ///   `custom`.
  public func createCall(_ options: FPWCSApi2CallOptions) throws -> FPWCSApi2Call {
    let local = options.localConstraints ?? FPWCSApi2Call.audioOnly()
    let remote = options.remoteConstraints ?? local
    let custom = try options.custom.map { try JSONConversion.object($0, path: "custom") }
    let request = CallRequest(
      callee: options.callee ?? "", visibleName: options.visibleName,
      hasAudio: local.audio != nil || remote.audio != nil,
      hasVideo: local.video != nil || remote.video != nil, custom: custom,
      inviteParameters: options.inviteParameters, sipSDP: nil)
    let id = UUID().uuidString.lowercased()
    let media = FPWCSApi2Call.MediaOptions(
      localConstraints: local, remoteConstraints: remote, localDisplay: options.localDisplay,
      remoteDisplay: options.remoteDisplay, custom: custom)
    return try onWork { () throws(WCSError) in
      try core.calls.create(id: id, caller: core.ownSIPLogin, request: request)
      guard let state = core.calls.calls[id] else { throw .invalidOptions("call not created") }
      let call = FPWCSApi2Call(session: self, state: state, media: media)
      callObjects[id] = call
      return call
    }
  }

  /// Sets the callback for incoming calls (`notifyIncomingCall`), replacing an earlier one.
  /// Without one, incoming calls wait in `getCalls()` until answered or hung up.
  public func onIncomingCallCallback(_ callback: @escaping IncomingCallCallback) {
    callbacks.withLock { $0.incomingCall = UncheckedBox(callback) }
  }

  /// A live call by its `callId`.
  public func getCall(_ callId: String) -> FPWCSApi2Call? { onWork { callObjects[callId] } }

  /// A live call by its `getUuid()`.
  public func getCallByUUID(_ uuid: UUID) -> FPWCSApi2Call? {
    onWork { callObjects.values.first { $0.getUuid() == uuid } }
  }

  /// Live calls, in creation order (Linux addition).
  public func getCalls() -> [FPWCSApi2Call] {
    onWork { core.calls.ids.compactMap { callObjects[$0] } }
  }

  // MARK: called by FPWCSApi2Call

  func startCall(_ call: FPWCSApi2Call, answering: Bool) throws(WCSError) {
    try onWork { () throws(WCSError) in
      let id = call.callId
      if answering {
        let media = call.mediaOptions
        let local = media.localConstraints ?? FPWCSApi2Call.audioOnly()
        let request = CallRequest(
          callee: call.getCallee(), visibleName: nil, hasAudio: local.audio != nil,
          hasVideo: local.video != nil, custom: media.custom, inviteParameters: nil, sipSDP: nil)
        run(try core.answerCall(id, request: request))
      } else {
        run(try core.placeCall(id))
      }
    }
  }

  func callInput(_ call: FPWCSApi2Call, _ body: (SessionCore) -> [CallEffect]) {
    onWork { run(body(core).map(SessionEffect.call)) }
  }

  func callThrowingInput(
    _ call: FPWCSApi2Call, _ body: (SessionCore) throws(WCSError) -> [CallEffect]
  ) throws(WCSError) {
    try onWork { () throws(WCSError) in run(try body(core).map(SessionEffect.call)) }
  }

  func callConnection(_ call: FPWCSApi2Call) -> (any MediaConnection)? {
    onWork { callConnections[call.callId] }
  }

  // MARK: effects

  func performCall(_ effect: CallEffect) {
    switch effect {
    case .send(let message): transport?.send(WCSMessageCodec.encode(message))
    case .status(let status, let state):
      guard let call = callObjects[state.id] else { return }
      if status.isTerminal { callObjects[state.id] = nil }
      call.deliverStatus(status, state: state)
    case .updated(let state): callObjects[state.id]?.update(state)
    case .incoming(let state):
      // As on iOS, the remote constraints say what the caller offers (`hasVideo`); the app
      // sets video local constraints before `answer()` to answer with video.
      let remote = FPWCSApi2Call.audioOnly()
      if state.hasVideo { remote.video = FPWCSApi2VideoConstraints() }
      let call = FPWCSApi2Call(
        session: self, state: state,
        media: FPWCSApi2Call.MediaOptions(
          localConstraints: FPWCSApi2Call.audioOnly(), remoteConstraints: remote))
      callObjects[state.id] = call
      let callback = callbacks.withLock { $0.incomingCall }
      callbackQueue.async { callback?.value(call) }
    case .createOffer(let id): createCallOffer(id)
    case .applyAnswer(let id, let sdp):
      callConnections[id]?.setRemoteAnswer(sdp) { [weak self] result in
        guard let self, case .failure(let error) = result else { return }
        self.work.async {
          self.run(self.core.calls.mediaFailed(id, reason: "\(error)").map(SessionEffect.call))
        }
      }
    case .setTrackEnabled(let id, let audio, let enabled):
      callConnections[id]?.setTrackEnabled(audio ? .audio : .video, enabled: enabled)
    case .releaseMedia(let id): callConnections.removeValue(forKey: id)?.close()
    case .dtmfReceived(let id, let digits, let type):
      callObjects[id]?.deliverDTMF(digits, type: type)
    }
  }

  private func createCallOffer(_ id: String) {
    guard let call = callObjects[id] else { return }
    let media = call.mediaOptions
    let local = media.localConstraints ?? FPWCSApi2Call.audioOnly()
    var request = MediaRequestBuilder.connectionRequest(
      local, direction: .publish, display: media.localDisplay, transport: .fpwcsTransportUDP,
      stripCodecs: [])
    // Two-way media (sendrecv): what the far end says plays here; its video (a video call
    // whose remote constraints ask for it) goes to `remoteDisplay`.
    request.receivesToo = true
    request.remoteRenderer = media.remoteDisplay
    request.audio?.output = media.audioOutput
    // A call reaches the gateway as a stream reaches the server: the session's ICE servers
    // and policy apply.
    iceSettings.apply(to: &request)
    let connection: any MediaConnection
    do throws(MediaBackendError) {
      connection = try backend.makeConnection(request) { [weak self] state in
        guard let self, let failure = state.failure else { return }
        self.work.async {
          self.run(self.core.calls.mediaFailed(id, reason: "\(failure)").map(SessionEffect.call))
        }
      }
    } catch {
      run(core.callOfferCreated(id, result: .failure(MediaOfferError(text: "\(error)"))))
      return
    }
    callConnections[id] = connection
    connection.createOffer { [weak self] result in
      guard let self else { return }
      self.work.async {
        self.run(
          self.core.callOfferCreated(
            id, result: result.mapError { MediaOfferError(text: "\($0)") }))
      }
    }
  }
}
