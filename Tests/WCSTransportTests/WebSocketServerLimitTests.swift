import XCTest

@testable import WCSTransport

#if canImport(Glibc)
  import Glibc
#endif

final class WebSocketServerLimitTests: XCTestCase {
  func testDefaultMessageLimitIsOneMebibyte() {
    XCTAssertEqual(WebSocketServer.Configuration().maximumMessageSize, 1 << 20)
    XCTAssertEqual(WebSocketServer.Configuration().maximumOutboxSize, 16 << 20)
  }

  func testMessageOverTheConfiguredLimitClosesWith1009() throws {
    let (server, serverEvents) = try startServer(.init(maximumMessageSize: 1000))
    defer { server.stop() }
    let (client, events) = connectClient(server.url)
    waitOpened(events)
    XCTAssertNoThrow(try client.send(String(repeating: "a", count: 1000)).get())
    XCTAssertEqual(
      serverEvents.wait { $0.contains { $0.text != nil } }.compactMap(\.text).first?.utf8.count,
      1000)
    XCTAssertNoThrow(try client.send(String(repeating: "b", count: 1001)).get())
    let closed = serverEvents.wait { $0.contains { $0.closeInfo != nil } }
    XCTAssertEqual(closed.compactMap(\.closeInfo).first?.code, 1009)
    // Only the message within the limit was delivered (and echoed).
    XCTAssertEqual(closed.compactMap(\.text).map(\.utf8.count), [1000])
    let terminal = events.wait { $0.contains { $0.isTerminal } }
    XCTAssertEqual(terminal.last, .closed(code: 1009, reason: "message too big"))
    XCTAssertTrue(client.waitUntilStopped(timeout: 10))
  }

  func testClientThatDoesNotReadIsClosedWith1008WhenItsOutboxPassesTheBound() throws {
    let bound = 256 << 10
    let (server, serverEvents) = try startServer(.init(maximumOutboxSize: bound), echo: false)
    defer { server.stop() }
    let socket = try Self.connectSilentWebSocket(port: server.port)
    defer { close(socket) }
    let connection = serverEvents.wait { !$0.isEmpty }[0].connection
    let message = String(repeating: "x", count: 64 << 10)
    var sent = 0
    // 64 MiB in all if it were never closed; the kernel buffers take a few MiB at most.
    while sent < 1024, serverEvents.all.allSatisfy({ $0.closeInfo == nil }) {
      if !connection.send(message) { break }
      sent += 1
      if sent % 16 == 0 { usleep(2_000) }
    }
    let closed = serverEvents.wait(timeout: 10) { $0.contains { $0.closeInfo != nil } }
    let info = try XCTUnwrap(closed.compactMap(\.closeInfo).first)
    XCTAssertEqual(info.code, 1008)
    XCTAssertEqual(info.reason, "outbox over \(bound) bytes")
    XCTAssertLessThan(sent, 1024, "closed before everything was queued")
    XCTAssertFalse(connection.send("after"), "a closed connection takes no more")
  }

  /// Opens a WebSocket to the server over a raw socket with a 4 KiB receive buffer, reads the
  /// 101 response and then never reads again.
  static func connectSilentWebSocket(port: Int) throws -> Int32 {
    let fd = try connectLoopback(port: port, receiveBuffer: 4096)
    let request = Array(
      ("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
        + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        + "Sec-WebSocket-Version: 13\r\n\r\n").utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var response: [UInt8] = []
    var byte: UInt8 = 0
    // Byte by byte up to the end of the headers, so no frame is read with them.
    while !response.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
      guard recv(fd, &byte, 1, 0) == 1 else {
        close(fd)
        throw RawSocketError.failed("no upgrade response: \(response.count) bytes")
      }
      response.append(byte)
    }
    guard String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
      close(fd)
      throw RawSocketError.failed(String(decoding: response, as: UTF8.self))
    }
    return fd
  }
}
