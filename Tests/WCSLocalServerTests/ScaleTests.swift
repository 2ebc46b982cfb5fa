import WCSLocalServer
import WCSTransport
import XCTest

/// 200 sessions through one core: 100 publishers, 100 players, then all close.
final class ScaleTests: XCTestCase {
  func testTwoHundredSessionsPublishPlayAndCleanUp() {
    let server = ServerHarness()
    let pairs = 100
    for i in 0..<(2 * pairs) {
      server.connect(WCSConnectionID(UInt64(i + 1)), remote: "127.0.0.1:\(20_000 + i)")
    }
    for i in 0..<pairs {
      server.publish(
        WCSConnectionID(UInt64(2 * i + 1)), "pub-\(i)", name: "stream-\(i)", record: i % 10 == 0)
    }
    for i in 0..<pairs {
      server.play(WCSConnectionID(UInt64(2 * i + 2)), "play-\(i)", name: "stream-\(i)")
    }
    XCTAssertEqual(server.core.sessionCount, 200)
    XCTAssertEqual(server.core.streamCount, 200)
    XCTAssertEqual(server.core.publishedNameCount, 100)
    XCTAssertEqual(server.core.playerCount, 100)
    for i in 0..<pairs {
      let pub = server.take(WCSConnectionID(UInt64(2 * i + 1)))
      XCTAssertEqual(pub.map(\.name), ["setRemoteSDP", "notifyStreamStatusEvent"])
      assertStatus(pub.last, "pub-\(i)", "PUBLISHING")
      let play = server.take(WCSConnectionID(UInt64(2 * i + 2)))
      XCTAssertEqual(play.map(\.name), ["setRemoteSDP", "notifyStreamStatusEvent"])
      assertStatus(play.last, "play-\(i)", "PLAYING")
      XCTAssertEqual(play.last?.object["name"], .string("stream-\(i)"))
    }
    // Publishers leave first (players see STOPPED), then everyone.
    for i in 0..<pairs { server.close(WCSConnectionID(UInt64(2 * i + 1))) }
    for i in 0..<pairs {
      let play = server.take(WCSConnectionID(UInt64(2 * i + 2)))
      XCTAssertEqual(play.count, 1)
      assertStatus(play.first, "play-\(i)", "STOPPED", info: "Stopped by session disconnect")
    }
    for i in 0..<pairs { server.close(WCSConnectionID(UInt64(2 * i + 2))) }
    XCTAssertEqual(server.core.sessionCount, 0)
    XCTAssertEqual(server.core.streamCount, 0)
    XCTAssertEqual(server.core.publishedNameCount, 0)
    XCTAssertEqual(server.core.playerCount, 0)
    XCTAssertNil(server.core.nextDeadline)
    XCTAssertEqual(server.engine.live, [])
    let recorded = server.engine.requests.filter {
      if case .releaseMedia(_, let name?) = $0 { return name.hasSuffix(".webm") }
      return false
    }
    XCTAssertEqual(recorded.count, 10)
  }
}
