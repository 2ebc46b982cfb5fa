// Conference (iOS: WCSExample/Conference): join a room as a user, publish the camera (or a
// file) into it, play every other participant as they come and go, send and print chat
// messages, leave. Played video goes to one Y4M file per participant. Without --url it starts
// the local server and, unless --bots 0, in-process participants to meet there: bot1 is in the
// room before us and publishing, bot2 joins after us and leaves halfway; each answers a chat
// message with an echo.
import ExampleSupport
import FPWCSApi2Swift
import Foundation
import Synchronization

let usage = """
  usage: Conference [options]

    --login NAME       our name in the room (default user-<4 hex>)
    --room NAME        room to join (default room-<6 hex>, a new room)
    --file PATH        publish this file instead of the camera
    --width N          camera width (default 320)
    --height N         camera height (default 240)
    --message TEXT     chat message sent to each participant once its video plays
                       (default "Hello from <login>")
    --duration S       seconds in the room (default 6)
    --bots N           in-process participants to meet (default 2 on the local server, 0 with
                       --url)
    --out DIR          where played video goes (default ./example-output)
  \(ExampleServer.usage)
  """

/// What the run saw, for the summary. Touched from the SDK's callback queue and the main thread.
final class ConferenceState: Sendable {
  struct Seen {
    var participants: [String] = []
    var displays: [String: VideoFileRenderer] = [:]
    var greeted: Set<String> = []
    var sent = 0
    var received: [String] = []
    var failures: [String] = []
  }
  let seen = Mutex(Seen())

  func note(_ login: String) {
    seen.withLock { if !$0.participants.contains(login) { $0.participants.append(login) } }
  }
}

