import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// Three Swift participants in one room through the local server on 127.0.0.1, with the real
/// media engine (wcs-rooms-and-calls.md §A.8): each sees the others join, publish and leave in
/// the protocol's order, decodes their video, and gets its chat messages exactly once.
final class RoomEndToEndTests: XCTestCase {
  /// Each participant's virtual camera size: a decoded frame's size says whose it is, its
  /// frame number (`VirtualCamera.decodeFrameNumber`) that it is the camera's picture.
  static let sizes = ["alice": (320, 240), "bob": (352, 288), "carol": (256, 192)]

  func testThreeParticipantsSeeEachOtherJoinPublishChatAndLeave() async throws {
    let server = try startServer()
    defer { server.stop() }
    let room = "r-\(UUID().uuidString.prefix(6).lowercased())"
    var people: [String: Participant] = [:]
    for login in ["alice", "bob", "carol"] {
      let person = try await Participant.join(login, room: room, server: server)
      people[login] = person
    }
    let alice = try XCTUnwrap(people["alice"])
    let bob = try XCTUnwrap(people["bob"])
    let carol = try XCTUnwrap(people["carol"])
    XCTAssertEqual(alice.initialParticipants, [])
    XCTAssertEqual(bob.initialParticipants, ["alice"])
    XCTAssertEqual(carol.initialParticipants.sorted(), ["alice", "bob"])
    XCTAssertEqual(server.roomMembers(room), ["alice", "bob", "carol"])

    // Publish one after the other so every viewer's log has one order.
    for person in [alice, bob, carol] {
      try person.publish()
      let others = [alice, bob, carol].filter { $0.login != person.login }
      try await waitFor("\(person.login)'s stream announced") {
        others.allSatisfy { $0.log.contains("published \(person.login)") }
      }
    }
    try await waitFor("each decodes the two others", timeout: 30) {
      [alice, bob, carol].allSatisfy { viewer in
        viewer.others.allSatisfy { viewer.frames(from: $0) >= 15 }
      }
    }
    for viewer in [alice, bob, carol] {
      for publisher in viewer.others {
        XCTAssertEqual(
          viewer.wrongSizeFrames(from: publisher), 0, "\(viewer.login) ← \(publisher)")
        let numbers = viewer.frameNumbers(from: publisher)
        XCTAssertEqual(numbers, numbers.sorted(), "\(viewer.login) ← \(publisher) in order")
        XCTAssertGreaterThan(numbers.last ?? 0, numbers.first ?? 0)
      }
    }

    // Chat: a ring, each message to one addressee.
    try await alice.send("to bob from alice", to: "bob")
    try await bob.send("to carol from bob", to: "carol")
    try await carol.send("to alice from carol", to: "alice")
    try await waitFor("three messages") {
      [alice, bob, carol].allSatisfy { $0.messages.count >= 1 }
    }
    // A few more round trips: a duplicate would have arrived by now.
    for person in [alice, bob, carol] { try await person.roundTrip() }
    XCTAssertEqual(alice.messages, ["carol→alice: to alice from carol"])
    XCTAssertEqual(bob.messages, ["alice→bob: to bob from alice"])
    XCTAssertEqual(carol.messages, ["bob→carol: to carol from bob"])

    // Carol leaves; Bob's socket drops; Alice leaves last.
    try await carol.room.leave()
    try await waitFor("carol gone") {
      [alice, bob].allSatisfy { $0.log.contains("left carol") }
    }
    bob.manager.disconnect()
    try await waitFor("bob gone") { alice.log.contains("left bob") }
    try await alice.room.leave()
    try await waitFor("the server is empty") { server.roomCount == 0 && server.streamCount == 0 }

    XCTAssertEqual(
      alice.log,
      [
        "joined bob", "joined carol", "published bob", "published carol",
        "unpublished carol", "left carol", "unpublished bob", "left bob",
      ])
    XCTAssertEqual(
      bob.log,
      ["joined carol", "published alice", "published carol", "unpublished carol", "left carol"])
    XCTAssertEqual(carol.log, ["published alice", "published bob"])
    XCTAssertEqual(
      alice.events.withLock { $0 }, alice.log, "the AsyncStream saw what the callbacks saw")
    for person in [alice, bob, carol] { person.manager.disconnect() }
  }

