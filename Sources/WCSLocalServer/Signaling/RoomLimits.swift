import WCSTransport

/// Bounds of the local server's room application (`roomApp`, wcs-rooms-and-calls.md §A.7).
/// The real `roomApp` backend is not public, so these are the local server's own: a command
/// outside them is answered `DataStatusEvent FAILED` with a `WCSRoomInfo` reason (or a
/// `Bad request: ...` one) and changes nothing; the session and the room's other members go on.
public struct WCSRoomLimits: Sendable, Equatable {
  /// Members one room may hold; the next `join` fails with `WCSRoomInfo.roomFull`.
  public var maxParticipantsPerRoom = 32
  /// Rooms alive at once over the server; a `join` that would create one more fails with
  /// `WCSRoomInfo.serverRoomLimitReached`. Rooms vanish when their last member leaves.
  public var maxRooms = 256
  /// Rooms one session may have joined at once (`WCSRoomInfo.tooManyRoomsInSession`).
  public var maxRoomsPerSession = 8
  /// Longest room name, in UTF-8 bytes. Room stream names are `<room>-<login>-<suffix>` and
  /// must still fit `WCSStreamRequestLimits.maxNameUTF8Bytes` (256).
  public var maxRoomNameUTF8Bytes = 96
  /// Longest login (`connection.custom.login`), in UTF-8 bytes.
  public var maxLoginUTF8Bytes = 64
  /// Longest chat `text`, in UTF-8 bytes.
  public var maxMessageUTF8Bytes = 16_384
  /// Room commands a session may send in a burst before the rate below applies.
  public var commandBurst = 100
  /// Sustained room commands per second per session; beyond it (a flood) a command fails
  /// with `WCSRoomInfo.tooManyCommands` and is not delivered.
  public var commandsPerSecond = 50

  /// All defaults.
  public init() {}
}

/// The `info` texts of room `DataStatusEvent FAILED` replies.
public enum WCSRoomInfo {
  /// The `appKey` of room sessions (§A.2).
  public static let appKey = "roomApp"
  /// `join` when the room already has `maxParticipantsPerRoom` members.
  public static let roomFull = "Room is full"
  /// `join` that would create a room beyond `maxRooms`.
  public static let serverRoomLimitReached = "Server room limit reached"
  /// `join` beyond `maxRoomsPerSession`.
  public static let tooManyRoomsInSession = "Too many rooms in this session"
  /// `join` of a room this session is in already.
  public static let alreadyJoined = "Already joined this room"
  /// `join` with a login another member of the room has.
  public static let loginInUse = "Login is already in use in this room"
  /// `join` from a session whose `connection` carried no `custom.login`.
  public static let loginMissing = "Bad request: custom.login of connection is missing"
  /// `leave`, `sendMessage` or a room `publishStream` for a room the session has not joined.
  public static let notJoined = "Not joined to this room"
  /// `sendMessage` to a login that is not a member of the room.
  public static let participantNotFound = "Participant not found"
  /// A command over the `commandsPerSecond` rate.
  public static let tooManyCommands = "Too many room commands"
  /// A room `publishStream` whose name does not start with `<room>-<login>` (§A.5).
  public static let streamNameNotInRoom = "Room stream name must start with <room>-<login>"

  /// An unknown `command`.
  static func unknownCommand(_ command: String) -> String {
    "Unknown room command: \(command.prefix(64))"
  }
}

/// A name is non-empty, at most `maxUTF8Bytes` long and has no control character (Unicode `Cc`:
/// U+0000–U+001F, U+007F–U+009F), which would corrupt logs, events and file names.
/// - Throws: `WCSRequestError.missingField` when empty, `.invalidValue` otherwise.
func checkName(_ name: String, field: String, maxUTF8Bytes: Int) throws(WCSRequestError) {
  if name.isEmpty { throw .missingField(field) }
  let bytes = name.utf8.count
  if bytes > maxUTF8Bytes {
    throw .invalidValue(
      field: field, reason: "must be at most \(maxUTF8Bytes) UTF-8 bytes, got \(bytes)")
  }
  if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
    throw .invalidValue(field: field, reason: "must not contain control characters")
  }
}
