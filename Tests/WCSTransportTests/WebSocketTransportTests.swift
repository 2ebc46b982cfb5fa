import Foundation
import Synchronization
import XCTest

@testable import WCSTransport

final class WebSocketTransportTests: XCTestCase {
  func testEchoRoundTripKeepsOrderOf100Messages() throws {
    let (server, serverEvents) = try startServer()
    defer { server.stop() }
    let (client, events) = connectClient(server.url + "/ws/path?x=1")
    waitOpened(events)
    let sent = (0..<100).map { "{\"message\":\"m\",\"data\":[\($0)]}" }
    for text in sent { XCTAssertNoThrow(try client.send(text).get()) }
    let received = events.wait { $0.compactMap(\.text).count == 100 }.compactMap(\.text)
    XCTAssertEqual(received, sent)
    let connected = serverEvents.all.first?.connection
    XCTAssertEqual(connected?.path, "/ws/path?x=1")
    XCTAssertEqual(connected?.remoteAddress, "127.0.0.1")
    XCTAssertEqual(serverEvents.all.compactMap(\.text), sent)
    closeAndWait(client, events)
    XCTAssertEqual(events.all.first, .opened)
    XCTAssertEqual(events.all.last, .closed(code: 1000, reason: ""))
    XCTAssertEqual(events.all.filter(\.isTerminal).count, 1)
  }

  func testOneMebibyteMessageBothWaysArrivesByteIdentical() throws {
    let (server, _) = try startServer()
    defer { server.stop() }
    let (client, events) = connectClient(server.url)
    waitOpened(events)
    // Every byte value of printable ASCII, in a pattern that a dropped or repeated chunk breaks.
    var pattern = [UInt8](repeating: 0, count: 1 << 20)
    for index in pattern.indices {
      let value: Int = (index * 7 + index / 4096) % 90
      pattern[index] = UInt8(0x21 + value)
    }
    let big = String(decoding: pattern, as: UTF8.self)
    XCTAssertEqual(big.utf8.count, 1 << 20)
    XCTAssertNoThrow(try client.send(big).get())
    XCTAssertNoThrow(try client.send("after").get())
    let texts = events.wait(timeout: 30) { $0.compactMap(\.text).count == 2 }.compactMap(\.text)
    XCTAssertEqual(texts.first?.utf8.count, 1 << 20)
    XCTAssertTrue(texts.first == big)
    XCTAssertEqual(texts.last, "after")
    closeAndWait(client, events)
  }

  func testServerCloseWithCodeAndReasonReachesClient() throws {
    let (server, serverEvents) = try startServer(echo: false)
    defer { server.stop() }
    let (client, events) = connectClient(server.url)
    waitOpened(events)
    let connection = serverEvents.wait { !$0.isEmpty }[0].connection
    connection.close(code: 4001, reason: "kicked by test")
    events.wait { $0.contains { $0.isTerminal } }
    XCTAssertEqual(events.all, [.opened, .closed(code: 4001, reason: "kicked by test")])
    XCTAssertTrue(client.waitUntilStopped(timeout: 10))
    let closed = serverEvents.wait { $0.contains { $0.closeInfo != nil } }.compactMap(\.closeInfo)
    XCTAssertEqual(closed.first?.code, 4001)
    XCTAssertTrue(isNotConnected(client.send("late")))
  }

  func testClientCloseIsSeenByServer() throws {
    let (server, serverEvents) = try startServer()
    defer { server.stop() }
    let (client, events) = connectClient(server.url)
    waitOpened(events)
    client.close(code: 4002, reason: "bye")
    events.wait { $0.contains { $0.isTerminal } }
    XCTAssertEqual(events.all.last, .closed(code: 4002, reason: "bye"))
    let closed = serverEvents.wait { $0.contains { $0.closeInfo != nil } }.compactMap(\.closeInfo)
    XCTAssertEqual(closed.first?.code, 4002)
    XCTAssertEqual(closed.first?.reason, "bye")
  }

  func testClosedPortFailsWithinTheConnectTimeout() throws {
    // Take a free port from the server, then stop it so nothing listens there.
    let (server, _) = try startServer()
    let port = server.port
    server.stop()
    let (client, events) = connectClient(
      "ws://127.0.0.1:\(port)/", options: .init(connectTimeout: 3))
    let all = events.wait(timeout: 5) { $0.contains { $0.isTerminal } }
    XCTAssertEqual(all.count, 1)
    guard case .failed(let error)? = all.first else { return XCTFail("expected failure: \(all)") }
    switch error {
    case .connectionFailed, .connectTimeout: break
    default: XCTFail("unexpected error \(error)")
    }
    XCTAssertTrue(client.waitUntilStopped(timeout: 5))
  }

  func testConnectTimeoutWhenTheServerNeverAnswers() throws {
    // A listening TCP socket that never accepts: the upgrade can never complete.
    let listener = try RawTCPListener()
    defer { listener.close() }
    let (client, events) = connectClient(
      "ws://127.0.0.1:\(listener.port)/", options: .init(connectTimeout: 0.5))
    let all = events.wait(timeout: 5) { $0.contains { $0.isTerminal } }
    XCTAssertEqual(all, [.failed(.connectTimeout(seconds: 0.5))])
    XCTAssertTrue(client.waitUntilStopped(timeout: 5))
  }

