import Foundation
import XCTest

@testable import WCSTransport

final class WCSMessageCodecTests: XCTestCase {
  /// `../shared/corpus/wcs-ws/wcs-ws-messages.jsonl` from the package root, when present.
  private static var corpusURL: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(
        "../shared/corpus/wcs-ws/wcs-ws-messages.jsonl"
      ).standardizedFileURL
  }

  /// One corpus line: its id and either the message it decodes to or why it was skipped.
  private func decodeCorpusLine(_ line: String) throws -> (
    id: String, message: WCSMessage?, skipped: String?
  ) {
    let entry = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
    let id = try XCTUnwrap(entry["id"]?.stringValue)
    XCTAssertNotNil(entry["source"]?.stringValue, "\(id) names no source")
    guard entry["transport"]?.stringValue == "websocket" else {
      return (id, nil, "transport \(entry["transport"]?.stringValue ?? "none"), not WebSocket")
    }
    let body = try XCTUnwrap(entry["msg"], "\(id) has no msg")
    let message = try WCSMessageCodec.decode(WCSMessageCodec.encode(body))
    XCTAssertEqual(message.name, body["message"]?.stringValue, id)
    XCTAssertEqual(message.data, body["data"]?.arrayValue, id)
    return (id, message, nil)
  }

  func testEveryCorpusLineDecodesOrIsSkippedWithAReason() throws {
    let url = Self.corpusURL
    guard FileManager.default.fileExists(atPath: url.path) else {
      throw XCTSkip("corpus not present at \(url.path)")
    }
    let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
      .map(String.init).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    XCTAssertGreaterThan(lines.count, 10)
    var decoded: [String: WCSMessage] = [:]
    var skipped: [String: String] = [:]
    for line in lines {
      let result = try decodeCorpusLine(line)
      if let message = result.message { decoded[result.id] = message }
      if let reason = result.skipped {
        XCTAssertFalse(reason.isEmpty)
        skipped[result.id] = reason
      }
    }
    XCTAssertEqual(decoded.count + skipped.count, lines.count)
    XCTAssertGreaterThanOrEqual(decoded.count, 16)
    XCTAssertEqual(
      skipped["docs-rest-stream-find-request"], "transport http, not WebSocket")

    let connection = try XCTUnwrap(decoded["docs-connection"])
    XCTAssertEqual(connection.argument?["appKey"], "defaultApp")
    XCTAssertEqual(connection.argument?["mediaProviders"]?[0], "WebRTC")
    // The docs send status as the STRING "false": lenient reading still gives a boolean.
    let available = try XCTUnwrap(decoded["docs-availableStream-response"])
    XCTAssertEqual(available.argument?["status"]?.boolValue, false)
    XCTAssertEqual(available.argument?["info"]?.stringValue, "Restricted access")
    let answer = try XCTUnwrap(decoded["websdk-setRemoteSDP-shape"])
    XCTAssertEqual(answer[0]?.stringValue, "90e14ad0-fdb2-11e8-bce2-a3f72476fb49")
    XCTAssertEqual(answer[1]?.stringValue?.hasPrefix("v=0\r\n"), true)
    let pong = try XCTUnwrap(decoded["websdk-pong"])
    XCTAssertEqual(pong.data, [.null])
    XCTAssertNil(pong.argument)
    let rate = try XCTUnwrap(decoded["docs-inboundVideoRate"])
    XCTAssertEqual(rate.argument?["videoRate"]?.intValue, 704_856)
  }

  /// The same check on a line written into the test, so it means something without the corpus.
  func testEmbeddedCorpusLineDecodes() throws {
    let line = """
      {"id": "websdk-notifyStreamStatusEvent-shape", "dir": "server->client", "msg": \
      {"message": "notifyStreamStatusEvent", "data": [{"mediaSessionId": \
      "90e14ad0-fdb2-11e8-bce2-a3f72476fb49", "name": "test", "published": true, \
      "status": "PUBLISHING", "info": "Unknown"}]}, "kind": "derived-from-websdk-source", \
      "source": "flashphoner/flashphoner_client src/flashphoner-core.js", "transport": "websocket"}
      """
    let result = try decodeCorpusLine(line)
    let message = try XCTUnwrap(result.message)
    XCTAssertEqual(message.name, "notifyStreamStatusEvent")
    XCTAssertEqual(message.argument?["status"], "PUBLISHING")
    XCTAssertEqual(message.argument?["published"]?.boolValue, true)
  }

  func testTolerantDecoding() throws {
    let missing = try WCSMessageCodec.decode(#"{"message":"ping"}"#)
    XCTAssertEqual(missing.name, "ping")
    XCTAssertEqual(missing.data, [])
    XCTAssertNil(missing.argument)

    let nullData = try WCSMessageCodec.decode(#"{"message":"ping","data":null}"#)
    XCTAssertEqual(nullData.data, [])

    let nullArgument = try WCSMessageCodec.decode(#"{"message":"pong","data":[null]}"#)
    XCTAssertEqual(nullArgument.data, [.null])
    XCTAssertNil(nullArgument.argument)

    let object = try WCSMessageCodec.decode(#"{"message":"fail","data":{"info":"x"}}"#)
    XCTAssertEqual(object.argument?["info"], "x")

    let text = #"""
      {"message":"availableStream","data":[{"a":"true","b":0,"c":1,"d":"FALSE","e":"1500",
      "f":" 42 ","g":true,"h":"yes","i":2}]}
      """#
    let lenient = try XCTUnwrap(try WCSMessageCodec.decode(text).argument)
    XCTAssertEqual(lenient["a"]?.boolValue, true)
    XCTAssertEqual(lenient["b"]?.boolValue, false)
    XCTAssertEqual(lenient["c"]?.boolValue, true)
    XCTAssertEqual(lenient["d"]?.boolValue, false)
    XCTAssertEqual(lenient["g"]?.boolValue, true)
    XCTAssertNil(lenient["h"]?.boolValue)
    XCTAssertNil(lenient["i"]?.boolValue)
    XCTAssertEqual(lenient["e"]?.intValue, 1500)
    XCTAssertEqual(lenient["e"]?.doubleValue, 1500)
    XCTAssertEqual(lenient["f"]?.intValue, 42)
    XCTAssertEqual(lenient["b"]?.stringValue, "0")
    XCTAssertNil(lenient["missing"])
  }

  func testMalformedFramesGiveReasons() {
    let cases: [(String, WCSMessageDecodingError)] = [
      ("[1,2]", .notAnObject),
      (#"{"data":[]}"#, .missingMessageName),
      (#"{"message":5}"#, .missingMessageName),
      (#"{"message":"x","data":"s"}"#, .invalidData("a string")),
      (#"{"message":"x","data":7}"#, .invalidData("a number")),
    ]
    for (text, expected) in cases {
      XCTAssertThrowsError(try WCSMessageCodec.decode(text), text) { error in
        XCTAssertEqual(error as? WCSMessageDecodingError, expected, text)
      }
    }
    XCTAssertThrowsError(try WCSMessageCodec.decode("{not json")) { error in
      guard case .notJSON? = error as? WCSMessageDecodingError else {
        return XCTFail("expected notJSON, got \(error)")
      }
    }
    // Well-formed JSON with a number no Double holds: a reason about the value, not Swift types.
    XCTAssertThrowsError(
      try WCSMessageCodec.decode(
        #"{"message":"sendData","data":[{"payload":{"a":[1,{"b":1e309}]}}]}"#)
    ) { error in
      XCTAssertEqual(
        error as? WCSMessageDecodingError,
        .notJSON(detail: "a value cannot be represented (e.g. a number beyond ±1.8e308)"))
    }
  }

  func testEncodeDecodeRoundTrip() throws {
    let messages = [
      WCSMessage(name: "pong"),
      WCSMessage(
        name: "publishStream",
        data: [
          [
            "mediaSessionId": "90e14ad0-fdb2-11e8-bce2-a3f72476fb49", "name": "test",
            "published": true, "hasVideo": true, "record": false, "bitrate": 1500,
            "sdp": "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n", "ratio": 0.5,
            "constraints": ["audio": true, "video": ["width": 640]], "custom": nil,
            "path": "a/b", "unicode": "Привет ✓",
          ]
        ]),
      WCSMessage(name: "setRemoteSDP", data: ["id-1", "v=0\r\n", false]),
      WCSMessage(name: "empty", data: []),
    ]
    for message in messages {
      let text = WCSMessageCodec.encode(message)
      XCTAssertEqual(try WCSMessageCodec.decode(text), message, text)
      XCTAssertEqual(WCSMessageCodec.encode(try WCSMessageCodec.decode(text)), text)
    }
    XCTAssertEqual(
      WCSMessageCodec.encode(WCSMessage(name: "pong")), #"{"data":[null],"message":"pong"}"#)
  }
}
