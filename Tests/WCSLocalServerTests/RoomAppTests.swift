import WCSLocalServer
import WCSTransport
import XCTest

/// The `roomApp` room application (wcs-rooms-and-calls.md §A.3–A.9) over `WCSServerCore`.
final class RoomAppTests: XCTestCase {
  let alice: WCSConnectionID = 1
  let bob: WCSConnectionID = 2
  let carol: WCSConnectionID = 3

  func testJoinSendsStateToTheJoinerAndJoinedToTheOthersInOrder() {
    let server = ServerHarness()
    server.roomConnect(alice, "alice")
    server.roomConnect(bob, "bob")
    server.roomConnect(carol, "carol")
    server.command(alice, "op1", "join", ["name": "r1"])
    XCTAssertEqual(
      server.take(alice), [dataStatus("op1"), roomEvent("r1", "STATE", .array([]))])

    server.command(bob, "op2", "join", ["name": "r1", "record": false])
    XCTAssertEqual(server.take(bob), [dataStatus("op2"), roomEvent("r1", "STATE", ["alice"])])
    XCTAssertEqual(server.take(alice), [roomEvent("r1", "JOINED", "bob")])

    // Bob publishes: Alice learns of it once PUBLISHING; Carol's STATE lists it as {login, name}.
    server.roomPublish(bob, "pub-b", room: "r1", name: "r1-bob-1a2b")
    assertStatus(server.take(bob).last, "pub-b", "PUBLISHING")
    XCTAssertEqual(
      server.take(alice),
      [roomEvent("r1", "PUBLISHED", ["login": "bob", "name": "r1-bob-1a2b"])])

    server.command(carol, "op3", "join", ["name": "r1"])
    XCTAssertEqual(
      server.take(carol),
      [
        dataStatus("op3"),
        roomEvent("r1", "STATE", ["alice", ["login": "bob", "name": "r1-bob-1a2b"]]),
      ])
    XCTAssertEqual(server.take(alice), [roomEvent("r1", "JOINED", "carol")])
    XCTAssertEqual(server.take(bob), [roomEvent("r1", "JOINED", "carol")])
    XCTAssertEqual(server.core.roomMembers("r1"), ["alice", "bob", "carol"])
  }

  func testLeaveEndsTheMembersStreamsThenTellsTheOthersLeft() {
    let server = ServerHarness()
    joinThree(server)
    server.roomPublish(bob, "pub-b", room: "r1", name: "r1-bob-1a2b")
    server.roomPlay(alice, "play-a", room: "r1", name: "r1-bob-1a2b")
    server.roomPlay(carol, "play-c", room: "r1", name: "r1-bob-1a2b")
    for id in [alice, bob, carol] { _ = server.take(id) }

    server.command(bob, "op9", "leave", ["name": "r1"])
    let bobGot = server.take(bob)
    assertStatus(bobGot.first, "pub-b", "UNPUBLISHED", info: "Stopped by user")
    XCTAssertEqual(bobGot.dropFirst(), [dataStatus("op9")])
    let unpublished = roomEvent("r1", "UNPUBLISHED", ["login": "bob", "name": "r1-bob-1a2b"])
    let aliceGot = server.take(alice)
    XCTAssertEqual(aliceGot.count, 3)
    XCTAssertEqual(aliceGot.first, unpublished)
    assertStatus(aliceGot.dropFirst().first, "play-a", "STOPPED", info: "Stopped by publisher stop")
    XCTAssertEqual(aliceGot.last, roomEvent("r1", "LEFT", "bob"))
    XCTAssertEqual(server.take(carol).filter { $0.name == "OnDataEvent" }.count, 2)
    XCTAssertEqual(server.core.roomMembers("r1"), ["alice", "carol"])
    XCTAssertEqual(server.core.streamCount, 0)

    // Leaving again, or a room never joined: FAILED, nothing sent to the others.
    server.command(bob, "op10", "leave", ["name": "r1"])
    XCTAssertEqual(server.take(bob), [dataStatus("op10", failed: "Not joined to this room")])
    XCTAssertEqual(server.take(alice), [])
  }

