import Foundation
import WCSTransport

/// The client side of WCS SIP calls (wcs-rooms-and-calls.md §B.3–§B.10), Sans-I/O: inputs are
/// API calls, media results and server messages; outputs are `CallEffect`s in order. Owned by
/// `SessionCore` and confined to the session's work queue.
///
/// The server decides the status (§B.5: every call message is dispatched on its `status`, not
/// its name); the client sets only NEW, PENDING and local failures.
struct CallTable {
  private(set) var calls: [String: CallState] = [:]
  private(set) var order: [String] = []
  /// Server offers (`setRemoteSDP [id, sdp, false]`) that came before their
  /// `notifyIncomingCall` (§B.7: the offer comes first), oldest first.
  private(set) var pendingOffers: [(id: String, sdp: String)] = []

  /// Live calls at most; a further incoming call is hung up at once.
  static let callLimit = 32
  /// Unclaimed server offers kept.
  static let pendingOfferLimit = 16
  /// Digits in one `sendDTMF`.
  static let dtmfDigitLimit = 64
  /// Characters of a callee, caller, visible name or transfer target.
  static let partyLimit = 256

  /// Ids of the live calls, in creation order.
  var ids: [String] { order.filter { calls[$0] != nil } }

  func contains(_ id: String) -> Bool { calls[id] != nil }

  // MARK: API inputs

  /// `createCall`: a NEW outgoing call. Nothing is sent.
  /// - Throws: `.invalidOptions` for an empty callee, `.invalidOption` for one over
  ///   `partyLimit` characters or the call limit reached.
  mutating func create(id: String, caller: String, request: CallRequest) throws(WCSError) {
    let callee = request.callee.trimmingCharacters(in: .whitespaces)
    guard !callee.isEmpty else { throw .invalidOptions("callee must be provided") }
    guard callee.count <= Self.partyLimit else {
      throw .invalidOption(field: "callee", reason: "is over \(Self.partyLimit) characters")
    }
    if let name = request.visibleName, name.count > Self.partyLimit {
      throw .invalidOption(field: "visibleName", reason: "is over \(Self.partyLimit) characters")
    }
    guard ids.count < Self.callLimit else {
      throw .invalidOption(field: "callee", reason: "\(Self.callLimit) calls are already live")
    }
    var state = CallState(id: id, incoming: false, caller: caller, callee: callee)
    state.visibleName = request.visibleName
    state.hasAudio = request.hasAudio
    state.hasVideo = request.hasVideo
    state.request = request
    calls[id] = state
    order.append(id)
  }

  /// `call()`: PENDING, then the media offer is made; `call` goes out in `offerCreated`.
  mutating func call(_ id: String) throws(WCSError) -> [CallEffect] {
    guard var state = calls[id] else {
      throw .invalidCallState(.fpwcsCallStatusFailed, operation: "call")
    }
    guard !state.incoming, state.status == .fpwcsCallStatusNew else {
      throw .invalidCallState(state.status, operation: "call")
    }
    state.status = .fpwcsCallStatusPending
    calls[id] = state
    return [.status(.fpwcsCallStatusPending, state), .createOffer(callId: id)]
  }

  /// `answer()` of an incoming call in NEW or RING: PENDING, then the media offer.
  ///
  /// Linux: the media engine makes offers only, so `answer` carries the client's offer and the
  /// server's answer comes back as `setRemoteSDP [callId, sdp, true]` (the local server's
  /// gateway does this; a WCS expecting an answer to its own offer refuses it).
  mutating func answer(_ id: String, request: CallRequest) throws(WCSError) -> [CallEffect] {
    guard var state = calls[id] else {
      throw .invalidCallState(.fpwcsCallStatusFailed, operation: "answer")
    }
    guard state.incoming,
      state.status == .fpwcsCallStatusNew || state.status == .fpwcsCallStatusRing
    else { throw .invalidCallState(state.status, operation: "answer") }
    state.request = request
    state.hasAudio = request.hasAudio
    state.hasVideo = request.hasVideo
    state.status = .fpwcsCallStatusPending
    calls[id] = state
    return [.status(.fpwcsCallStatusPending, state), .createOffer(callId: id)]
  }