  func testCloseWhileConnectingReportsClosedOnce() throws {
    let listener = try RawTCPListener()
    defer { listener.close() }
    let (client, events) = connectClient(
      "ws://127.0.0.1:\(listener.port)/", options: .init(connectTimeout: 2))
    client.close(code: 4003, reason: "changed my mind")
    XCTAssertTrue(client.waitUntilStopped(timeout: 5))
    let all = events.wait { $0.contains { $0.isTerminal } }
    XCTAssertEqual(all, [.closed(code: 4003, reason: "changed my mind")])
    XCTAssertTrue(isNotConnected(client.send("x")))
  }

  func testExtraHeadersAndBasicAuthArriveAtTheServer() throws {
    let (server, serverEvents) = try startServer(.init(capturedHeaders: ["X-WCS-Test"]))
    defer { server.stop() }
    let url = "ws://alice:s3cret@127.0.0.1:\(server.port)/auth"
    let (client, events) = connectClient(
      url, options: .init(headers: ["X-WCS-Test": "hello 42"], connectTimeout: 5))
    waitOpened(events)
    let connection = serverEvents.wait { !$0.isEmpty }[0].connection
    XCTAssertEqual(connection.header("Authorization"), "Basic YWxpY2U6czNjcmV0")
    XCTAssertEqual(connection.header("x-wcs-test"), "hello 42")
    XCTAssertEqual(connection.header("host"), "127.0.0.1:\(server.port)")
    XCTAssertEqual(connection.path, "/auth")
    closeAndWait(client, events)
  }

  func testMalformedFrameDoesNotKillTheTransport() throws {
    let (server, serverEvents) = try startServer(echo: false)
    defer { server.stop() }
    let (client, events) = connectClient(server.url)
    waitOpened(events)
    let connection = serverEvents.wait { !$0.isEmpty }[0].connection
    connection.send("{not json")
    connection.send("{\"message\":\"ping\",\"data\":[null]}")
    let texts = events.wait { $0.compactMap(\.text).count == 2 }.compactMap(\.text)
    XCTAssertThrowsError(try WCSMessageCodec.decode(texts[0]))
    XCTAssertEqual(try WCSMessageCodec.decode(texts[1]).name, "ping")
    XCTAssertNoThrow(try client.send("still open").get())
    serverEvents.wait { $0.contains { $0.text == "still open" } }
    closeAndWait(client, events)
  }

  func testInvalidURLAndSendBeforeOpenFail() {
    let (client, events) = connectClient("http://127.0.0.1/")
    XCTAssertEqual(events.wait { !$0.isEmpty }, [.failed(.invalidURL("http://127.0.0.1/"))])
    XCTAssertTrue(isNotConnected(client.send("x")))
    XCTAssertTrue(isNotConnected(WebSocketTransport().send("x")))
  }

  func testNoThreadsOrDescriptorsLeakAfterClose() throws {
    // Connections of tests that ran just before (in this process) may still be winding down;
    // one that never does is that test's leak, counted as the baseline here.
    _ = eventually(timeout: 10) { serviceThreadCount() == 0 }
    let baseline = serviceThreadCount()
    let (server, serverEvents) = try startServer()
    defer { server.stop() }
    var rounds = 0
    func openAndClose() {
      // The previous round's service thread leaves its loop just after its close event: wait
      // for it (one that never leaves is a leak, and fails here).
      XCTAssertTrue(
        eventually(timeout: 10) { serviceThreadCount() == baseline },
        "service threads before round \(rounds + 1): \(serviceThreadCount()), \(baseline) at start")
      let (client, events) = connectClient(server.url)
      waitOpened(events)
      XCTAssertEqual(serviceThreadCount(), baseline + 1)
      closeAndWait(client, events)
      rounds += 1
      // The server's side of the socket is gone once it reported the close.
      serverEvents.wait { $0.filter { $0.closeInfo != nil }.count == rounds }
    }
    openAndClose()  // warm up lazily created process-wide state (OpenSSL, queues)
    let before = openDescriptorCount()
    for _ in 0..<10 { openAndClose() }
    // A descriptor kept per connection would add at least 10; the slack of 2 is for process-wide
    // descriptors that other tests' cleanup or the runtime open or close meanwhile.
    XCTAssertLessThanOrEqual(openDescriptorCount(), before + 2)
    XCTAssertTrue(
      eventually { serviceThreadCount() == baseline },
      "service threads left: \(serviceThreadCount()), \(baseline) before")
  }
}

func isNotConnected(_ result: Result<Void, SignalingTransportError>) -> Bool {
  if case .failure(.notConnected) = result { return true }
  return false
}

/// Client service threads still running.
func serviceThreadCount() -> Int { liveServiceThreads.load(ordering: .relaxed) }

/// Checks `condition` until it holds or `timeout` seconds passed: the service thread leaves its
/// loop just after the terminal event was queued.
func eventually(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while !condition() {
    if Date() > deadline { return false }
    usleep(10_000)
  }
  return true
}

/// Open file descriptors of this process.
func openDescriptorCount() -> Int {
  (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}
