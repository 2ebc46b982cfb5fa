import WCSTransport

/// Access control (`WCSServerHooks.authorize`): connect, publish, play, room join and call wait
/// for the application's answer, which arrives through `accessDecided(_:_:now:)`. While one
/// check of a session is open, its later messages wait too, so they keep their order.
extension WCSServerCore {
  /// Messages of one session held while a check is open; beyond it a message is answered
  /// `fail` `accessQueueFull` and dropped.
  public static let maxHeldMessagesPerSession = 64

  /// `info` of a message dropped because too many wait for an access decision.
  public static let accessQueueFull = "Too many messages waiting for access control"

  /// The access hook's answer to check `id` (`WCSServerAction.authorize`): the held message
  /// goes on as it was (`.allow`) or with the new fields (`.rewrite`), or is refused with the
  /// reason; then the session's other held messages go on. Unknown ids (the session ended)
  /// are ignored.
  public func accessDecided(_ id: Int, _ decision: WCSAccessDecision, now: Int64)
    -> [WCSServerAction]
  {
    guard let check = pendingAccessChecks.removeValue(forKey: id) else { return flush() }
    let connection = check.connection
    guard sessions[connection] != nil else { return flush() }
    switch decision {
    case .allow:
      process(connection, check.message, now: now)
      afterAllowed(connection, check.request)
    case .rewrite(let fields):
      process(connection, Self.rewritten(check.message, check.request.action, fields), now: now)
      afterAllowed(connection, check.request)
    case .refuse(let reason):
      refuse(connection, check.message, check.request.action, reason: reason)
    }
    var held = heldMessages.removeValue(forKey: connection) ?? []
    while !held.isEmpty, sessions[connection] != nil {
      let message = held.removeFirst()
      receive(connection, message, now: now)
      if heldMessages[connection] != nil {
        // Another check opened: the rest waits behind it, in order.
        heldMessages[connection, default: []].append(contentsOf: held)
        break
      }
    }
    return flush()
  }

  /// One decoded message: held behind an open check, sent to the access hook, or served.
  func receive(_ id: WCSConnectionID, _ message: WCSMessage, now: Int64) {
    if heldMessages[id] != nil {
      if heldMessages[id, default: []].count >= Self.maxHeldMessagesPerSession {
        log("session \(id): \(message.name) dropped: \(Self.accessQueueFull)")
        send(id, ServerMessages.fail(info: Self.accessQueueFull))
      } else {
        heldMessages[id, default: []].append(message)
      }
      return
    }
    guard let request = accessRequest(id, message) else {
      process(id, message, now: now)
      return
    }
    let checkId = nextAccessCheckId
    nextAccessCheckId += 1
    pendingAccessChecks[checkId] = PendingAccessCheck(
      connection: id, message: message, request: request)
    heldMessages[id] = []
    actions.append(.authorize(WCSAccessCheck(id: checkId, request: request)))
  }

  /// Forgets the session's open checks and held messages.
  func accessSessionEnded(_ id: WCSConnectionID) {
    heldMessages[id] = nil
    pendingAccessChecks = pendingAccessChecks.filter { $0.value.connection != id }
  }

  /// The question for `message`, `nil` when it needs none (no hook, another message, or a
  /// malformed one that the normal path refuses with its own error).
  private func accessRequest(_ id: WCSConnectionID, _ message: WCSMessage) -> WCSAccessRequest? {
    guard configuration.hooks.authorize != nil, let session = sessions[id] else { return nil }
    let object = message.argument?.objectValue
    let action: WCSAccessAction
    var fields = object ?? [:]
    switch message.name {
    case "connection":
      guard !session.isEstablished, message.argument == nil || object != nil else { return nil }
      var request = WCSAccessRequest(
        action: .connect, remoteAddress: session.remoteAddress,
        appKey: fields["appKey"]?.stringValue ?? "",
        login: fields["custom"]?["login"]?.stringValue ?? fields["sipLogin"]?.stringValue ?? "",
        fields: fields)
      request.token = fields["custom"]?["token"]?.stringValue
      return request
    case "publishStream", "playStream", "call":
      guard session.isEstablished, object != nil else { return nil }
      action =
        message.name == "call" ? .call : message.name == "publishStream" ? .publish : .play
    case "sendData":
      guard session.isEstablished, isRoomSession(id),
        let payload = object?["payload"]?.objectValue, payload["command"]?.stringValue == "join"
      else { return nil }
      action = .roomJoin
      fields = payload
    default:
      return nil
    }
    return WCSAccessRequest(
      action: action, remoteAddress: session.remoteAddress, appKey: session.appKey,
      login: session.login, token: session.accessToken, fields: fields)
  }

  /// The session keeps the token its `connection` carried, for the questions about its later
  /// messages (a rewrite may have removed it from what the core stores).
  private func afterAllowed(_ id: WCSConnectionID, _ request: WCSAccessRequest) {
    if request.action == .connect { sessions[id]?.accessToken = request.token }
  }

  /// `message` with `fields` in place of what the hook was asked about.
  private static func rewritten(
    _ message: WCSMessage, _ action: WCSAccessAction, _ fields: [String: JSONValue]
  ) -> WCSMessage {
    var message = message
    if message.data.isEmpty { message.data = [.null] }
    if action == .roomJoin, var object = message.data[0].objectValue {
      object["payload"] = .object(fields)
      message.data[0] = .object(object)
    } else {
      message.data[0] = .object(fields)
    }
    return message
  }

  /// Answers a refused message the way its kind fails (`WCSAccessDecision.refuse`).
  private func refuse(
    _ id: WCSConnectionID, _ message: WCSMessage, _ action: WCSAccessAction, reason: String
  ) {
    log("session \(id): \(message.name) refused by access control: \(reason)")
    let object = message.argument?.objectValue ?? [:]
    switch action {
    case .connect:
      send(id, ServerMessages.fail(info: reason))
      // A close reason has at most 123 bytes (RFC 6455 §5.5).
      var closeReason = reason
      while closeReason.utf8.count > 123 { closeReason.removeLast() }
      actions.append(.close(id, code: WCSCloseCode.accessRefused, reason: closeReason))
      sessions.removeValue(forKey: id)
      accessSessionEnded(id)
    case .publish, .play:
      let mediaSessionId = (try? StreamRequest.mediaSessionId(of: object)) ?? nil
      send(
        id,
        ServerMessages.streamStatus(
          rejectedStreamObject(
            object, mediaSessionId: mediaSessionId, published: action == .publish, info: reason)))
    case .roomJoin:
      send(
        id,
        ServerMessages.text(
          "DataStatusEvent",
          [
            [
              "operationId": object["operationId"] ?? .null, "status": "FAILED",
              "info": .string(reason),
            ]
          ]))
    case .call, .recordDownload:
      send(id, ServerMessages.fail(info: reason))
    }
  }
}

/// A message waiting for the access hook.
struct PendingAccessCheck {
  let connection: WCSConnectionID
  let message: WCSMessage
  let request: WCSAccessRequest
}