  /// The media offer is ready (or failed): `call`/`answer` goes out, or the call fails locally
  /// (`Local error: …`, as the Web SDK, §B.4).
  mutating func offerCreated(
    _ id: String, result: Result<String, MediaOfferError>, ownLogin: String
  ) -> [CallEffect] {
    guard var state = calls[id], state.status == .fpwcsCallStatusPending, !state.offerCreated
    else { return [] }
    switch result {
    case .failure(let error):
      return finish(&state, .fpwcsCallStatusFailed, info: "Local error: \(error.text)")
    case .success(let sdp):
      state.offerCreated = true
      state.requestSent = true
      var effects: [CallEffect] = [
        .send(
          state.incoming ? Self.answerMessage(state, sdp, ownLogin) : Self.callMessage(state, sdp))
      ]
      if let answer = state.bufferedAnswer {
        state.bufferedAnswer = nil
        state.answerApplied = true
        effects.append(.applyAnswer(callId: id, sdp: answer))
      }
      calls[id] = state
      return effects
    }
  }

  /// `hangup()`: tells the server whenever `call`/`answer` went out or the call is incoming (not
  /// the Web SDK's silent NEW/PENDING cases, §B.4), releases media at once and waits for the
  /// server's FINISH. A call never sent ends locally with FINISH.
  mutating func hangup(_ id: String) -> [CallEffect] {
    guard var state = calls[id] else { return [] }
    if state.requestSent || state.incoming {
      return [.send(Self.idMessage("hangup", id)), .releaseMedia(callId: id)]
    }
    return finish(&state, .fpwcsCallStatusFinish, info: "Normal call clearing")
  }

  /// `hold()` (ESTABLISHED) or `unhold()` (HOLD); the server's HOLD / ESTABLISHED follows.
  /// `forTransfer` adds `holdForTransfer: true` (§B.8).
  mutating func hold(_ id: String, _ on: Bool, forTransfer: Bool = false) throws(WCSError)
    -> [CallEffect]
  {
    let operation = on ? "hold" : "unhold"
    guard let state = calls[id] else {
      throw .invalidCallState(.fpwcsCallStatusFinish, operation: operation)
    }
    let allowed =
      on ? state.status == .fpwcsCallStatusEstablished : state.status == .fpwcsCallStatusHold
    guard allowed else { throw .invalidCallState(state.status, operation: operation) }
    var extra: [String: JSONValue] = [:]
    if forTransfer { extra["holdForTransfer"] = true }
    return [.send(Self.idMessage(operation, id, extra))]
  }

  /// `transfer(_:)`: a blind transfer (REFER on the SIP side): `hold` with `holdForTransfer`
  /// when still ESTABLISHED, then `transfer {callId, target}`; `notifyTransferEvent` reports it.
  mutating func transfer(_ id: String, target: String) throws(WCSError) -> [CallEffect] {
    let target = target.trimmingCharacters(in: .whitespaces)
    guard !target.isEmpty, target.count <= Self.partyLimit else {
      throw .invalidArgument("transfer target must be 1...\(Self.partyLimit) characters")
    }
    guard let state = calls[id],
      state.status == .fpwcsCallStatusEstablished || state.status == .fpwcsCallStatusHold
    else {
      throw .invalidCallState(calls[id]?.status ?? .fpwcsCallStatusFinish, operation: "transfer")
    }
    var effects: [CallEffect] = []
    if state.status == .fpwcsCallStatusEstablished {
      effects += try hold(id, true, forTransfer: true)
    }
    effects.append(.send(Self.idMessage("transfer", id, ["target": .string(target)])))
    return effects
  }