  func testBadRoomInputFailsClearlyAndLeavesTheOthersAndTheServerClean() async throws {
    var limits = WCSRoomLimits()
    limits.commandBurst = 20
    limits.commandsPerSecond = 10
    let server = try startServer(limits: limits)
    defer { server.stop() }
    let alice = try await Participant.join("alice", room: "r1", server: server)
    let bob = try await Participant.join("bob", room: "r1", server: server)

    // Joining the same room twice, locally and through a second connection with the same login.
    let again = joinNow(alice.manager, "r1")
    let failure = Mutex<String?>(nil)
    again.onFailedCallback { _, info in failure.withLock { $0 = info } }
    try await waitFor("the second join fails") { failure.withLock { $0 } != nil }
    XCTAssertEqual(failure.withLock { $0 }, "Already joined this room")
    XCTAssertTrue(alice.room.isJoined(), "the first join goes on")
    let twin = try await FPWCSApi2.connectRoomManager(Participant.managerOptions("alice", server))
    await assertRejected(
      try await twin.join(Participant.roomOptions("r1")), "Login is already in use in this room")
    twin.disconnect()

    // Names with control characters or 10 000 characters.
    let bell = try await FPWCSApi2.connectRoomManager(
      Participant.managerOptions("e\u{7}ve", server))
    await assertRejected(
      try await bell.join(Participant.roomOptions("r1")),
      "Bad request: custom.login must not contain control characters")
    await assertRejected(
      try await bell.join(Participant.roomOptions(String(repeating: "x", count: 10_000))),
      "Bad request: options.name must be at most 96 UTF-8 bytes, got 10000")
    bell.disconnect()

    // A message to a participant who left.
    try await waitFor("alice knows bob") { alice.log.contains("joined bob") }
    let bobAsSeen = try XCTUnwrap(alice.room.getParticipants()["bob"])
    try await bob.room.leave()
    try await waitFor("bob left") { alice.log.contains("left bob") }
    await assertRejected(try await bobAsSeen.sendMessage("anyone?"), "Participant not found")

    // A message flood: refused past the budget; the room and its members go on.
    let carol = try await Participant.join("carol", room: "r1", server: server)
    try await waitFor("alice knows carol") { alice.log.contains("joined carol") }
    let toCarol = try XCTUnwrap(alice.room.getParticipants()["carol"])
    let outcomes = Mutex<[String]>([])
    for index in 0..<200 {
      let handler = FPWCSApi2DataHandler()
      handler.onAccepted = { _, _ in outcomes.withLock { $0.append("ok") } }
      handler.onRejected = { _, data in outcomes.withLock { $0.append(data?.info ?? "nil") } }
      toCarol.sendMessage("flood \(index)", handler: handler)
    }
    try await waitFor("every flood reply") { outcomes.withLock { $0.count } == 200 }
    let accepted = outcomes.withLock { $0.filter { $0 == "ok" }.count }
    XCTAssertLessThan(accepted, 40, "the rate limit held")
    XCTAssertGreaterThan(accepted, 0)
    XCTAssertEqual(
      Set(outcomes.withLock { $0.filter { $0 != "ok" } }), ["Too many room commands"])
    try await waitFor("carol got what was accepted") { carol.messages.count == accepted }
    try await carol.send("still here", to: "alice")
    try await waitFor("carol's message") { alice.messages.contains("carol→alice: still here") }

    // A socket dropped mid-join: the server forgets it; nobody hears of a member that never was.
    try await waitFor("the twins are gone") { server.sessionCount == 3 }
    let dropped = try await FPWCSApi2.connectRoomManager(Participant.managerOptions("dave", server))
    _ = joinNow(dropped, "r1")
    dropped.disconnect()
    try await waitFor("dave is gone from the server") {
      !server.roomMembers("r1").contains("dave") && server.sessionCount == 3
    }
    try await alice.roundTrip()
    try await carol.roundTrip()
    let aliceLog = alice.log
    if aliceLog.contains("joined dave") {
      XCTAssertEqual(aliceLog.suffix(2), ["joined dave", "left dave"], "a join is undone")
    }
    XCTAssertEqual(server.roomMembers("r1"), ["alice", "carol"])

    try await alice.room.leave()
    try await carol.room.leave()
    try await waitFor("the server is empty") { server.roomCount == 0 }
    alice.manager.disconnect()
    carol.manager.disconnect()
    bob.manager.disconnect()
  }

