import Foundation
import XCTest

@testable import WCSTransport

final class WebSocketServerTests: XCTestCase {
  func testServesFilesOverHTTPAnd404ForMissingOnes() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-http-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    try Data(bytes).write(to: directory.appendingPathComponent("stream1.webm"))
    try Data("{\"a\":1}".utf8).write(to: directory.appendingPathComponent("meta.bin"))
    let files = WebSocketServer.FileMount(mountPoint: "/client/records", directory: directory.path)
    let (server, _) = try startServer(.init(files: files))
    defer { server.stop() }
    let port = try XCTUnwrap(server.httpPort)
    XCTAssertNotEqual(port, server.port)
    let found = try httpGet(port: port, path: "/client/records/stream1.webm")
    XCTAssertEqual(found.status, 200)
    XCTAssertEqual(found.body, bytes)
    let other = try httpGet(port: port, path: "/client/records/meta.bin")
    XCTAssertEqual(other.status, 200)
    XCTAssertEqual(String(decoding: other.body, as: UTF8.self), "{\"a\":1}")
    XCTAssertEqual(try httpGet(port: port, path: "/client/records/missing.webm").status, 404)
  }

  func testStartThrowsWhenThePortIsTaken() throws {
    let (first, _) = try startServer()
    defer { first.stop() }
    let second = WebSocketServer(configuration: .init(port: first.port)) { _ in }
    XCTAssertThrowsError(try second.start()) { error in
      guard
        case WebSocketServer.StartError.listenFailed(_, let port, _)? =
          error as? WebSocketServer.StartError
      else { return XCTFail("unexpected \(error)") }
      XCTAssertEqual(port, first.port)
    }
    second.stop()
  }

  func testStopClosesConnectionsAndClientSeesClose() throws {
    let (server, serverEvents) = try startServer()
    let (client, events) = connectClient(server.url)
    waitOpened(events)
    server.stop()
    let all = events.wait { $0.contains { $0.isTerminal } }
    XCTAssertEqual(all.filter(\.isTerminal).count, 1)
    guard case .closed? = all.last else { return XCTFail("expected closed, got \(all)") }
    XCTAssertEqual(serverEvents.wait { $0.count == 2 }.last?.closeInfo?.code, 1001)
    XCTAssertTrue(client.waitUntilStopped(timeout: 10))
  }

  func testServerSendsLargeMessageInOrderWithSmallOnes() throws {
    let (server, serverEvents) = try startServer(echo: false)
    defer { server.stop() }
    let (client, events) = connectClient(server.url)
    waitOpened(events)
    let connection = serverEvents.wait { !$0.isEmpty }[0].connection
    let big = String(repeating: "0123456789abcdef", count: 1 << 16)  // 1 MiB
    connection.send("one")
    connection.send(big)
    connection.send("three")
    let texts = events.wait(timeout: 30) { $0.compactMap(\.text).count == 3 }.compactMap(\.text)
    XCTAssertEqual(texts.map(\.utf8.count), [3, 1 << 20, 5])
    XCTAssertTrue(texts[1] == big)
    closeAndWait(client, events)
  }

  func testOneMebibyteSingleFrameIsReassembledFromPieces() throws {
    // One 1 MiB frame: lws hands it to the client in receive-buffer-sized pieces.
    let recorder = Recorder<WebSocketServer.Event>()
    let server = WebSocketServer { recorder.append($0) }
    server.outgoingFragmentSize = 2 << 20
    try server.start()
    defer { server.stop() }
    let (client, events) = connectClient(server.url)
    waitOpened(events)
    let connection = recorder.wait { !$0.isEmpty }[0].connection
    var bytes = [UInt8](repeating: 0, count: 1 << 20)
    for index in bytes.indices { bytes[index] = UInt8(0x30 + (index / 65_536 + index) % 64) }
    let big = String(decoding: bytes, as: UTF8.self)
    connection.send(big)
    connection.send("next")
    let texts = events.wait(timeout: 30) { $0.compactMap(\.text).count == 2 }.compactMap(\.text)
    XCTAssertEqual(texts.first.map { Array($0.utf8) }, bytes)
    XCTAssertEqual(texts.last, "next")
    closeAndWait(client, events)
  }
}