  /// `sendDTMF(_:type:)` while ESTABLISHED: `sendDtmf {callId, type, dtmf}`; the gateway sends
  /// RFC 4733 telephone-events or SIP INFO (§B.7).
  /// - Throws: `.invalidArgument` for digits outside `0-9 * # A-D` or more than
  ///   `dtmfDigitLimit` of them; `.invalidCallState` unless ESTABLISHED.
  mutating func sendDTMF(_ id: String, digits: String, type: kFPWCSCallDTMF) throws(WCSError)
    -> [CallEffect]
  {
    let allowed = Set("0123456789*#ABCDabcd")
    guard !digits.isEmpty, digits.count <= Self.dtmfDigitLimit, digits.allSatisfy(allowed.contains)
    else {
      throw .invalidArgument(
        "DTMF must be 1...\(Self.dtmfDigitLimit) of 0-9 * # A-D, got '\(digits.prefix(80))'")
    }
    guard let state = calls[id], state.status == .fpwcsCallStatusEstablished else {
      throw .invalidCallState(calls[id]?.status ?? .fpwcsCallStatusFinish, operation: "sendDTMF")
    }
    let typeName: String
    switch type {
    case .fpwcsCallDTMFRFC2833: typeName = "RFC2833"
    case .fpwcsCallDTMFInfo: typeName = "INFO"
    case .fpwcsCallDTMFInfoRelay: typeName = "INFO_RELAY"
    }
    return [
      .send(
        Self.idMessage(
          "sendDtmf", id, ["type": .string(typeName), "dtmf": .string(digits.uppercased())]))
    ]
  }

  /// Mute calls: local tracks only (the SIP side hears silence).
  mutating func setMuted(_ id: String, audio: Bool, muted: Bool) -> [CallEffect] {
    guard var state = calls[id], !state.status.isTerminal else { return [] }
    if audio { state.localAudioMuted = muted } else { state.localVideoMuted = muted }
    calls[id] = state
    return [.updated(state), .setTrackEnabled(callId: id, audio: audio, enabled: !muted)]
  }

  /// The call's media connection failed: the server is told (`hangup`) and the call fails
  /// locally with `Local error: <reason>`.
  mutating func mediaFailed(_ id: String, reason: String) -> [CallEffect] {
    guard var state = calls[id] else { return [] }
    let hangup: [CallEffect] = state.requestSent ? [.send(Self.idMessage("hangup", id))] : []
    return hangup + finish(&state, .fpwcsCallStatusFailed, info: "Local error: \(reason)")
  }

  /// The session ended: every live call fails locally (`Session disconnected`).
  mutating func sessionEnded() -> [CallEffect] {
    var effects: [CallEffect] = []
    for id in ids {
      guard var state = calls[id] else { continue }
      effects += finish(&state, .fpwcsCallStatusFailed, info: "Session disconnected")
    }
    pendingOffers.removeAll()
    return effects
  }

  // MARK: server inputs

  /// Names of the S→C call messages (§B.5).
  static let statusMessages: Set<String> = [
    "notifyTryingResponse", "ring", "sessionProgress", "talk", "hold", "busy", "finish",
    "callbackHold",
  ]

  /// `setRemoteSDP` for a call: the server's answer (outgoing, or incoming on Linux, see
  /// `answer`), or its offer for an incoming call. Returns `nil` when `id` is no call and the
  /// message is not an offer (then it belongs to a stream).
  mutating func remoteSDP(id: String, sdp: String, initiator: Bool?) -> [CallEffect]? {
    guard var state = calls[id] else {
      guard initiator == false else { return nil }
      pendingOffers.removeAll { $0.id == id }
      pendingOffers.append((id, sdp))
      if pendingOffers.count > Self.pendingOfferLimit { pendingOffers.removeFirst() }
      return []
    }
    guard !state.status.isTerminal else { return [] }
    if state.incoming, !state.requestSent {
      state.remoteOffer = sdp
      calls[id] = state
      return []
    }
    guard !state.answerApplied, state.bufferedAnswer == nil else { return [] }
    guard state.offerCreated else {
      state.bufferedAnswer = sdp
      calls[id] = state
      return []
    }
    state.answerApplied = true
    calls[id] = state
    return [.applyAnswer(callId: id, sdp: sdp)]
  }

