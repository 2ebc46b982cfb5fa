import XCTest

@testable import WCSTransport

/// The Sans-I/O pieces under the libwebsockets glue: URL parsing, framing, reassembly, close.
final class WebSocketCoreTests: XCTestCase {
  func testEndpointParsing() throws {
    let plain = try WebSocketEndpoint.parse("ws://example.com")
    XCTAssertEqual(
      plain,
      WebSocketEndpoint(secure: false, host: "example.com", port: 80, path: "/", credentials: nil))
    XCTAssertEqual(plain.hostHeader, "example.com")
    let secure = try WebSocketEndpoint.parse("WSS://wcs.example.com:8443/ws?token=a%20b")
    XCTAssertEqual(secure.secure, true)
    XCTAssertEqual(secure.port, 8443)
    XCTAssertEqual(secure.path, "/ws?token=a%20b")
    XCTAssertEqual(secure.hostHeader, "wcs.example.com:8443")
    XCTAssertEqual(try WebSocketEndpoint.parse("wss://h/").port, 443)
    let auth = try WebSocketEndpoint.parse("ws://Aladdin:open%20sesame@127.0.0.1:8080/")
    XCTAssertEqual(auth.host, "127.0.0.1")
    XCTAssertEqual(auth.credentials, "Aladdin:open sesame")
    // RFC 7617 §2 example.
    XCTAssertEqual(auth.basicAuthorization, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    let v6 = try WebSocketEndpoint.parse("ws://[::1]:9000/x")
    XCTAssertEqual(v6.host, "::1")
    XCTAssertEqual(v6.hostHeader, "[::1]:9000")
    for bad in ["http://h/", "ws://", "ws:///path", "not a url", "ws://h:0/"] {
      XCTAssertThrowsError(try WebSocketEndpoint.parse(bad), bad) { error in
        XCTAssertEqual(error as? SignalingTransportError, .invalidURL(bad))
      }
    }
  }

  func testOutboxCutsMessagesIntoFragments() {
    var outbox = WebSocketOutbox(fragmentSize: 4)
    XCTAssertNil(outbox.peek())
    outbox.enqueue(Array("abcdefghij".utf8))
    outbox.enqueue([])
    outbox.enqueue(Array("xy".utf8))
    var frames: [(String, Bool, Bool)] = []
    while let frame = outbox.peek() {
      frames.append((String(decoding: frame.payload, as: UTF8.self), frame.isFirst, frame.isFinal))
      outbox.advance()
    }
    XCTAssertTrue(outbox.isEmpty)
    XCTAssertEqual(frames.map(\.0), ["abcd", "efgh", "ij", "", "xy"])
    XCTAssertEqual(frames.map(\.1), [true, false, false, true, true])
    XCTAssertEqual(frames.map(\.2), [false, false, true, true, true])
  }

  func testAssemblerJoinsPiecesAndLimitsSize() throws {
    var assembler = WebSocketMessageAssembler(maximumSize: 8)
    func feed(_ text: String, first: Bool, last: Bool) throws -> String? {
      let bytes = Array(text.utf8)
      return try bytes.withUnsafeBytes {
        try assembler.append($0, first: first, last: last, binary: false)
      }.map { String(decoding: $0.bytes, as: UTF8.self) }
    }
    XCTAssertNil(try feed("ab", first: true, last: false))
    XCTAssertNil(try feed("cd", first: false, last: false))
    XCTAssertEqual(try feed("e", first: false, last: true), "abcde")
    XCTAssertEqual(try feed("", first: true, last: true), "")
    XCTAssertNil(try feed("12345", first: true, last: false))
    XCTAssertThrowsError(try feed("6789", first: false, last: true)) { error in
      XCTAssertEqual(error as? WebSocketMessageAssembler.Failure, .tooLarge(limit: 8))
    }
    XCTAssertEqual(try feed("ok", first: true, last: true), "ok")
  }

  func testClosePayload() {
    let bytes: [UInt8] = [0x0F, 0xA1] + Array("kicked".utf8)  // 4001
    let parsed = bytes.withUnsafeBytes { WebSocketClosePayload(bytes: $0) }
    XCTAssertEqual(parsed, WebSocketClosePayload(code: 4001, reason: "kicked"))
    XCTAssertEqual([UInt8]().withUnsafeBytes { WebSocketClosePayload(bytes: $0) }.code, 1005)
    XCTAssertEqual([UInt8(3)].withUnsafeBytes { WebSocketClosePayload(bytes: $0) }.code, 1002)
    XCTAssertEqual(WebSocketClosePayload(code: 4001, reason: "").codeForFrame, 4001)
    XCTAssertEqual(WebSocketClosePayload(code: 1006, reason: "").codeForFrame, 1000)
    XCTAssertEqual(WebSocketClosePayload(code: 999, reason: "").codeForFrame, 1000)
    let long = WebSocketClosePayload(code: 1000, reason: String(repeating: "я", count: 100))
    XCTAssertEqual(long.reasonBytesForFrame.count, 122)  // 61 two-byte letters fit in 123
    XCTAssertEqual(String(decoding: long.reasonBytesForFrame, as: UTF8.self).count, 61)
  }
}
