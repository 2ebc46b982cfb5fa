import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// Refusals, server failures, malformed input and connection loss.
final class FailureTests: XCTestCase {
  func testRefusedConnectionFailsWithTheServersReason() async throws {
    let h = try Harness()
    h.transport.onSend { [transport = h.transport] text in
      guard text.contains(#""message":"connection""#) else { return }
      transport.push(
        WCSMessage(
          name: "fail",
          data: [["status": "FAILED", "info": "Forbidden", "apiMethod": "ConnectionStatusEvent"]]))
    }
    do {
      try await h.session.connect()
      XCTFail("connect must throw")
    } catch let error as WCSError {
      XCTAssertEqual(error, .connectionRefused(reason: "Forbidden"))
      XCTAssertEqual(error.localizedDescription, "server refused the connection: Forbidden")
    }
    h.settle()
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusFailed)
    XCTAssertEqual(h.session.getFailureReason(), "Forbidden")
    XCTAssertEqual(h.transport.closeCodes, [1000], "the client closes the refused socket")
    XCTAssertEqual(
      h.sessionStatuses.value, [.fpwcsSessionStatusPending, .fpwcsSessionStatusFailed])
    XCTAssertFalse(
      FPWCSApi2.getSessions().contains { $0 === h.session }, "failed sessions leave the list")
  }

