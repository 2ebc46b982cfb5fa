// VideoChat (iOS: WCSExample/VideoChat): a two-party room with recording on. Join a room,
// publish the camera (or a file) with `record`, play the other participant once it publishes,
// say hello, then stop: the record is downloaded and checked. Without --url it starts the local
// server with one in-process participant to talk to (it echoes the hello).
import ExampleSupport
import FPWCSApi2Swift
import Foundation
import Synchronization

let usage = """
  usage: VideoChat [options]

    --login NAME    our name in the room (default user-<4 hex>)
    --room NAME     room to join (default room-<6 hex>)
    --file PATH     publish this file instead of the camera
    --duration S    seconds of chat once the other side plays (default 4)
    --no-record     publish without recording (the iOS example's Record switch)
    --out DIR       where played video and the record go (default ./example-output)
  \(ExampleServer.usage)
  """

/// What the callbacks saw, read by the main task.
final class ChatState: Sendable {
  struct Seen {
    var peer: String?
    var display: VideoFileRenderer?
    var published: FPWCSApi2Stream?
    var received: [String] = []
  }
  let seen = Mutex(Seen())
}

func runVideoChat(_ argv: [String]) async -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  let arguments: ExampleArguments
  let duration: Double
  do {
    arguments = try ExampleArguments(argv, booleanFlags: ["server-log", "record"], usage: usage)
    duration = try arguments.double("duration", default: 4)
    guard duration > 0 else { throw ExampleError.usage("--duration wants seconds > 0") }
    if let file = arguments.string("file") { try ExampleMedia.checkMediaFile(file) }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  let record = !arguments.flag("no-record")
  let (login, roomName) = exampleRoomIdentity(arguments)
  guard let (server, out) = ExampleServer.start("VideoChat", arguments: arguments, log: log)
  else { return 1 }
  defer { server.stop() }
  var summary = ExampleSummary()
  var other: ExampleRoomBot?
  if server.isLocal {
    do {
      other = try await ExampleRoomBot("peer", room: roomName, url: server.url, log: log)
    } catch {
      summary.fail("the peer could not join: \(error)")
    }
  }

  let state = ChatState()
  let options = FPWCSApi2RoomManagerOptions()
  options.urlServer = server.url
  options.username = login
  let room: FPWCSApi2Room
  let manager: FPWCSApi2RoomManager
  do {
    manager = try await FPWCSApi2.connectRoomManager(options)
    log.line("room manager CONNECTED as \(login)")
    let roomOptions = FPWCSApi2RoomOptions()
    roomOptions.name = roomName
    room = try await manager.join(roomOptions)
  } catch {
    log.line("join FAILED: \(error)")
    summary.fail("join \(roomName) FAILED: \(error)")
    return summary.print(to: log)
  }
  log.line("joined \(roomName); participants: \(room.getParticipants().keys.sorted())")
  log.mark("joined")

  // Two parties: the first participant that publishes is the one we play.
  func play(_ participant: FPWCSApi2RoomParticipant?) {
    guard let participant, participant.getStreamName() != nil else { return }
    let name = participant.getName()
    let display = VideoFileRenderer(
      path: out + "/\(roomName)-\(name).y4m", frameRate: 15, log: log, event: "first frame")
    let claimed = state.seen.withLock { seen -> Bool in
      guard seen.peer == nil else { return false }
      seen.peer = name
      seen.display = display
      return true
    }
    guard claimed else { return }
    do {
      let stream = try participant.play(display)
      stream.on(.fpwcsStreamStatusPlaying) { log.stream("play", $0) }
      stream.on(.fpwcsStreamStatusFailed) { log.stream("play", $0) }
    } catch {
      log.streamRefused("play", name, error)
    }
  }
  room.on(.fpwcsRoomParticipantEventPublished) { _, participant in play(participant) }
  room.on(.fpwcsRoomParticipantEventLeft) { _, participant in
    log.line("\(participant?.getName() ?? "?") left")
  }
  room.onMessageCallback { _, message in
    guard let message else { return }
    log.line("message from \(message.from): \(message.text)")
    state.seen.withLock { $0.received.append(message.text) }
  }
  for participant in room.getParticipants().values { play(participant) }

  let video = FPWCSApi2VideoConstraints()
  video.maxWidth = 320
  video.maxHeight = 240
  let constraints = FPWCSApi2MediaConstraints()
  constraints.audio = FPWCSApi2AudioConstraints()
  constraints.video = video
  if let file = arguments.string("file") { ExampleMedia.useFile(file, in: constraints) }
  let streamOptions = FPWCSApi2StreamOptions()
  streamOptions.constraints = constraints
  streamOptions.record = record
  do {
    let stream = try room.publish(nil, withOptions: streamOptions)
    state.seen.withLock { $0.published = stream }
    for status in [
      kFPWCSStreamStatus.fpwcsStreamStatusPublishing, .fpwcsStreamStatusUnpublished,
      .fpwcsStreamStatusFailed,
    ] {
      stream.on(status) { log.stream("publish", $0) }
    }
  } catch {
    log.streamRefused("publish", roomName, error)
  }

  let endEvents = ["publish FAILED", "play FAILED"]
  if log.wait(for: "first frame", unless: endEvents, timeout: 20, in: &summary) {
    if let peer = state.seen.withLock({ $0.peer }), let participant = room.getParticipants()[peer] {
      do {
        try await participant.sendMessage("Hello from \(login)")
        log.line("message to \(peer): Hello from \(login)")
      } catch {
        summary.fail("message to \(peer): \(error)")
      }
    }
    let start = log.elapsed
    while log.elapsed < start + duration, !log.failIfEnded(endEvents, in: &summary) {
      try? await Task.sleep(nanoseconds: 50_000_000)
    }
  }
  // The record is finished when the stream is unpublished; its name comes with UNPUBLISHED.
  room.unpublish()
  _ = log.wait(for: ["publish UNPUBLISHED", "publish FAILED"], timeout: 10)
  try? await room.leave()
  manager.disconnect()
  other?.leave()

  let seen = state.seen.withLock { $0 }
  summary.add("Room", roomName)
  summary.add("Login", login)
  summary.addTime("Time to joined", log.time(of: "joined"))
  summary.addTime("Time to PUBLISHING", log.time(of: "publish PUBLISHING"))
  summary.addTime("Time to first remote frame", log.time(of: "first frame"))
  summary.add("Peer", seen.peer ?? "none")
  summary.add("Frames decoded from peer", "\(seen.display?.frameCount ?? 0)")
  if let display = seen.display, case .success(let path) = display.finish() {
    summary.add("Video of peer written to", path ?? "nothing")
  }
  summary.add("Messages received", "\(seen.received.count)")
  if record {
    if let name = seen.published?.getRecordName(), !name.isEmpty {
      summary.add("Record name", name)
      do {
        let file = try RecordFile.download(
          recordName: name, recordsURL: server.recordsURL, directory: out, log: log)
        summary.add("Record path", file.path)
        summary.add(
          "Record duration",
          file.duration.map { String(format: "%.2f s (ffprobe)", $0) }
            ?? "unknown (WebM header checked)")
      } catch {
        summary.fail("\(error)")
      }
    } else if summary.succeeded {
      summary.fail("the server gave no record name")
    }
  }
  if summary.succeeded, (seen.display?.frameCount ?? 0) == 0 {
    summary.fail("no frame of the peer was decoded")
  }
  if summary.succeeded, other != nil, seen.received.isEmpty {
    summary.fail("the peer's echo did not arrive")
  }
  return summary.print(to: log)
}

exit(await runVideoChat(Array(CommandLine.arguments.dropFirst())))
