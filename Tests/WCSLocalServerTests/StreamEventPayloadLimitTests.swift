import WCSLocalServer
import WCSTransport
import XCTest

/// `sendStreamEvent` payloads are copied to every player, so their size is bounded
/// (`WCSServerConfiguration.maxStreamEventPayloadBytes`).
final class StreamEventPayloadLimitTests: XCTestCase {
  let publisher: WCSConnectionID = 1
  let viewer: WCSConnectionID = 2

  private func harness(limit: Int) -> ServerHarness {
    var configuration = WCSServerConfiguration()
    configuration.maxStreamEventPayloadBytes = limit
    let server = ServerHarness(configuration: configuration)
    for id in [publisher, viewer] { server.connect(id) }
    server.publish(publisher, "pub-1", name: "cam")
    server.play(viewer, "play-1", name: "cam")
    for id in [publisher, viewer] { _ = server.take(id) }
    return server
  }

  func testAPayloadOverTheLimitIsRefusedAndReachesNoPlayer() throws {
    let server = harness(limit: 100)
    // {"text":"xxx…"} is 11 bytes of JSON around the text.
    server.receive(
      publisher, "sendStreamEvent",
      [
        "mediaSessionId": "pub-1", "type": "data",
        "payload": ["text": .string(String(repeating: "x", count: 90))],
      ])
    let fail = try XCTUnwrap(server.take(publisher).first)
    XCTAssertEqual(fail.name, "fail")
    XCTAssertEqual(
      fail.object["info"]?.stringValue,
      "Bad request: payload must be at most 100 bytes of JSON, got 101")
    XCTAssertEqual(server.take(viewer), [])

    // At the limit it goes through, and the session is still usable.
    server.receive(
      publisher, "sendStreamEvent",
      [
        "mediaSessionId": "pub-1", "type": "data",
        "payload": ["text": .string(String(repeating: "x", count: 89))],
      ])
    XCTAssertEqual(server.take(publisher), [])
    XCTAssertEqual(server.take(viewer).map(\.name), ["notifyStreamEvent"])
  }

  func testTheDefaultLimitIs16KiBAndAnOverlongTypeIsRefused() throws {
    XCTAssertEqual(WCSServerConfiguration().maxStreamEventPayloadBytes, 16_384)
    let server = harness(limit: WCSServerConfiguration().maxStreamEventPayloadBytes)
    server.receive(
      publisher, "sendStreamEvent",
      ["mediaSessionId": "pub-1", "type": .string(String(repeating: "t", count: 257))])
    let fail = try XCTUnwrap(server.take(publisher).first)
    XCTAssertEqual(
      fail.object["info"]?.stringValue, "Bad request: type must be at most 256 UTF-8 bytes, got 257"
    )
    XCTAssertEqual(server.take(viewer), [])
  }
}
