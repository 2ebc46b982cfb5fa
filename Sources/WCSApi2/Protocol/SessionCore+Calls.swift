import WCSTransport

/// SIP calls inside the session state machine (wcs-rooms-and-calls.md §B): the session's status
/// gates them, its messages carry them.
extension SessionCore {
  /// The own SIP login: `sipLogin` from `getUserData` (the server's view), else the one sent.
  var ownSIPLogin: String {
    userData?["sipLogin"]?.stringValue ?? userData?["login"]?.stringValue
      ?? config.sip["sipLogin"]?.stringValue ?? ""
  }

  /// The session is up: Established, Registered, or Unregistered (its SIP registration was
  /// refused or lost; streams and calls by SIP URI go on, wcs-rooms-and-calls.md §B.2).
  var isEstablishedOrRegistered: Bool {
    status == .fpwcsSessionStatusEstablished || status == .fpwcsSessionStatusRegistered
      || status == .fpwcsSessionStatusUnregistered
  }

  /// `call()`: needs an Established (or Registered) session.
  func placeCall(_ id: String) throws(WCSError) -> [SessionEffect] {
    guard isEstablishedOrRegistered else { throw .invalidSessionState(status, operation: "call") }
    return try calls.call(id).map(SessionEffect.call)
  }

  /// `answer()`: needs an Established (or Registered) session.
  func answerCall(_ id: String, request: CallRequest) throws(WCSError) -> [SessionEffect] {
    guard isEstablishedOrRegistered else {
      throw .invalidSessionState(status, operation: "answer")
    }
    return try calls.answer(id, request: request).map(SessionEffect.call)
  }

  func callOfferCreated(_ id: String, result: Result<String, MediaOfferError>) -> [SessionEffect] {
    calls.offerCreated(id, result: result, ownLogin: ownSIPLogin).map(SessionEffect.call)
  }

  /// `setRemoteSDP` that belongs to a call (or is a server offer for one still to come); `nil`
  /// when it belongs to a stream.
  func callRemoteSDP(_ message: WCSMessage) -> [SessionEffect]? {
    guard let id = message[0]?.stringValue, let sdp = message[1]?.stringValue,
      streams[id] == nil
    else { return nil }
    return calls.remoteSDP(id: id, sdp: sdp, initiator: message[2]?.boolValue)?
      .map(SessionEffect.call)
  }

  /// Call messages (§B.5); `nil` for names that are not.
  func receiveCallMessage(_ message: WCSMessage) -> [SessionEffect]? {
    let isCall =
      CallTable.statusMessages.contains(message.name) || message.name == "notifyIncomingCall"
      || message.name == "notifyTransferEvent" || message.name == "notifyDtmf"
    guard isCall else { return nil }
    guard let object = message.argument?.objectValue else {
      return [.skipped("\(message.name) without an object")]
    }
    guard isEstablishedOrRegistered else { return [.skipped("\(message.name) before ESTABLISHED")] }
    let effects: [CallEffect]
    switch message.name {
    case "notifyIncomingCall": effects = calls.incoming(object)
    case "notifyTransferEvent": effects = calls.transferEvent(object)
    case "notifyDtmf": effects = calls.dtmfEvent(object)
    default: effects = calls.statusMessage(name: message.name, object)
    }
    return effects.isEmpty
      ? [.skipped("\(message.name) for an unknown or ended call")] : effects.map(SessionEffect.call)
  }
}
