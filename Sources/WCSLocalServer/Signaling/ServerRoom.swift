import WCSTransport

/// One room of the `roomApp` application (wcs-rooms-and-calls.md §A.7): its members in join
/// order. Published streams are not kept here; they are the `streams` whose `roomName` is this
/// room, so a stream that ends can never be left behind in a room.
struct ServerRoom {
  let name: String
  /// Members in join order: `STATE` lists them in that order.
  var members: [WCSConnectionID] = []
}

/// The room state of one session: the rooms it joined and its command budget.
struct RoomMembership {
  /// Joined room names, in join order.
  var rooms: [String] = []
  /// Token bucket of room commands (`WCSRoomLimits.commandBurst` / `commandsPerSecond`).
  var tokens: Double
  var refilledAt: Int64

  init(limits: WCSRoomLimits, now: Int64) {
    tokens = Double(limits.commandBurst)
    refilledAt = now
  }

  /// Takes one command token; `false` when the session is over its rate.
  mutating func takeToken(limits: WCSRoomLimits, now: Int64) -> Bool {
    let elapsed = Double(max(now - refilledAt, 0)) / 1000
    tokens = min(Double(limits.commandBurst), tokens + elapsed * Double(limits.commandsPerSecond))
    refilledAt = now
    guard tokens >= 1 else { return false }
    tokens -= 1
    return true
  }
}

/// Every room and every session's membership, owned by `WCSServerCore`.
struct RoomDirectory {
  var rooms: [String: ServerRoom] = [:]
  var memberships: [WCSConnectionID: RoomMembership] = [:]
}

/// A room command read from `sendData.payload` (§A.3).
enum RoomCommand: Equatable {
  case join(room: String)
  case leave(room: String)
  case sendMessage(room: String, to: String, text: String)

  /// Reads `{command, options}`, checking names and sizes against `limits`.
  /// - Throws: `WCSRequestError` naming the first bad field; an unknown command is
  ///   `.invalidValue(field: "command", ...)`.
  init(payload: JSONValue?, limits: WCSRoomLimits) throws(WCSRequestError) {
    guard let payload, let object = payload.objectValue else {
      throw .wrongType(field: "payload", expected: "an object")
    }
    let command = try StreamRequest.requiredString("command", in: object)
    let options: [String: JSONValue]
    switch object["options"] {
    case .object(let members)?: options = members
    case nil, .null?: throw .missingField("options")
    default: throw .wrongType(field: "options", expected: "an object")
    }
    switch command {
    case "join", "leave":
      let room = try StreamRequest.requiredString("name", in: options)
      try checkName(room, field: "options.name", maxUTF8Bytes: limits.maxRoomNameUTF8Bytes)
      self = command == "join" ? .join(room: room) : .leave(room: room)
    case "sendMessage":
      guard let config = options["roomConfig"]?.objectValue else {
        throw .missingField("options.roomConfig")
      }
      let room = try StreamRequest.requiredString("name", in: config)
      try checkName(room, field: "roomConfig.name", maxUTF8Bytes: limits.maxRoomNameUTF8Bytes)
      let to = try StreamRequest.requiredString("to", in: options)
      try checkName(to, field: "options.to", maxUTF8Bytes: limits.maxLoginUTF8Bytes)
      let text = try StreamRequest.requiredString("text", in: options)
      if text.utf8.count > limits.maxMessageUTF8Bytes {
        throw .invalidValue(
          field: "options.text",
          reason:
            "must be at most \(limits.maxMessageUTF8Bytes) UTF-8 bytes, got \(text.utf8.count)")
      }
      self = .sendMessage(room: room, to: to, text: text)
    default:
      throw .invalidValue(field: "command", reason: WCSRoomInfo.unknownCommand(command))
    }
  }
}
