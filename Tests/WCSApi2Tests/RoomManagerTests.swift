import Foundation
import Synchronization
import WCSTransport
import XCTest

@testable import WCSApi2

/// `FPWCSApi2RoomManager` and `FPWCSApi2Room` against a scripted server on `MockTransport`
/// (wcs-rooms-and-calls.md §A.2–A.4, §A.9): what goes on the wire, and the callbacks.
final class RoomManagerTests: XCTestCase {
  private let transport = MockTransport()
  private let callbackQueue = DispatchQueue(label: "room.test.callbacks")

  private func makeManager() throws -> FPWCSApi2RoomManager {
    let options = FPWCSApi2RoomManagerOptions()
    options.urlServer = "ws://192.168.10.5:8080/"
    options.username = "alice"
    options.signalingTransport = transport
    options.mediaBackend = FakeMediaBackend()
    options.callbackQueue = callbackQueue
    options.bandwidthSampleInterval = 0
    return try FPWCSApi2.createRoomManager(options)
  }

  private func settle(_ manager: FPWCSApi2RoomManager) {
    for _ in 0..<4 {
      transport.drain()
      manager.getSession().work.sync {}
      callbackQueue.sync {}
    }
  }

  private func push(_ manager: FPWCSApi2RoomManager, _ name: String, _ data: JSONValue) {
    transport.push(WCSMessage(name: name, data: [data]))
    settle(manager)
  }

  private func establish(_ manager: FPWCSApi2RoomManager) {
    settle(manager)
    push(manager, "getUserData", ["status": "ESTABLISHED", "authToken": "/a/b"])
  }

  private func lastOperationId() -> JSONValue? {
    transport.sentMessages.last { $0.name == "sendData" }?.argument?["operationId"]
  }

  func testTheSessionIsARoomAppSessionWhoseLoginIsTheUsername() throws {
    let manager = try makeManager()
    establish(manager)
    let connection = try XCTUnwrap(transport.sentMessages.first { $0.name == "connection" })
    XCTAssertEqual(connection.argument?["appKey"], "roomApp")
    XCTAssertEqual(connection.argument?["custom"], ["login": "alice"])
    // Connected happened before the callback was set: it still runs, once.
    let events = Mutex<[String]>([])
    manager.on(.fpwcsRoomManagerEventConnected) { _ in events.withLock { $0.append("connected") } }
    settle(manager)
    XCTAssertEqual(events.withLock { $0 }, ["connected"])
    XCTAssertEqual(
      FPWCSApi2RoomManager.roomManagerEventToString(.fpwcsRoomManagerEventFailed), "FAILED")
    XCTAssertThrowsError(try FPWCSApi2.createRoomManager(FPWCSApi2RoomManagerOptions()))
    manager.disconnect()
  }

  func testARefusedJoinReachesAFailedCallbackSetAfterTheRefusal() throws {
    let manager = try makeManager()
    establish(manager)
    let options = FPWCSApi2RoomOptions()
    options.name = "r1"
    options.record = true
    let room = manager.join(options)
    settle(manager)
    let join = try XCTUnwrap(transport.sentMessages.last { $0.name == "sendData" })
    XCTAssertEqual(
      join.argument?["payload"], ["command": "join", "options": ["name": "r1", "record": true]])
    push(
      manager, "DataStatusEvent",
      ["operationId": lastOperationId() ?? .null, "status": "FAILED", "info": "Room is full"])
    let failures = Mutex<[String?]>([])
    room.onFailedCallback { _, info in failures.withLock { $0.append(info) } }
    settle(manager)
    XCTAssertEqual(failures.withLock { $0 }, ["Room is full"])
    XCTAssertFalse(room.isJoined())
    XCTAssertEqual(
      manager.getRooms().count, 0, "a refused room is forgotten; it may be joined again")
    // Events for it are ignored now.
    push(manager, "OnDataEvent", ["payload": ["roomName": "r1", "name": "STATE", "info": []]])
    XCTAssertFalse(room.isJoined())
    manager.disconnect()
  }

