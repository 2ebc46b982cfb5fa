import WCSTransport

/// A room event of `roomApp` (`OnDataEvent` payload `{roomName, name, info}`,
/// wcs-rooms-and-calls.md §A.4), read and bounded.
enum RoomEvent: Equatable {
  /// `STATE`: the other members, each with the streams it publishes (possibly none).
  case state(room: String, members: [RoomRoster.Member])
  case joined(room: String, login: String)
  case left(room: String, login: String)
  case published(room: String, login: String, stream: String)
  /// `UNPUBLISHED`, or the `FAILED` stream event (§A.4: both remove the stream).
  case unpublished(room: String, login: String, stream: String)
  case message(room: String, from: String, to: String?, text: String)

  /// The room the event is about.
  var room: String {
    switch self {
    case .state(let room, _), .joined(let room, _), .left(let room, _),
      .published(let room, _, _), .unpublished(let room, _, _), .message(let room, _, _, _):
      return room
    }
  }

  /// Upper bounds on what a server may send; beyond them the event is skipped, not truncated.
  enum Limits {
    /// `STATE` entries (the real server's rooms are far smaller).
    static let maxStateEntries = 4096
    /// A login, room or stream name, in UTF-8 bytes.
    static let maxNameUTF8Bytes = 1024
    /// A chat message, in UTF-8 bytes.
    static let maxTextUTF8Bytes = 1 << 20
    /// Streams one member may have in `STATE`.
    static let maxStreamsPerMember = 64
  }

  /// Reads `payload`.
  /// - Returns: the event, or the reason it is skipped (`.failure`): no `roomName`, an unknown
  ///   `name`, a wrong shape, or a value over `Limits`.
  static func parse(_ payload: JSONValue?) -> Result<RoomEvent, RoomEventSkipped> {
    guard let object = payload?.objectValue else {
      return .failure(.init("payload is not an object"))
    }
    guard let room = name(object["roomName"]) else {
      return .failure(.init("no roomName"))
    }
    let info = object["info"]
    let kind = object["name"]?.stringValue ?? ""
    switch kind {
    case "STATE":
      guard case .array(let entries)? = info else {
        return .failure(.init("STATE info is not an array"))
      }
      guard entries.count <= Limits.maxStateEntries else {
        return .failure(.init("STATE has \(entries.count) entries"))
      }
      var members: [RoomRoster.Member] = []
      var index: [String: Int] = [:]
      for entry in entries {
        let login: String
        var stream: String?
        if let bare = name(entry) {
          login = bare
        } else if let pair = loginAndStream(entry) {
          (login, stream) = pair
        } else {
          return .failure(.init("STATE entry is neither a login nor {login, name}"))
        }
        let position = index[login] ?? members.count
        if position == members.count {
          index[login] = position
          members.append(RoomRoster.Member(login: login))
        }
        if let stream, members[position].streams.count < Limits.maxStreamsPerMember,
          !members[position].streams.contains(stream)
        {
          members[position].streams.append(stream)
        }
      }
      return .success(.state(room: room, members: members))
    case "JOINED", "LEFT":
      guard let login = name(info) else { return .failure(.init("\(kind) info is not a login")) }
      return .success(
        kind == "JOINED"
          ? .joined(room: room, login: login) : .left(room: room, login: login))
    case "PUBLISHED", "UNPUBLISHED", "FAILED":
      guard let (login, stream) = loginAndStream(info) else {
        return .failure(.init("stream event info is not {login, name}"))
      }
      return .success(
        kind == "PUBLISHED"
          ? .published(room: room, login: login, stream: stream)
          : .unpublished(room: room, login: login, stream: stream))
    case "MESSAGE":
      guard let message = info?.objectValue, let from = name(message["from"]),
        let text = message["text"]?.stringValue
      else { return .failure(.init("MESSAGE info is not {from, text}")) }
      guard text.utf8.count <= Limits.maxTextUTF8Bytes else {
        return .failure(.init("MESSAGE text of \(text.utf8.count) bytes"))
      }
      return .success(.message(room: room, from: from, to: name(message["to"]), text: text))
    default:
      return .failure(.init("unknown room event \(kind.prefix(64))"))
    }
  }

  private static func name(_ value: JSONValue?) -> String? {
    guard case .string(let text)? = value, !text.isEmpty,
      text.utf8.count <= Limits.maxNameUTF8Bytes
    else { return nil }
    return text
  }