  func testSocketDropEndsStreamsAndLeavesEveryRoomAndEmptyRoomsVanish() {
    let server = ServerHarness()
    joinThree(server)
    server.command(alice, "op5", "join", ["name": "r2"])
    server.roomPublish(alice, "pub-a", room: "r1", name: "r1-alice")
    for id in [alice, bob, carol] { _ = server.take(id) }
    XCTAssertEqual(server.core.roomCount, 2)

    server.close(alice)
    XCTAssertEqual(
      server.take(bob),
      [
        roomEvent("r1", "UNPUBLISHED", ["login": "alice", "name": "r1-alice"]),
        roomEvent("r1", "LEFT", "alice"),
      ])
    XCTAssertEqual(server.core.roomCount, 1)
    XCTAssertEqual(server.core.roomMembers("r2"), [])
    server.close(bob)
    server.close(carol)
    XCTAssertEqual(server.core.roomCount, 0)
    XCTAssertEqual(server.core.roomSessionCount, 0)
    XCTAssertEqual(server.core.streamCount, 0)
    XCTAssertEqual(server.engine.live, [])
  }

  func testMessageReachesOnlyItsAddresseeOnce() {
    let server = ServerHarness()
    joinThree(server)
    for id in [alice, bob, carol] { _ = server.take(id) }
    server.command(
      alice, "m1", "sendMessage", ["roomConfig": ["name": "r1"], "to": "bob", "text": "hi\nbob"])
    XCTAssertEqual(server.take(alice), [dataStatus("m1")])
    XCTAssertEqual(
      server.take(bob),
      [
        roomEvent(
          "r1", "MESSAGE",
          ["from": "alice", "to": "bob", "text": "hi\nbob", "roomConfig": ["name": "r1"]])
      ])
    XCTAssertEqual(server.take(carol), [])

    server.close(carol)
    _ = server.take(alice)
    XCTAssertEqual(server.take(bob), [roomEvent("r1", "LEFT", "carol")])
    server.command(
      alice, "m2", "sendMessage", ["roomConfig": ["name": "r1"], "to": "carol", "text": "x"])
    XCTAssertEqual(server.take(alice), [dataStatus("m2", failed: "Participant not found")])
    server.command(
      alice, "m3", "sendMessage", ["roomConfig": ["name": "r1"], "to": "alice", "text": "me"])
    XCTAssertEqual(server.take(alice), [dataStatus("m3", failed: "Participant not found")])
    server.command(
      alice, "m4", "sendMessage", ["roomConfig": ["name": "zz"], "to": "bob", "text": "x"])
    XCTAssertEqual(server.take(alice), [dataStatus("m4", failed: "Not joined to this room")])
    XCTAssertEqual(server.take(bob), [])
  }

  func testJoinFailuresNameTheReasonAndChangeNothing() {
    var configuration = WCSServerConfiguration()
    configuration.rooms.maxParticipantsPerRoom = 2
    configuration.rooms.maxRooms = 1
    let server = ServerHarness(configuration: configuration)
    server.roomConnect(alice, "alice")
    server.roomConnect(bob, "alice")
    server.roomConnect(carol, "carol")
    let dave: WCSConnectionID = 4
    server.roomConnect(dave, "dave")
    server.command(alice, "j1", "join", ["name": "r1"])
    _ = server.take(alice)

    server.command(alice, "j2", "join", ["name": "r1"])
    XCTAssertEqual(server.take(alice), [dataStatus("j2", failed: "Already joined this room")])
    server.command(bob, "j3", "join", ["name": "r1"])
    XCTAssertEqual(
      server.take(bob), [dataStatus("j3", failed: "Login is already in use in this room")])
    server.command(carol, "j4", "join", ["name": "r2"])
    XCTAssertEqual(server.take(carol), [dataStatus("j4", failed: "Server room limit reached")])
    server.command(carol, "j5", "join", ["name": "r1"])
    _ = server.take(carol)
    server.command(dave, "j6", "join", ["name": "r1"])
    XCTAssertEqual(server.take(dave), [dataStatus("j6", failed: "Room is full")])
    XCTAssertEqual(server.take(alice), [roomEvent("r1", "JOINED", "carol")])
    XCTAssertEqual(server.core.roomMembers("r1"), ["alice", "carol"])
  }

