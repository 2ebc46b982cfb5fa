import WCSLocalServer
import WCSTransport
import XCTest

/// Garbage never crashes the core, never ends the session, never touches another session.
final class MalformedInputTests: XCTestCase {
  func testGarbageFramesGetFailAndTheSessionStillWorks() {
    let server = ServerHarness()
    let c: WCSConnectionID = 1
    let bystander: WCSConnectionID = 2
    server.connect(c)
    server.connect(bystander)
    server.publish(bystander, "pub-b", name: "b")
    _ = server.take(bystander)
    let garbage = [
      "not json", "", "{", "5", "-1.5e3", "[]", "[1,2]", "null", "true", #""text""#,
      #"{"message":5}"#, #"{"data":[]}"#, #"{"message":null}"#,
      #"{"message":"publishStream","data":5}"#,
      #"{"message":"publishStream","data":[5]}"#, #"{"message":"publishStream","data":[]}"#,
      #"{"message":"playStream","data":["x"]}"#, #"{"message":"stopStream","data":[[1]]}"#,
      #"{"message":"publishStream","data":[{"mediaSessionId":5,"name":"x","sdp":"v=0"}]}"#,
      #"{"message":"sendStreamEvent","data":[{"mediaSessionId":"pub-b"}]}"#,
      #"{"message":"sendData","data":[{"operationId":7}]}"#,
      #"{"message":"availableStream","data":[{"name":["x"]}]}"#,
      #"{"message":"connection","data":[{}]}"#,
      String(repeating: "[", count: 10_000),
    ]
    for frame in garbage {
      server.receive(c, frame)
      let out = server.take(c)
      XCTAssertEqual(out.map(\.name), ["fail"], frame)
      XCTAssertEqual(out.first?.object["status"], "FAILED", frame)
      XCTAssertNotNil(out.first?.object["info"]?.stringValue, frame)
    }
    server.receive(c, #"{"message":"noSuchMessage","data":[{}]}"#)
    XCTAssertEqual(server.take(c), [], "unknown message names are ignored")
    XCTAssertEqual(server.take(bystander), [])
    XCTAssertEqual(server.core.sessionCount, 2)
    XCTAssertTrue(server.closes.isEmpty)

    server.publish(c, "pub-c", name: "c")
    XCTAssertEqual(server.take(c).map(\.name), ["setRemoteSDP", "notifyStreamStatusEvent"])
  }

  func testBadFieldsWithAKnownIdFailThatStream() {
    let server = ServerHarness()
    let c: WCSConnectionID = 1
    server.connect(c)
    let cases: [(JSONValue, String)] = [
      (["mediaSessionId": "s1", "sdp": "v=0"], "Bad request: name is missing"),
      (["mediaSessionId": "s1", "name": 5, "sdp": "v=0"], "Bad request: name must be a string"),
      (["mediaSessionId": "s1", "name": "x"], "Bad request: sdp is missing"),
      (
        ["mediaSessionId": "s1", "name": "x", "sdp": "v=0", "record": "maybe"],
        "Bad request: record must be a boolean"
      ),
      (
        ["mediaSessionId": "s1", "name": "x", "sdp": "v=0", "width": 1.5],
        "Bad request: width must be an integer"
      ),
    ]
    for (object, info) in cases {
      server.receive(c, "publishStream", object)
      let out = server.take(c)
      XCTAssertEqual(out.count, 1)
      assertStatus(out.first, "s1", "FAILED", info: info)
    }
    XCTAssertEqual(server.core.streamCount, 0)
    // Lenient booleans and numbers as SDKs send them (§2).
    server.receive(
      c, "publishStream",
      ["mediaSessionId": "s1", "name": "x", "sdp": "v=0", "record": "true", "width": "640"])
    let published = server.take(c).last
    assertStatus(published, "s1", "PUBLISHING")
    XCTAssertEqual(published?.object["record"], true)
    XCTAssertEqual(published?.object["width"], 640)
  }

  func testMessagesBeforeConnectionFail() {
    let server = ServerHarness()
    let c: WCSConnectionID = 1
    server.open(c)
    server.publish(c, "pub-1", name: "cam")
    server.receive(c, #"{"message":"pong","data":[null]}"#)
    let out = server.take(c)
    XCTAssertEqual(out.map(\.name), ["fail", "fail"])
    XCTAssertEqual(out.first?.object["info"], "Session not ready")
    XCTAssertEqual(server.core.streamCount, 0)
    server.receive(c, #"{"message":"connection","data":[null]}"#)
    XCTAssertEqual(server.take(c).map(\.name), ["getUserData", "getVersion"])
    server.receive(c, #"{"message":"connection","data":[{}]}"#)
    XCTAssertEqual(server.take(c).map(\.name), ["fail"], "a second connection is refused")
  }

  func testTextOnUnknownConnectionIsIgnored() {
    let server = ServerHarness()
    server.receive(99, #"{"message":"connection","data":[{}]}"#)
    XCTAssertEqual(server.take(99), [])
    XCTAssertEqual(server.core.sessionCount, 0)
  }

  func testAuthTokensAreUnique() {
    let server = ServerHarness()
    var tokens: Set<String> = []
    for id in 1...20 {
      let cid = WCSConnectionID(UInt64(id))
      server.open(cid, remote: "10.0.0.1:1000")
      server.receive(cid, #"{"message":"connection","data":[{"appKey":"defaultApp"}]}"#)
      let token = server.take(cid).first?.object["authToken"]?.stringValue ?? ""
      XCTAssertTrue(token.hasPrefix("/10.0.0.1:1000/127.0.0.1:8080"), token)
      tokens.insert(token)
    }
    XCTAssertEqual(tokens.count, 20)
  }
}