  func testStateCompletesTheJoinAndEventsReachTheCallbacksInOrder() throws {
    let manager = try makeManager()
    establish(manager)
    let options = FPWCSApi2RoomOptions()
    options.name = "r1"
    let room = manager.join(options)
    let seen = Mutex<[String]>([])
    room.onStateCallback { room in
      seen.withLock { $0.append("state \(room?.getParticipants().keys.sorted() ?? [])") }
    }
    for event in [
      kFPWCSRoomParticipantEvent.fpwcsRoomParticipantEventJoined,
      .fpwcsRoomParticipantEventPublished, .fpwcsRoomParticipantEventUnpublished,
      .fpwcsRoomParticipantEventLeft,
    ] {
      room.on(event) { _, participant in
        seen.withLock {
          $0.append(
            "\(event.rawValue) \(participant?.getName() ?? "?") \(participant?.getStreamName() ?? "-")"
          )
        }
      }
    }
    room.onMessageCallback { _, message in
      seen.withLock { $0.append("message \(message?.from ?? "?"): \(message?.text ?? "")") }
    }
    settle(manager)
    let roomEvent = { (name: String, info: JSONValue) in
      self.push(
        manager, "OnDataEvent",
        ["payload": ["roomName": "r1", "name": .string(name), "info": info]])
    }
    roomEvent("STATE", [["login": "bob", "name": "r1-bob-1"]])
    XCTAssertEqual(room.getParticipants()["bob"]?.getStreamName(), "r1-bob-1")
    roomEvent("JOINED", "carol")
    roomEvent("PUBLISHED", ["login": "carol", "name": "r1-carol-1"])
    roomEvent("MESSAGE", ["from": "carol", "to": "alice", "text": "hi"])
    roomEvent("UNPUBLISHED", ["login": "carol", "name": "r1-carol-1"])
    roomEvent("LEFT", "carol")
    roomEvent("JOINED", "alice")
    push(manager, "OnDataEvent", ["payload": ["roomName": "other", "name": "JOINED", "info": "x"]])
    XCTAssertEqual(
      seen.withLock { $0 },
      [
        "state [\"bob\"]", "0 carol -", "2 carol r1-carol-1", "message carol: hi", "3 carol -",
        "1 carol -",
      ])
    XCTAssertTrue(
      manager.getSession().skippedInputs.contains("room r1: JOINED about ourselves"),
      "\(manager.getSession().skippedInputs)")

    // Messages to a participant, and leave with its cleanup.
    room.getParticipants()["bob"]?.sendMessage("hello bob")
    settle(manager)
    XCTAssertEqual(
      transport.sentMessages.last { $0.name == "sendData" }?.argument?["payload"],
      [
        "command": "sendMessage",
        "options": ["roomConfig": ["name": "r1"], "to": "bob", "text": "hello bob"],
      ])
    room.leave(nil)
    settle(manager)
    XCTAssertEqual(
      transport.sentMessages.last { $0.name == "sendData" }?.argument?["payload"],
      ["command": "leave", "options": ["name": "r1"]])
    XCTAssertEqual(room.getParticipants().count, 0)
    XCTAssertThrowsError(try room.publish(nil))
    manager.disconnect()
  }

  func testAJoinPendingWhenTheSessionEndsThrowsDisconnected() async throws {
    let manager = try makeManager()
    establish(manager)
    let options = FPWCSApi2RoomOptions()
    options.name = "r1"
    let task = Task { try await manager.join(options) }
    try await Task.sleep(nanoseconds: 50_000_000)
    manager.disconnect()
    do {
      _ = try await task.value
      XCTFail("the join completed")
    } catch let error as WCSError {
      XCTAssertEqual(error, .disconnected)
    }
    // Joining on the ended session fails at once with the reason.
    let again = FPWCSApi2RoomOptions()
    again.name = "r1"
    do {
      _ = try await manager.join(again)
      XCTFail("joined on a disconnected session")
    } catch let error as WCSError {
      XCTAssertEqual(error, .dataRejected(info: "cannot join: session is DISCONNECTED"))
    }
  }
}