  func testBadNamesAndCommandsAreRefusedWithTheirReason() {
    let server = ServerHarness()
    server.roomConnect(alice, "alice")
    server.roomConnect(bob, "bo\u{7}b")
    server.roomConnect(carol, String(repeating: "c", count: 10_000))
    let anonymous: WCSConnectionID = 4
    server.open(anonymous)
    server.receive(anonymous, "connection", ["appKey": "roomApp"])
    _ = server.take(anonymous)

    let cases: [(WCSConnectionID, String, JSONValue, String)] = [
      (
        alice, "join", ["name": "r\u{0}1"],
        "Bad request: options.name must not contain control characters"
      ),
      (
        alice, "join", ["name": .string(String(repeating: "r", count: 10_000))],
        "Bad request: options.name must be at most 96 UTF-8 bytes, got 10000"
      ),
      (alice, "join", ["name": ""], "Bad request: options.name is missing"),
      (alice, "join", ["name": 7], "Bad request: name must be a string"),
      (alice, "dance", ["name": "r1"], "Bad request: command Unknown room command: dance"),
      (
        bob, "join", ["name": "r1"], "Bad request: custom.login must not contain control characters"
      ),
      (
        carol, "join", ["name": "r1"],
        "Bad request: custom.login must be at most 64 UTF-8 bytes, got 10000"
      ),
      (anonymous, "join", ["name": "r1"], "Bad request: custom.login of connection is missing"),
    ]
    for (index, (id, command, options, info)) in cases.enumerated() {
      server.command(id, "b\(index)", command, options)
      XCTAssertEqual(server.take(id), [dataStatus("b\(index)", failed: info)], "case \(index)")
    }
    server.receive(alice, "sendData", ["operationId": "p1", "payload": "join"])
    XCTAssertEqual(
      server.take(alice), [dataStatus("p1", failed: "Bad request: payload must be an object")])
    XCTAssertEqual(server.core.roomCount, 0)
  }

  func testRoomStreamsNeedMembershipAndTheMembersOwnName() {
    let server = ServerHarness()
    joinThree(server)
    for id in [alice, bob, carol] { _ = server.take(id) }
    server.roomPublish(alice, "p1", room: "r1", name: "r1-bob-1a2b")
    assertStatus(
      server.take(alice).last, "p1", "FAILED",
      info: "Room stream name must start with <room>-<login>")
    server.roomPublish(alice, "p2", room: "r1", name: "r1-alicex")
    assertStatus(
      server.take(alice).last, "p2", "FAILED",
      info: "Room stream name must start with <room>-<login>")
    server.roomPublish(alice, "p3", room: "r9", name: "r9-alice")
    assertStatus(server.take(alice).last, "p3", "FAILED", info: "Not joined to this room")
    XCTAssertEqual(server.take(bob), [])
    XCTAssertEqual(server.core.streamCount, 0)
  }

