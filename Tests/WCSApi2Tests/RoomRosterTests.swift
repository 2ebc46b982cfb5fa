import WCSTransport
import XCTest

@testable import WCSApi2

/// The client's room state (wcs-rooms-and-calls.md §A.4, §A.10): what a server's events do to
/// it, and the events it skips.
final class RoomRosterTests: XCTestCase {
  private func event(_ name: String, _ info: JSONValue, room: JSONValue = "r1") -> RoomEvent? {
    try? RoomEvent.parse(["roomName": room, "name": .string(name), "info": info]).get()
  }

  private func apply(_ roster: inout RoomRoster, _ name: String, _ info: JSONValue) -> String {
    guard let parsed = event(name, info) else { return "unparsed" }
    switch roster.apply(parsed, ownLogin: "me") {
    case .success(let change): return "\(change)"
    case .failure(let skipped): return "skipped: \(skipped.reason)"
    }
  }

  func testStateListsMembersWithTheirStreamsAndDropsOurselves() throws {
    let parsed = try XCTUnwrap(
      event(
        "STATE",
        [
          "bob", ["login": "carol", "name": "r1-carol-1"],
          ["login": "carol", "name": "r1-carol-2"],
          "me",
        ]))
    var roster = RoomRoster()
    XCTAssertEqual(try roster.apply(parsed, ownLogin: "me").get(), .state)
    XCTAssertEqual(
      roster.members,
      [
        RoomRoster.Member(login: "bob"),
        RoomRoster.Member(login: "carol", streams: ["r1-carol-1", "r1-carol-2"]),
      ])
  }

  func testEventsFollowTheProtocolOrderAndStrayOnesAreSkipped() {
    var roster = RoomRoster()
    XCTAssertEqual(apply(&roster, "JOINED", "bob"), "skipped: room event before STATE")
    XCTAssertEqual(apply(&roster, "STATE", []), "state")
    XCTAssertEqual(apply(&roster, "JOINED", "bob"), #"joined(login: "bob")"#)
    XCTAssertEqual(apply(&roster, "JOINED", "bob"), "skipped: JOINED for known bob")
    XCTAssertEqual(apply(&roster, "JOINED", "me"), "skipped: JOINED about ourselves")
    XCTAssertEqual(
      apply(&roster, "PUBLISHED", ["login": "eve", "name": "r1-eve"]),
      "skipped: PUBLISHED for unknown eve")
    XCTAssertEqual(
      apply(&roster, "PUBLISHED", ["login": "bob", "name": "r1-bob-1"]),
      #"published(login: "bob", stream: "r1-bob-1")"#)
    XCTAssertEqual(roster.member("bob")?.streams, ["r1-bob-1"])
    XCTAssertEqual(
      apply(&roster, "FAILED", ["login": "bob", "name": "r1-bob-1"]),
      #"unpublished(login: "bob", stream: "r1-bob-1")"#)
    XCTAssertEqual(
      apply(&roster, "UNPUBLISHED", ["login": "bob", "name": "r1-bob-1"]),
      "skipped: UNPUBLISHED for an unknown stream of bob")
    XCTAssertEqual(apply(&roster, "STATE", []), "skipped: a second STATE")
    XCTAssertEqual(apply(&roster, "LEFT", "bob"), #"left(login: "bob")"#)
    XCTAssertEqual(apply(&roster, "LEFT", "bob"), "skipped: LEFT for unknown bob")
    XCTAssertEqual(roster.members, [])
  }

  func testMalformedAndOversizedEventsAreSkippedWithTheirReason() {
    let reasons = [
      RoomEvent.parse(nil),
      RoomEvent.parse(["name": "JOINED", "info": "bob"]),
      RoomEvent.parse(["roomName": "r1", "name": "JOINED", "info": 7]),
      RoomEvent.parse(["roomName": "r1", "name": "STATE", "info": "bob"]),
      RoomEvent.parse(["roomName": "r1", "name": "STATE", "info": [["login": "x"]]]),
      RoomEvent.parse([
        "roomName": "r1", "name": "STATE",
        "info": .array(Array(repeating: "bob", count: 5000)),
      ]),
      RoomEvent.parse(["roomName": "r1", "name": "MESSAGE", "info": ["from": "bob"]]),
      RoomEvent.parse([
        "roomName": "r1", "name": "MESSAGE",
        "info": ["from": "bob", "text": .string(String(repeating: "x", count: 1 << 21))],
      ]),
      RoomEvent.parse([
        "roomName": .string(String(repeating: "r", count: 2000)), "name": "LEFT", "info": "bob",
      ]),
      RoomEvent.parse(["roomName": "r1", "name": "DANCE", "info": "bob"]),
    ].map { result -> String in
      if case .failure(let skipped) = result { return skipped.reason }
      return "parsed"
    }
    XCTAssertEqual(
      reasons,
      [
        "payload is not an object", "no roomName", "JOINED info is not a login",
        "STATE info is not an array", "STATE entry is neither a login nor {login, name}",
        "STATE has 5000 entries", "MESSAGE info is not {from, text}",
        "MESSAGE text of 2097152 bytes", "no roomName", "unknown room event DANCE",
      ])
  }

  func testCommandsHaveTheWebSDKsShape() {
    let join = RoomCommands.join(room: "r1", record: nil)
    XCTAssertEqual(join["command"] as? String, "join")
    XCTAssertEqual((join["options"] as? [String: Any])?.keys.sorted(), ["name"])
    let message = RoomCommands.sendMessage(room: "r1", to: "bob", text: "hi")
    let options = message["options"] as? [String: Any]
    XCTAssertEqual((options?["roomConfig"] as? [String: String]), ["name": "r1"])
    XCTAssertEqual(options?["to"] as? String, "bob")
    XCTAssertEqual(options?["text"] as? String, "hi")
  }
}