  /// `notifyIncomingCall`: a NEW incoming call (RING when the object says so), with the offer
  /// that came before it. Over `callLimit` the call is hung up at once.
  mutating func incoming(_ object: [String: JSONValue]) -> [CallEffect] {
    guard let id = object["callId"]?.stringValue, !id.isEmpty, id.count <= Self.partyLimit,
      calls[id] == nil
    else { return [] }
    guard ids.count < Self.callLimit else { return [.send(Self.idMessage("hangup", id))] }
    var state = CallState(
      id: id, incoming: true, caller: Self.party(object["caller"]),
      callee: Self.party(object["callee"]))
    state.visibleName = object["visibleName"]?.stringValue.map {
      String($0.prefix(Self.partyLimit))
    }
    state.hasAudio = object["hasAudio"]?.boolValue ?? true
    state.hasVideo = object["hasVideo"]?.boolValue ?? false
    state.sipStatus = object["sipStatus"]?.intValue ?? 0
    if let index = pendingOffers.firstIndex(where: { $0.id == id }) {
      state.remoteOffer = pendingOffers.remove(at: index).sdp
    }
    if object["status"]?.stringValue?.uppercased() == "RING" { state.status = .fpwcsCallStatusRing }
    calls[id] = state
    order.append(id)
    order.removeAll { calls[$0] == nil }
    return [.incoming(state)]
  }

  /// A call status message (§B.5, §B.6): dispatched on `status`; the message name decides only
  /// when `status` is missing. `fail` with `apiMethod: "CallStatusEvent"` names the call by `id`.
  mutating func statusMessage(name: String, _ object: [String: JSONValue]) -> [CallEffect] {
    guard let id = object["callId"]?.stringValue ?? object["id"]?.stringValue,
      var state = calls[id], !state.status.isTerminal
    else { return [] }
    let status =
      object["status"]?.stringValue.flatMap(FPWCSApi2Model.callStatus(from:))
      ?? Self.defaultStatus(name)
    guard let status, status != .fpwcsCallStatusNew, status != .fpwcsCallStatusPending else {
      return []
    }
    if let code = object["sipStatus"]?.intValue { state.sipStatus = code }
    let info = object["info"]?.stringValue.map { String($0.prefix(1024)) }
    if status.isTerminal { return finish(&state, status, info: info) }
    if let info { state.info = info }
    guard status != state.status else {
      calls[id] = state
      return [.updated(state)]
    }
    state.status = status
    calls[id] = state
    return [.status(status, state)]
  }

  /// `notifyTransferEvent {callId, status}`: the transfer's progress (ACCEPTED, TRYING,
  /// COMPLETED, FAILED); the call's own FINISH follows from the server.
  mutating func transferEvent(_ object: [String: JSONValue]) -> [CallEffect] {
    guard let id = object["callId"]?.stringValue, var state = calls[id],
      let status = object["status"]?.stringValue
    else { return [] }
    state.transferStatus = String(status.prefix(32))
    calls[id] = state
    return [.updated(state)]
  }