  func testACommandFloodIsRefusedWhileOthersGoOn() {
    var configuration = WCSServerConfiguration()
    configuration.rooms.commandBurst = 10
    configuration.rooms.commandsPerSecond = 5
    let server = ServerHarness(configuration: configuration)
    joinThree(server)
    for id in [alice, bob, carol] { _ = server.take(id) }
    for index in 0..<1000 {
      server.command(
        alice, "f\(index)", "sendMessage",
        ["roomConfig": ["name": "r1"], "to": "bob", "text": .string("flood \(index)")])
    }
    let replies = server.take(alice)
    XCTAssertEqual(replies.count, 1000)
    // The burst less the join already spent.
    let accepted = replies.filter { $0.object["status"] == "ACCEPTED" }.count
    XCTAssertEqual(accepted, 9)
    XCTAssertEqual(replies.last, dataStatus("f999", failed: "Too many room commands"))
    XCTAssertEqual(server.take(bob).count, 9)
    // Carol's budget is her own; a second later Alice has 5 more.
    server.command(
      carol, "c1", "sendMessage", ["roomConfig": ["name": "r1"], "to": "bob", "text": "hello"])
    XCTAssertEqual(server.take(carol), [dataStatus("c1")])
    server.now += 1000
    for index in 0..<6 {
      server.command(
        alice, "g\(index)", "sendMessage", ["roomConfig": ["name": "r1"], "to": "bob", "text": "x"])
    }
    XCTAssertEqual(server.take(alice).filter { $0.object["status"] == "ACCEPTED" }.count, 5)
    // Out of budget, `leave` still goes through: a flood never pins a member in a room.
    server.command(alice, "l1", "leave", ["name": "r1"])
    XCTAssertEqual(server.take(alice), [dataStatus("l1")])
    XCTAssertEqual(server.core.roomMembers("r1"), ["bob", "carol"])
  }

  func testOtherAppsKeepAcceptingEverySendData() {
    let server = ServerHarness()
    server.connect(alice)
    server.command(alice, "d1", "join", ["name": "r1"])
    XCTAssertEqual(server.take(alice), [dataStatus("d1")])
    XCTAssertEqual(server.core.roomCount, 0)
  }

  // MARK: - Helpers

  private func joinThree(_ server: ServerHarness) {
    for (id, login) in [(alice, "alice"), (bob, "bob"), (carol, "carol")] {
      server.roomConnect(id, login)
      server.command(id, "join-\(login)", "join", ["name": "r1"])
    }
  }
}

private func dataStatus(_ operationId: String, failed info: String? = nil) -> WCSMessage {
  var object: [String: JSONValue] = [
    "operationId": .string(operationId), "status": info == nil ? "ACCEPTED" : "FAILED",
  ]
  if let info { object["info"] = .string(info) }
  return WCSMessage(name: "DataStatusEvent", data: [.object(object)])
}

private func roomEvent(_ room: String, _ name: String, _ info: JSONValue) -> WCSMessage {
  WCSMessage(
    name: "OnDataEvent",
    data: [["payload": ["roomName": .string(room), "name": .string(name), "info": info]]])
}

extension ServerHarness {
  /// Opens `id` as a `roomApp` session of `login`, discarding the handshake replies.
  func roomConnect(_ id: WCSConnectionID, _ login: String) {
    open(id)
    receive(id, "connection", ["appKey": "roomApp", "custom": ["login": .string(login)]])
    _ = take(id)
  }

  func command(
    _ id: WCSConnectionID, _ operationId: String, _ command: String, _ options: JSONValue
  ) {
    receive(
      id, "sendData",
      [
        "operationId": .string(operationId),
        "payload": ["command": .string(command), "options": options],
      ])
  }

  func roomPublish(_ id: WCSConnectionID, _ mediaSessionId: String, room: String, name: String) {
    var object = Self.streamObject(.string(mediaSessionId), name: name, published: true)
    object = object.merging(["custom": ["name": .string(room)]])
    receive(id, "publishStream", object)
  }

  func roomPlay(_ id: WCSConnectionID, _ mediaSessionId: String, room: String, name: String) {
    var object = Self.streamObject(.string(mediaSessionId), name: name, published: false)
    object = object.merging(["custom": ["name": .string(room)]])
    receive(id, "playStream", object)
  }
}

extension JSONValue {
  fileprivate func merging(_ other: [String: JSONValue]) -> JSONValue {
    guard var members = objectValue else { return self }
    for (key, value) in other { members[key] = value }
    return .object(members)
  }
}
