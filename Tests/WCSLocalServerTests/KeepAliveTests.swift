import WCSLocalServer
import WCSTransport
import XCTest

/// `ping` every 5 s, drop after 10 unanswered (wcs-protocol.md §7.1), on a virtual clock.
final class KeepAliveTests: XCTestCase {
  func testPingsEveryFiveSecondsAndDropAfterTenUnanswered() {
    let server = ServerHarness()
    let start = server.now
    let c: WCSConnectionID = 7
    server.connect(c)
    server.publish(c, "pub-1", name: "cam")
    _ = server.take(c)
    XCTAssertEqual(server.core.nextDeadline, start + 5000)

    server.advance(to: start + 4999)
    XCTAssertEqual(server.take(c), [], "no ping before 5 s")
    var pingTimes: [Int64] = []
    var t = start
    while server.closes.isEmpty, t < start + 120_000 {
      t += 1000
      server.advance(to: t)
      for message in server.take(c) {
        XCTAssertEqual(message, WCSMessage(name: "ping", data: []))
        pingTimes.append(t)
      }
    }
    XCTAssertEqual(pingTimes, (1...10).map { start + Int64($0) * 5000 })
    XCTAssertEqual(server.closes.count, 1)
    XCTAssertEqual(server.closes.first?.0, c)
    XCTAssertEqual(server.closes.first?.1, 1001)
    XCTAssertEqual(t, start + 55_000, "dropped when the 11th ping falls due")
    XCTAssertEqual(server.core.sessionCount, 0)
    XCTAssertEqual(server.core.streamCount, 0)
    XCTAssertEqual(server.engine.live, [])
    XCTAssertNil(server.core.nextDeadline)
  }

  func testPongKeepsTheSessionAliveInBothForms() {
    let server = ServerHarness()
    let start = server.now
    let c: WCSConnectionID = 1
    server.connect(c)
    for round in 1...30 {
      server.advance(to: start + Int64(round) * 5000)
      XCTAssertEqual(server.take(c).map(\.name), ["ping"])
      server.receive(
        c, round.isMultiple(of: 2) ? #"{"message":"pong","data":[null]}"# : #"{"message":"pong"}"#)
      XCTAssertEqual(server.take(c), [])
    }
    XCTAssertTrue(server.closes.isEmpty)
    XCTAssertEqual(server.core.sessionCount, 1)
  }

  func testConfigurableProbesAndNoPingsBeforeConnection() {
    var configuration = WCSServerConfiguration()
    configuration.pingIntervalMillis = 1000
    configuration.maxUnansweredPings = 2
    let server = ServerHarness(configuration: configuration)
    let start = server.now
    server.open(1)
    server.advance(to: start + 29_999)
    XCTAssertEqual(server.take(1), [], "no ping before connection")
    XCTAssertEqual(server.core.nextDeadline, start + 30_000)
    server.connect(2)
    for step in 1...3 { server.advance(to: start + 29_999 + Int64(step) * 1000) }
    XCTAssertEqual(server.take(2).map(\.name), ["ping", "ping"])
    XCTAssertEqual(server.take(1), [])
    XCTAssertEqual(server.closes.map(\.0), [1, 2], "1: no connection in 30 s; 2: two pings missed")
    XCTAssertEqual(server.closes.map(\.1), [1008, 1001])
    XCTAssertEqual(server.core.sessionCount, 0)
  }
}