  // MARK: - Support

  private func startServer(limits: WCSRoomLimits = WCSRoomLimits()) throws -> WCSLocalServer {
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-rooms-\(UUID().uuidString.prefix(8))").path
    configuration.signaling.rooms = limits
    configuration.logSink = { _ in }
    return try WCSLocalServer.start(configuration)
  }

  private func assertRejected<T>(
    _ body: @autoclosure () async throws -> T, _ info: String, file: StaticString = #filePath,
    line: UInt = #line
  ) async {
    do {
      _ = try await body()
      XCTFail("expected the rejection \(info)", file: file, line: line)
    } catch let error as WCSError {
      XCTAssertEqual(error, .dataRejected(info: info), file: file, line: line)
    } catch {
      XCTFail("unexpected \(error)", file: file, line: line)
    }
  }
}

/// The iOS-style `join` (returns at once), from an async context.
func joinNow(_ manager: FPWCSApi2RoomManager, _ room: String) -> FPWCSApi2Room {
  manager.join(Participant.roomOptions(room))
}

/// The decoded picture of `frame`; `nil` when its planes are inconsistent.
func picture(of frame: VideoFrame) -> I420Image? {
  I420Image(
    width: frame.width, height: frame.height, y: [UInt8](frame.dataY), strideY: frame.strideY,
    u: [UInt8](frame.dataU), strideU: frame.strideU, v: [UInt8](frame.dataV),
    strideV: frame.strideV)
}

/// Polls `condition` every 20 ms for up to `timeout` seconds (real sockets: no virtual clock).
func waitFor(
  _ message: String, timeout: Double = 15, file: StaticString = #filePath, line: UInt = #line,
  _ condition: () -> Bool
) async throws {
  let deadline = Date().addingTimeInterval(timeout)
  while !condition() {
    guard Date() < deadline else {
      XCTFail("timed out: \(message)", file: file, line: line)
      throw CancellationError()
    }
    try await Task.sleep(nanoseconds: 20_000_000)
  }
}

/// One room member driven through the iOS-style callbacks, its events also read from
/// `room.events`; every participant it sees published is played at once.
final class Participant: Sendable {
  let login: String
  let manager: FPWCSApi2RoomManager
  let room: FPWCSApi2Room
  let initialParticipants: [String]
  private let state = Mutex(Seen())
  let events = Mutex<[String]>([])

  struct Seen {
    var log: [String] = []
    var messages: [String] = []
    /// Per publisher login: frame numbers decoded, frames of another size.
    var numbers: [String: [UInt32]] = [:]
    var wrongSize: [String: Int] = [:]
    var played: [FPWCSApi2Stream] = []
  }

  var log: [String] { state.withLock { $0.log } }
  var messages: [String] { state.withLock { $0.messages } }
  var others: [String] { ["alice", "bob", "carol"].filter { $0 != login } }
  func frames(from login: String) -> Int { state.withLock { $0.numbers[login]?.count ?? 0 } }
  func frameNumbers(from login: String) -> [UInt32] { state.withLock { $0.numbers[login] ?? [] } }
  func wrongSizeFrames(from login: String) -> Int { state.withLock { $0.wrongSize[login] ?? 0 } }

  static func managerOptions(_ login: String, _ server: WCSLocalServer)
    -> FPWCSApi2RoomManagerOptions
  {
    let options = FPWCSApi2RoomManagerOptions()
    options.urlServer = server.wsURL
    options.username = login
    options.bandwidthSampleInterval = 0
    return options
  }

