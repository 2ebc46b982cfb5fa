import FPWCSApi2Swift
import Foundation

/// An in-process room participant for the room examples on the local server (someone to meet):
/// joins, publishes the virtual camera at 320x240, 15 fps, and answers every chat message with
/// `echo from <login>: <text>`.
public final class ExampleRoomBot: Sendable {
  /// The bot's connection.
  public let manager: FPWCSApi2RoomManager
  /// The joined room.
  public let room: FPWCSApi2Room

  /// Connects as `login`, joins `roomName` and starts publishing.
  /// - Throws: `WCSError` when the connection, the join or the publish is refused.
  public init(_ login: String, room roomName: String, url: String, log: ExampleLog) async throws {
    let options = FPWCSApi2RoomManagerOptions()
    options.urlServer = url
    options.username = login
    manager = try await FPWCSApi2.connectRoomManager(options)
    let roomOptions = FPWCSApi2RoomOptions()
    roomOptions.name = roomName
    room = try await manager.join(roomOptions)
    room.onMessageCallback { room, message in
      guard let message, let sender = room?.getParticipants()[message.from] else { return }
      sender.sendMessage("echo from \(login): \(message.text)")
    }
    let video = FPWCSApi2VideoConstraints()
    video.deviceID = "virtual:camera"
    video.maxWidth = 320
    video.maxHeight = 240
    video.maxFrameRate = 15
    let constraints = FPWCSApi2MediaConstraints()
    constraints.video = video
    let streamOptions = FPWCSApi2StreamOptions()
    streamOptions.constraints = constraints
    let stream = try room.publish(nil, withOptions: streamOptions)
    stream.on(.fpwcsStreamStatusPublishing) { log.stream(login, $0) }
  }

  /// Leaves the room and disconnects.
  public func leave() {
    room.leave(nil)
    manager.disconnect()
  }
}

/// The room examples' `--login` and `--room`, with their defaults: `user-<4 hex>` and a new
/// room `room-<6 hex>` (the Web Conference example's form).
public func exampleRoomIdentity(_ arguments: ExampleArguments) -> (login: String, room: String) {
  let hex = String(UInt32.random(in: 0...UInt32.max), radix: 16)
  let login = arguments.string("login", default: "user-\(hex.prefix(4))") ?? "user"
  let room = arguments.string("room", default: "room-\(hex.prefix(6))") ?? "room"
  return (login, room)
}