  func testPublishingANameInUseFailsWithMappedInfo() async throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("taken")
    h.transport.onSend { [transport = h.transport] text in
      guard let message = try? WCSMessageCodec.decode(text), message.name == "publishStream",
        let id = message.argument?["mediaSessionId"]
      else { return }
      transport.push(
        WCSMessage(
          name: "notifyStreamStatusEvent",
          data: [
            [
              "mediaSessionId": id, "name": "taken", "status": "FAILED",
              "info": "Stream name is already in use",
            ]
          ]))
    }
    do {
      try await stream.publish()
      XCTFail("publish must throw")
    } catch let error as WCSError {
      XCTAssertEqual(
        error,
        .streamFailed(
          statusInfo: .fpwcsStreamStatusInfoStreamNameAlreadyInUse,
          info: "Stream name is already in use"))
    }
    h.settle()
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(stream.getStatusInfo(), .fpwcsStreamStatusInfoStreamNameAlreadyInUse)
    XCTAssertEqual(stream.getInfo(), "Stream name is already in use")
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusFailed])
    XCTAssertTrue(h.backend.connections[0].isClosed, "media released on FAILED")
  }

  func testFailMessageForAStreamFailsIt() throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("s")
    try stream.play()
    h.settle()
    h.push(
      "fail",
      [
        [
          "status": "FAILED", "info": "Forbidden", "apiMethod": "StreamStatusEvent",
          "id": .string(stream.getStreamID()),
        ]
      ])
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(stream.getInfo(), "Forbidden")
    XCTAssertEqual(stream.getStatusInfo(), .fpwcsStreamStatusInfoUnknown)
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPending, .fpwcsStreamStatusFailed])
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusEstablished)
  }

  func testRemoteSDPBeforeTheOfferIsBufferedAndAppliedAfter() throws {
    let backend = FakeMediaBackend(manualOffers: true)
    let h = try Harness(backend: backend)
    h.establish()
    // An answer for an id nobody created yet is kept, not fatal.
    h.push("setRemoteSDP", ["not-created-yet", "v=0\r\n", true])
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusEstablished)
    let (stream, _) = try h.makeStream("early")
    try stream.publish()
    h.settle()
    XCTAssertTrue(h.sent("publishStream").isEmpty, "no offer yet")
    let answer = "v=0\r\nm=audio 31004 RTP/SAVPF 111\r\n"
    h.answer(stream, sdp: answer)
    let connection = try XCTUnwrap(backend.connections.first)
    XCTAssertEqual(connection.answers, [], "answer waits for the local offer")
    backend.completeOffers()
    h.settle()
    XCTAssertEqual(h.sent("publishStream").count, 1)
    XCTAssertEqual(connection.answers, [answer])
    XCTAssertEqual(connection.log, ["offer", "answer"])
  }

  func testMalformedFramesAndWrongTypesAreSkipped() throws {
    let h = try Harness()
    h.establish()
    let (stream, _) = try h.makeStream("s")
    try stream.publish()
    h.settle()
    let id = JSONValue.string(stream.getStreamID())
    h.pushText("not json at all")
    h.pushText("[1,2,3]")
    h.pushText(#"{"message":5}"#)
    h.pushText(#"{"message":"ping","data":"text"}"#)
    h.pushText(#"{"message":"notifyStreamStatusEvent","data":["PUBLISHING"]}"#)
    h.push("notifyStreamStatusEvent", [["mediaSessionId": 42, "status": "PUBLISHING"]])
    h.push("notifyStreamStatusEvent", [["mediaSessionId": id, "status": 17]])
    h.push("notifyStreamStatusEvent", [["mediaSessionId": id, "status": "NO_SUCH_STATUS"]])
    h.push("setRemoteSDP", [id])
    h.push("setRemoteSDP", [["x": 1], "sdp"])
    h.push("notifyStreamEvent", [["mediaSessionId": id]])
    h.push("DataStatusEvent", [["operationId": "unknown", "status": "ACCEPTED"]])
    h.push("availableStream", [[:]])
    h.push("fail", ["just a string"])
    h.push("someFutureMessage", [["a": 1]])
    h.pushText(#"{"message":"getUserData","data":[{"status":"ESTABLISHED","authToken":"other"}]}"#)
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusEstablished)
    XCTAssertEqual(
      h.session.getAuthToken(), "/192.168.10.20:53122/192.168.10.5:8080",
      "a late getUserData is ignored")
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusPending)
    XCTAssertGreaterThanOrEqual(h.session.skippedInputs.count, 12)
    // Still alive: answers ping, takes a real status.
    let pongsBefore =
      h.sent("pong").count + h.transport.sentMessages.filter { $0.name == "pong" }.count
    h.push("ping", [])
    XCTAssertEqual(h.transport.sentMessages.filter { $0.name == "pong" }.count, pongsBefore / 2 + 1)
    h.streamStatus(stream, "PUBLISHING")
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusPublishing)
  }

  func testServerCloseMidPublishDisconnectsAndFailsTheStream() throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("live")
    try stream.publish()
    h.settle()
    h.answer(stream)
    h.streamStatus(stream, "PUBLISHING")
    h.transport.simulateClose(code: 1006, reason: "")
    h.settle()
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusDisconnected)
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(stream.getStatusInfo(), .fpwcsStreamStatusInfoStoppedBySessionDisconnect)
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPublishing, .fpwcsStreamStatusFailed])
    XCTAssertTrue(h.backend.connections[0].isClosed)
    XCTAssertEqual(
      h.sessionStatuses.value,
      [.fpwcsSessionStatusPending, .fpwcsSessionStatusEstablished, .fpwcsSessionStatusDisconnected])
  }

  func testTransportFailureFailsSessionAndStreams() throws {
    let h = try Harness()
    h.establish()
    let (stream, _) = try h.makeStream("live")
    try stream.play()
    h.settle()
    h.transport.simulateFailure(.connectionFailed(reason: "reset by peer"))
    h.settle()
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusFailed)
    XCTAssertEqual(h.session.getFailureReason(), "connection failed: reset by peer")
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
  }

  func testCloseBeforeEstablishedFailsConnect() async throws {
    let h = try Harness()
    h.transport.onSend { [transport = h.transport] _ in
      transport.simulateClose(code: 1011, reason: "bye")
    }
    do {
      try await h.session.connect()
      XCTFail("connect must throw")
    } catch let error as WCSError {
      XCTAssertEqual(
        error, .connectionFailed(reason: "connection closed before ESTABLISHED (code 1011, bye)"))
    }
  }

  func testPublishBeforeEstablishedThrows() throws {
    let h = try Harness()
    let (stream, _) = try h.makeStream("s")
    XCTAssertThrowsError(try stream.publish()) { error in
      XCTAssertEqual(
        error as? WCSError, .invalidSessionState(.fpwcsSessionStatusNew, operation: "publish"))
    }
    h.establish()
    try stream.publish()
    XCTAssertThrowsError(try stream.publish()) { error in
      XCTAssertEqual(
        error as? WCSError, .invalidStreamState(.fpwcsStreamStatusPending, operation: "publish"))
    }
  }

  func testMediaEngineFailureThrowsFromPublish() throws {
    let h = try Harness(backend: FakeMediaBackend(failConnections: .deviceUnavailable("no camera")))
    h.establish()
    let (stream, _) = try h.makeStream("s")
    XCTAssertThrowsError(try stream.publish()) { error in
      XCTAssertEqual(error as? WCSError, .media(.deviceUnavailable("no camera")))
    }
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusNew)
  }

  func testInvalidOptionsThrow() {
    let options = FPWCSApi2SessionOptions()
    XCTAssertThrowsError(try FPWCSApi2.createSession(options)) { error in
      XCTAssertEqual(error as? WCSError, .invalidOptions("urlServer must be provided"))
    }
    options.urlServer = "http://host"
    XCTAssertThrowsError(try WCSSession(options)) { error in
      XCTAssertEqual(
        error as? WCSError,
        .invalidOptions("urlServer must be a ws:// or wss:// URL, got 'http://host'"))
    }
    // Schemes are case-insensitive (RFC 3986 §3.1).
    options.urlServer = "WS://host"
    XCTAssertNoThrow(try WCSSession(options))
    options.urlServer = "Wss://host"
    XCTAssertNoThrow(try WCSSession(options))
    options.urlServer = "ws://host"
    options.custom = ["bad": Date()]
    XCTAssertThrowsError(try FPWCSApi2.createSession(options)) { error in
      guard case .invalidArgument(let text)? = error as? WCSError else {
        return XCTFail("\(error)")
      }
      XCTAssertTrue(text.hasPrefix("custom.bad"), text)
    }
  }

  func testDefaultTransportIsTheWebSocketClientAndReportsARefusedConnection() async throws {
    XCTAssertTrue(WCSApi2Environment.makeSignalingTransport() is WebSocketTransport)
    let options = FPWCSApi2SessionOptions()
    options.urlServer = "ws://127.0.0.1:9/"
    options.mediaBackend = FakeMediaBackend()
    let session = try WCSSession(options)
    do {
      try await session.connect()
      XCTFail("connect must throw")
    } catch let error as WCSError {
      guard case .connectionFailed(let reason) = error else { return XCTFail("\(error)") }
      XCTAssertFalse(reason.isEmpty)
    }
  }
}
