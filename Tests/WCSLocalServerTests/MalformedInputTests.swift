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

  /// Negative or absurd sizes, bitrates and frame rates, over-long names and names with
  /// control characters FAIL that stream with a `Bad request` naming the field; the session
  /// and its live stream go on.
  func testOutOfRangeValuesAndBadNamesFailThatStreamOnly() {
    let server = ServerHarness()
    let c: WCSConnectionID = 1
    server.connect(c)
    server.publish(c, "live", name: "live")
    _ = server.take(c)
    func request(_ extra: [String: JSONValue], name: String = "x") -> JSONValue {
      var object: [String: JSONValue] = [
        "mediaSessionId": "s1", "name": .string(name), "sdp": "v=0",
      ]
      object.merge(extra) { $1 }
      return .object(object)
    }
    let longest = String(repeating: "é", count: 128)  // 256 UTF-8 bytes: allowed
    let cases: [(JSONValue, String)] = [
      (
        request(["bitrate": -1]), "Bad request: bitrate must be between 0 and 100000 kbit/s, got -1"
      ),
      (
        request(["minBitrate": "-500"]),
        "Bad request: minBitrate must be between 0 and 100000 kbit/s, got -500"
      ),
      (
        request(["maxBitrate": 100_001]),
        "Bad request: maxBitrate must be between 0 and 100000 kbit/s, got 100001"
      ),
      (request(["width": -640]), "Bad request: width must be between 0 and 16384 pixels, got -640"),
      (
        request(["height": 1_000_000]),
        "Bad request: height must be between 0 and 16384 pixels, got 1000000"
      ),
      (request(["quality": 101]), "Bad request: quality must be between 0 and 100, got 101"),
      (
        request(["constraints": ["video": ["maxFrameRate": 1000]]]),
        "Bad request: constraints.video.maxFrameRate must be between 0 and 240 fps, got 1000"
      ),
      (
        request(["constraints": ["video": ["frameRate": -30]]]),
        "Bad request: constraints.video.frameRate must be between 0 and 240 fps, got -30"
      ),
      (
        request([:], name: longest + "x"),
        "Bad request: name must be at most 256 UTF-8 bytes, got 257"
      ),
      (request([:], name: "cam\n1"), "Bad request: name must not contain control characters"),
      (request([:], name: "cam\u{7F}"), "Bad request: name must not contain control characters"),
      (request([:], name: "cam\u{85}"), "Bad request: name must not contain control characters"),
    ]
    for (object, info) in cases {
      server.receive(c, "publishStream", object)
      let out = server.take(c)
      XCTAssertEqual(out.count, 1, info)
      assertStatus(out.first, "s1", "FAILED", info: info)
      server.receive(c, "playStream", object)
      assertStatus(server.take(c).first, "s1", "FAILED", info: info)
    }
    XCTAssertEqual(server.core.streamCount, 1)
    XCTAssertEqual(server.core.sessionCount, 1)
    XCTAssertTrue(server.closes.isEmpty)
    // Limits themselves, 0 ("no limit"), browser-style constraint objects and a 256-byte name
    // are accepted.
    server.receive(
      c, "publishStream",
      request(
        [
          "bitrate": 100_000, "minBitrate": 0, "maxBitrate": 100_000, "width": 16_384,
          "height": 16_384, "quality": 100,
          "constraints": ["video": ["frameRate": ["ideal": 30], "maxFrameRate": 240]],
        ], name: longest))
    assertStatus(server.take(c).last, "s1", "PUBLISHING")
    XCTAssertEqual(server.core.streamCount, 2)
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