  static func roomOptions(_ name: String) -> FPWCSApi2RoomOptions {
    let options = FPWCSApi2RoomOptions()
    options.name = name
    return options
  }

  static func join(_ login: String, room name: String, server: WCSLocalServer) async throws
    -> Participant
  {
    let manager = try await FPWCSApi2.connectRoomManager(managerOptions(login, server))
    let room = try await manager.join(roomOptions(name))
    return Participant(login: login, manager: manager, room: room)
  }

  private init(login: String, manager: FPWCSApi2RoomManager, room: FPWCSApi2Room) {
    self.login = login
    self.manager = manager
    self.room = room
    self.initialParticipants = room.getParticipants().keys.sorted()
    let note = { [weak self] (line: String) in self?.state.withLock { $0.log.append(line) } }
    room.on(.fpwcsRoomParticipantEventJoined) { _, p in note("joined \(p?.getName() ?? "?")") }
    room.on(.fpwcsRoomParticipantEventLeft) { _, p in note("left \(p?.getName() ?? "?")") }
    room.on(.fpwcsRoomParticipantEventUnpublished) { _, p in
      note("unpublished \(p?.getName() ?? "?")")
    }
    room.on(.fpwcsRoomParticipantEventPublished) { [weak self] _, p in
      guard let p else { return }
      note("published \(p.getName())")
      self?.play(p)
    }
    room.onMessageCallback { [weak self] _, message in
      guard let message else { return }
      self?.state.withLock {
        $0.messages.append("\(message.from)→\(message.to ?? "?"): \(message.text)")
      }
    }
    let stream = room.events
    Task { [weak self] in
      for await event in stream {
        let line: String? =
          switch event {
          case .joined(let p): "joined \(p.getName())"
          case .left(let p): "left \(p.getName())"
          case .published(let p, _): "published \(p.getName())"
          case .unpublished(let p, _): "unpublished \(p.getName())"
          default: nil
          }
        if let line { self?.events.withLock { $0.append(line) } }
      }
    }
    // Whoever published before we joined (none in these tests, but the Conference way).
    for participant in room.getParticipants().values where participant.getStreamName() != nil {
      play(participant)
    }
  }

  func publish() throws {
    let (width, height) = RoomEndToEndTests.sizes[login] ?? (320, 240)
    let video = FPWCSApi2VideoConstraints()
    video.deviceID = "virtual:camera"
    video.minWidth = width
    video.maxWidth = width
    video.minHeight = height
    video.maxHeight = height
    video.maxFrameRate = 15
    let constraints = FPWCSApi2MediaConstraints()
    constraints.video = video
    let options = FPWCSApi2StreamOptions()
    options.constraints = constraints
    try room.publish(nil, withOptions: options)
  }

  private func play(_ participant: FPWCSApi2RoomParticipant) {
    let publisher = participant.getName()
    let expected = RoomEndToEndTests.sizes[publisher] ?? (0, 0)
    let renderer = VideoFrameCallbackRenderer { [weak self] frame in
      guard let image = picture(of: frame) else { return }
      self?.state.withLock { seen in
        guard image.width == expected.0, image.height == expected.1 else {
          seen.wrongSize[publisher, default: 0] += 1
          return
        }
        if let number = VirtualCamera.decodeFrameNumber(from: image) {
          seen.numbers[publisher, default: []].append(number)
        }
      }
    }
    do {
      let stream = try participant.play(renderer)
      state.withLock { $0.played.append(stream) }
    } catch {
      state.withLock { $0.log.append("play \(publisher) failed: \(error)") }
    }
  }

  func send(_ text: String, to login: String) async throws {
    guard let participant = room.getParticipants()[login] else {
      throw WCSError.invalidArgument("\(self.login) does not know \(login)")
    }
    try await participant.sendMessage(text)
  }

  /// One `sendData` answered by the server: everything it sent before has arrived.
  func roundTrip() async throws {
    _ = try? await manager.getSession().sendData(
      ["command": "noop", "options": [:]] as [String: Any])
  }
}