  private static func loginAndStream(_ value: JSONValue?) -> (String, String)? {
    guard let object = value?.objectValue, let login = name(object["login"]),
      let stream = name(object["name"])
    else { return nil }
    return (login, stream)
  }
}

/// Why a room event was skipped.
struct RoomEventSkipped: Error, Equatable {
  let reason: String
  init(_ reason: String) { self.reason = reason }
}

/// The members of one joined room as the client knows them, kept by the room events
/// (wcs-rooms-and-calls.md §A.4, §A.10), Sans-I/O: `apply` returns what changed.
///
/// Rules from the Web SDK's behaviour that a client must survive: events about logins not yet
/// announced (`STATE`/`JOINED`) are skipped, a repeated `JOINED` does not reset a member's
/// streams, and events before `STATE` are skipped.
struct RoomRoster: Equatable {
  struct Member: Equatable {
    let login: String
    /// Published stream names, oldest first.
    var streams: [String] = []
  }

  /// What an event changed, for the app's callbacks.
  enum Change: Equatable {
    case state
    case joined(login: String)
    case left(login: String)
    case published(login: String, stream: String)
    case unpublished(login: String, stream: String)
    case message(from: String, to: String?, text: String)
  }

  /// Members in the order the server listed or announced them.
  private(set) var members: [Member] = []
  /// Whether `STATE` has arrived (the join is complete, §A.10).
  private(set) var hasState = false
  /// Members the roster keeps at most (as `RoomEvent.Limits.maxStateEntries`).
  static let maxMembers = RoomEvent.Limits.maxStateEntries

  func member(_ login: String) -> Member? { members.first { $0.login == login } }

  /// Applies one event of this room.
  /// - Returns: the change, or the reason the event is skipped.
  mutating func apply(_ event: RoomEvent, ownLogin: String) -> Result<Change, RoomEventSkipped> {
    if case .state(_, let listed) = event {
      guard !hasState else { return .failure(.init("a second STATE")) }
      hasState = true
      members = listed.filter { $0.login != ownLogin }
      return .success(.state)
    }
    guard hasState else { return .failure(.init("room event before STATE")) }
    switch event {
    case .state: return .failure(.init("a second STATE"))
    case .joined(_, let login):
      guard login != ownLogin else { return .failure(.init("JOINED about ourselves")) }
      guard member(login) == nil else { return .failure(.init("JOINED for known \(login)")) }
      guard members.count < Self.maxMembers else { return .failure(.init("room over limit")) }
      members.append(Member(login: login))
      return .success(.joined(login: login))
    case .left(_, let login):
      guard let index = members.firstIndex(where: { $0.login == login }) else {
        return .failure(.init("LEFT for unknown \(login)"))
      }
      members.remove(at: index)
      return .success(.left(login: login))
    case .published(_, let login, let stream):
      guard let index = members.firstIndex(where: { $0.login == login }) else {
        return .failure(.init("PUBLISHED for unknown \(login)"))
      }
      if !members[index].streams.contains(stream) {
        guard members[index].streams.count < RoomEvent.Limits.maxStreamsPerMember else {
          return .failure(.init("\(login) over the stream limit"))
        }
        members[index].streams.append(stream)
      }
      return .success(.published(login: login, stream: stream))
    case .unpublished(_, let login, let stream):
      guard let index = members.firstIndex(where: { $0.login == login }),
        let position = members[index].streams.firstIndex(of: stream)
      else { return .failure(.init("UNPUBLISHED for an unknown stream of \(login)")) }
      members[index].streams.remove(at: position)
      return .success(.unpublished(login: login, stream: stream))
    case .message(_, let from, let to, let text):
      return .success(.message(from: from, to: to, text: text))
    }
  }
}

/// The `sendData` payloads of room commands (wcs-rooms-and-calls.md §A.3).
enum RoomCommands {
  static func join(room: String, record: Bool?) -> [String: Any] {
    var options: [String: Any] = ["name": room]
    if let record { options["record"] = record }
    return ["command": "join", "options": options]
  }

  static func leave(room: String) -> [String: Any] {
    ["command": "leave", "options": ["name": room]]
  }

  static func sendMessage(room: String, to login: String, text: String) -> [String: Any] {
    [
      "command": "sendMessage",
      "options": ["roomConfig": ["name": room], "to": login, "text": text],
    ]
  }
}