func runConference(_ argv: [String]) async -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  let arguments: ExampleArguments
  let duration: Double
  let width: Int
  let height: Int
  let bots: Int
  do {
    arguments = try ExampleArguments(argv, booleanFlags: ["server-log"], usage: usage)
    duration = try arguments.double("duration", default: 6)
    width = try arguments.int("width", default: 320)
    height = try arguments.int("height", default: 240)
    bots = try arguments.int("bots", default: arguments.string("url") == nil ? 2 : 0)
    guard duration > 0, (0...8).contains(bots) else {
      throw ExampleError.usage("--duration wants seconds > 0, --bots 0...8")
    }
    if let file = arguments.string("file") { try ExampleMedia.checkMediaFile(file) }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  let (login, roomName) = exampleRoomIdentity(arguments)
  let text = arguments.string("message", default: "Hello from \(login)") ?? ""
  guard let (server, out) = ExampleServer.start("Conference", arguments: arguments, log: log)
  else { return 1 }
  defer { server.stop() }

  // bot1 is in the room and publishing before we join.
  var summary = ExampleSummary()
  var guests: [ExampleRoomBot] = []
  if bots > 0 {
    do {
      guests.append(try await ExampleRoomBot("bot1", room: roomName, url: server.url, log: log))
    } catch {
      log.line("bot1 could not join: \(error)")
      summary.fail("bot1 could not join: \(error)")
    }
  }

  let state = ConferenceState()
  let options = FPWCSApi2RoomManagerOptions()
  options.urlServer = server.url
  options.username = login
  let roomManager: FPWCSApi2RoomManager
  do {
    roomManager = try FPWCSApi2.createRoomManager(options)
  } catch {
    log.line("Failed to connect: \(error)")
    return 1
  }

  func play(_ participant: FPWCSApi2RoomParticipant?) {
    guard let participant, participant.getStreamName() != nil else { return }
    let name = participant.getName()
    participant.stop()
    let display = VideoFileRenderer(
      path: out + "/\(roomName)-\(name).y4m", frameRate: 15, log: log, event: "frame \(name)")
    state.seen.withLock { $0.displays[name] = display }
    do {
      let stream = try participant.play(display)
      stream.on(.fpwcsStreamStatusPlaying) { log.stream("play \(name)", $0) }
      stream.on(.fpwcsStreamStatusFailed) { rStream in
        log.stream("play \(name)", rStream)
        state.seen.withLock {
          $0.failures.append("play \(name): \(ExampleText.failureReason(rStream))")
        }
      }
    } catch {
      log.streamRefused("play \(name)", name, error)
    }
  }

  func publish(_ room: FPWCSApi2Room) {
    let video = FPWCSApi2VideoConstraints()
    video.maxWidth = width
    video.maxHeight = height
    let constraints = FPWCSApi2MediaConstraints()
    constraints.audio = FPWCSApi2AudioConstraints()
    constraints.video = video
    if let file = arguments.string("file") { ExampleMedia.useFile(file, in: constraints) }
    let streamOptions = FPWCSApi2StreamOptions()
    streamOptions.constraints = constraints
    do {
      let stream = try room.publish(nil, withOptions: streamOptions)
      stream.on(.fpwcsStreamStatusPublishing) { log.stream("publish", $0) }
      stream.on(.fpwcsStreamStatusFailed) { log.stream("publish", $0) }
      stream.on(.fpwcsStreamStatusUnpublished) { log.stream("publish", $0) }
    } catch {
      log.streamRefused("publish", roomName, error)
    }
  }

  let roomBox = Mutex<FPWCSApi2Room?>(nil)
  roomManager.on(.fpwcsRoomManagerEventConnected) { manager in
    log.line("room manager CONNECTED as \(login)")
    log.mark("CONNECTED")
    let roomOptions = FPWCSApi2RoomOptions()
    roomOptions.name = roomName
    guard let room = manager?.join(roomOptions) else { return }
    roomBox.withLock { $0 = room }
    room.onStateCallback { room in
      guard let room else { return }
      let names = room.getParticipants().keys.sorted()
      log.line(
        "joined \(roomName); participants: \(names.isEmpty ? "none" : names.joined(separator: ", "))"
      )
      log.mark("joined")
      for (name, participant) in room.getParticipants() {
        state.note(name)
        play(participant)
      }
      publish(room)
    }
    room.onFailedCallback { _, info in
      log.line("join FAILED: \(info ?? "no reason")")
      log.mark("join FAILED", detail: "join \(roomName) FAILED: \(info ?? "no reason")")
    }
    room.on(.fpwcsRoomParticipantEventJoined) { _, participant in
      guard let name = participant?.getName() else { return }
      log.line("\(name) joined")
      state.note(name)
    }
    room.on(.fpwcsRoomParticipantEventPublished) { _, participant in
      log.line("\(participant?.getName() ?? "?") published \(participant?.getStreamName() ?? "")")
      play(participant)
    }
    room.on(.fpwcsRoomParticipantEventUnpublished) { _, participant in
      log.line("\(participant?.getName() ?? "?") unpublished")
    }
    room.on(.fpwcsRoomParticipantEventLeft) { _, participant in
      log.line("\(participant?.getName() ?? "?") left")
      participant?.stop()
    }
    room.onMessageCallback { _, message in
      guard let message else { return }
      log.line("message from \(message.from): \(message.text)")
      state.seen.withLock { $0.received.append("\(message.from): \(message.text)") }
    }
  }
  roomManager.on(.fpwcsRoomManagerEventFailed) { manager in
    let reason = manager?.getSession().getFailureReason() ?? "no reason"
    log.line("room manager FAILED: \(reason)")
    log.mark("FAILED", detail: "room manager FAILED: \(reason)")
  }
  roomManager.on(.fpwcsRoomManagerEventDisconnected) { _ in
    log.line("room manager DISCONNECTED")
    log.mark("DISCONNECTED")
  }

  let endEvents = ["join FAILED", "FAILED", "DISCONNECTED", "publish FAILED"]
  if log.wait(for: "joined", unless: endEvents, timeout: 20, in: &summary) {
    let start = log.elapsed
    var secondBot = bots < 2
    var secondLeft = bots < 2
    while log.elapsed < start + duration {
      if log.failIfEnded(endEvents, in: &summary) { break }
      // bot2 comes after us and goes halfway.
      if !secondBot, log.elapsed > start + duration / 6 {
        secondBot = true
        do {
          guests.append(try await ExampleRoomBot("bot2", room: roomName, url: server.url, log: log))
        } catch {
          summary.fail("bot2 could not join: \(error)")
        }
      }
      if !secondLeft, log.elapsed > start + duration * 2 / 3, guests.count > 1 {
        secondLeft = true
        guests[1].leave()
      }
      // Greet each participant once its video plays.
      let room = roomBox.withLock { $0 }
      let greet = state.seen.withLock { seen -> [String] in
        let ready = seen.displays.filter {
          $0.value.frameCount > 0 && !seen.greeted.contains($0.key)
        }
        seen.greeted.formUnion(ready.keys)
        return Array(ready.keys)
      }
      for name in greet {
        guard let participant = room?.getParticipants()[name] else { continue }
        do {
          try await participant.sendMessage(text)
          log.line("message to \(name): \(text)")
          state.seen.withLock { $0.sent += 1 }
        } catch {
          log.line("message to \(name) FAILED: \(error)")
        }
      }
      try? await Task.sleep(nanoseconds: 50_000_000)
    }
  }
  if let room = roomBox.withLock({ $0 }) {
    let left = Mutex<String?>(nil)
    let handler = FPWCSApi2DataHandler()
    handler.onAccepted = { _, _ in left.withLock { $0 = "ACCEPTED" } }
    handler.onRejected = { _, data in left.withLock { $0 = "FAILED: \(data?.info ?? "no reason")" }
    }
    room.leave(handler)
    let deadline = log.elapsed + 5
    while left.withLock({ $0 }) == nil, log.elapsed < deadline {
      try? await Task.sleep(nanoseconds: 20_000_000)
    }
    log.line("leave \(left.withLock { $0 } ?? "not answered")")
  }
  roomManager.disconnect()
  for bot in guests { bot.leave() }
  _ = log.wait(for: ["DISCONNECTED", "FAILED"], timeout: 5)

  let seen = state.seen.withLock { $0 }
  summary.add("Room", roomName)
  summary.add("Login", login)
  summary.addTime("Time to CONNECTED", log.time(of: "CONNECTED"))
  summary.addTime("Time to joined", log.time(of: "joined"))
  summary.addTime("Time to PUBLISHING", log.time(of: "publish PUBLISHING"))
  summary.add(
    "Participants seen",
    seen.participants.isEmpty ? "none" : seen.participants.joined(separator: ", "))
  for name in seen.participants {
    let frames = seen.displays[name]?.frameCount ?? 0
    summary.add("Frames decoded from \(name)", "\(frames)")
    if let display = seen.displays[name] {
      switch display.finish() {
      case .success(let path): summary.add("Video of \(name) written to", path ?? "nothing")
      case .failure(let error): summary.fail("\(error)")
      }
    }
  }
  summary.add("Messages sent", "\(seen.sent)")
  summary.add("Messages received", "\(seen.received.count)")
  for failure in seen.failures { summary.fail(failure) }
  if summary.succeeded {
    if log.time(of: "publish PUBLISHING") == nil { summary.fail("never PUBLISHING") }
    for name in seen.displays.keys where (seen.displays[name]?.frameCount ?? 0) == 0 {
      summary.fail("no frame of \(name) was decoded")
    }
    if bots > 0, seen.received.count < min(bots, seen.sent) {
      summary.fail("\(seen.received.count) echo(es) for \(seen.sent) message(s)")
    }
  }
  return summary.print(to: log)
}

exit(await runConference(Array(CommandLine.arguments.dropFirst())))
