import Foundation
import WCSLocalServer
import WCSTransport
import XCTest

/// Many real WebSocket sessions at once through one in-process server.
final class LocalServerScaleTests: XCTestCase {
  /// 200 clients reach ESTABLISHED and stay connected together, then all disconnect; the
  /// server ends with no sessions. Clients connect in batches of 50 at a time: each
  /// `WebSocketTransport` has its own libwebsockets context and service thread, and 200 of them
  /// starting at once on a loaded two-core machine miss a 10 s connect timeout.
  func testTwoHundredConcurrentSessionsConnectAndLeave() throws {
    let records = try makeTemporaryDirectory("wcs-local-server-scale")
    defer { try? FileManager.default.removeItem(at: records) }
    let logs = Collector<String>()
    let server = try WCSLocalServer.start(
      testConfiguration(engine: SharedFakeMediaEngine(), records: records, logs: logs))
    defer { server.stop() }
    let count = 200
    let batch = 50
    var clients: [TestClient] = []
    for _ in 0..<(count / batch) {
      let started = (0..<batch).map { _ in
        TestClient(server.wsURL, options: .init(connectTimeout: 60))
      }
      for client in started { client.establish(timeout: 60) }
      clients += started
    }
    XCTAssertEqual(server.sessionCount, count)
    var tokens = Set<String>()
    for client in clients {
      let userData = client.messages.first { $0.name == "getUserData" }?.object
      XCTAssertEqual(userData?["status"], "ESTABLISHED")
      if let token = userData?["authToken"]?.stringValue { tokens.insert(token) }
    }
    XCTAssertEqual(tokens.count, count, "every session has its own authToken")
    for client in clients { client.transport.close() }
    for client in clients {
      client.events.wait(timeout: 30) { $0.contains { $0.isTerminal } }
      XCTAssertEqual(client.closeEvent, .closed(code: 1000, reason: ""))
      XCTAssertTrue(client.transport.waitUntilStopped(timeout: 30))
    }
    logs.wait(timeout: 30) { $0.filter { $0.hasSuffix(" closed") }.count == count }
    XCTAssertEqual(server.sessionCount, 0)
    XCTAssertEqual(server.streamCount, 0)
  }
}