  /// `notifyDtmf {callId, dtmf, type}`: digits the SIP side pressed (RFC 4733 events or SIP
  /// INFO, reported once per key press by the gateway). Only `0-9 * # A-D` are kept, at most
  /// `dtmfDigitLimit` a message; a call that is not ESTABLISHED or HOLD gets none.
  mutating func dtmfEvent(_ object: [String: JSONValue]) -> [CallEffect] {
    guard let id = object["callId"]?.stringValue, let state = calls[id],
      state.status == .fpwcsCallStatusEstablished || state.status == .fpwcsCallStatusHold
    else { return [] }
    let digits = String(
      (object["dtmf"]?.stringValue ?? "").uppercased().filter { "0123456789*#ABCD".contains($0) }
        .prefix(Self.dtmfDigitLimit))
    guard !digits.isEmpty else { return [] }
    let type: kFPWCSCallDTMF =
      object["type"]?.stringValue?.uppercased().hasPrefix("INFO") == true
      ? .fpwcsCallDTMFInfo : .fpwcsCallDTMFRFC2833
    return [.dtmfReceived(callId: id, digits: digits, type: type)]
  }

  // MARK: helpers

  /// Terminal status: media released, the call forgotten, its callback fires.
  private mutating func finish(_ state: inout CallState, _ status: kFPWCSCallStatus, info: String?)
    -> [CallEffect]
  {
    state.status = status
    if let info { state.info = info }
    calls[state.id] = nil
    order.removeAll { $0 == state.id }
    return [.releaseMedia(callId: state.id), .status(status, state)]
  }

  private static func defaultStatus(_ name: String) -> kFPWCSCallStatus? {
    switch name {
    case "notifyTryingResponse": return .fpwcsCallStatusTrying
    case "ring": return .fpwcsCallStatusRing
    case "sessionProgress": return .fpwcsCallStatusSessionProgress
    case "talk": return .fpwcsCallStatusEstablished
    case "hold": return .fpwcsCallStatusHold
    case "busy": return .fpwcsCallStatusBusy
    case "finish": return .fpwcsCallStatusFinish
    case "fail": return .fpwcsCallStatusFailed
    default: return nil
    }
  }

  private static func party(_ value: JSONValue?) -> String {
    String((value?.stringValue ?? "").prefix(partyLimit))
  }

  static func idMessage(_ name: String, _ id: String, _ extra: [String: JSONValue] = [:])
    -> WCSMessage
  {
    var object: [String: JSONValue] = ["callId": .string(id)]
    for (key, value) in extra { object[key] = value }
    return WCSMessage(name: name, data: [.object(object)])
  }

  /// `call` (§B.4): the offer and the call's fields; optional fields only when set (§B.12a).
  static func callMessage(_ state: CallState, _ sdp: String) -> WCSMessage {
    var object = common(state, sdp)
    object["incoming"] = false
    object["caller"] = .string(state.caller)
    object["callee"] = .string(state.callee)
    object["visibleName"] = .string(state.visibleName ?? state.caller)
    if let parameters = state.request?.inviteParameters {
      object["inviteParameters"] = .object(parameters.mapValues { .string($0) })
    }
    return WCSMessage(name: "call", data: [.object(object)])
  }

  /// `answer` (§B.4, §B.12a): caller and callee are both the own login, `hasVideo` always true.
  static func answerMessage(_ state: CallState, _ sdp: String, _ ownLogin: String) -> WCSMessage {
    var object = common(state, sdp)
    object["incoming"] = true
    object["hasVideo"] = true
    object["caller"] = .string(ownLogin)
    object["callee"] = .string(ownLogin)
    return WCSMessage(name: "answer", data: [.object(object)])
  }

  private static func common(_ state: CallState, _ sdp: String) -> [String: JSONValue] {
    var object: [String: JSONValue] = [
      "callId": .string(state.id), "hasAudio": .bool(state.hasAudio),
      "hasVideo": .bool(state.hasVideo), "status": "PENDING", "mediaProvider": "WebRTC",
      "sdp": .string(sdp),
    ]
    if let custom = state.request?.custom { object["custom"] = .object(custom) }
    if let lines = state.request?.sipSDP { object["sipSDP"] = .array(lines.map { .string($0) }) }
    return object
  }
}

/// Why a call's media offer could not be made (the media engine's error as text).
struct MediaOfferError: Error, Sendable {
  let text: String
}
