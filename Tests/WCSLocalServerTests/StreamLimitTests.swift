import WCSLocalServer
import WCSTransport
import XCTest

/// Caps on live streams per session and per server: every stream costs the media engine a UDP
/// socket, so one WebSocket must not be able to exhaust the server's file descriptors.
final class StreamLimitTests: XCTestCase {
  let client: WCSConnectionID = 1
  let other: WCSConnectionID = 2

  private func mediaRequests(_ server: ServerHarness) -> Int {
    server.engine.requests.filter {
      if case .createPublisher = $0 { return true }
      if case .createPlayer = $0 { return true }
      return false
    }.count
  }

  func testThirtyThirdStreamOfOneSessionFailsWithoutMediaRequest() {
    let server = ServerHarness()
    server.connect(client)
    XCTAssertEqual(server.core.configuration.maxStreamsPerSession, 32)
    for i in 0..<32 {
      server.publish(client, "pub-\(i)", name: "cam-\(i)")
      assertStatus(server.take(client).last, "pub-\(i)", "PUBLISHING")
    }
    XCTAssertEqual(mediaRequests(server), 32)

    server.publish(client, "pub-32", name: "cam-32")
    let out = server.take(client)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, "pub-32", "FAILED", info: "Too many streams in this session")
    XCTAssertEqual(mediaRequests(server), 32, "no media request for a refused stream")
    XCTAssertEqual(server.core.streamCount, 32)
    XCTAssertEqual(server.core.publishedNameCount, 32, "the refused name is not taken")

    // Players count too.
    server.connect(other)
    server.publish(other, "other-pub", name: "other")
    _ = server.take(other)
    server.play(client, "play-1", name: "other")
    assertStatus(
      server.take(client).first, "play-1", "FAILED", info: "Too many streams in this session")
    XCTAssertEqual(mediaRequests(server), 33)
  }

  func testAfterAStreamEndsAnotherIsAccepted() {
    var configuration = WCSServerConfiguration()
    configuration.maxStreamsPerSession = 2
    let server = ServerHarness(configuration: configuration)
    server.connect(client)
    server.publish(client, "pub-1", name: "a")
    server.publish(client, "pub-2", name: "b")
    server.publish(client, "pub-3", name: "c")
    assertStatus(
      server.take(client).last, "pub-3", "FAILED", info: "Too many streams in this session")

    server.receive(client, "unPublishStream", ["mediaSessionId": "pub-1", "name": "a"])
    assertStatus(server.take(client).first, "pub-1", "UNPUBLISHED", info: "Stopped by user")
    server.publish(client, "pub-3", name: "c")
    assertStatus(server.take(client).last, "pub-3", "PUBLISHING")

    // A media failure frees the slot as well.
    server.run(server.core.mediaFailed(mediaSessionId: "pub-2", reason: "x", now: server.now))
    _ = server.take(client)
    server.publish(client, "pub-4", name: "d")
    assertStatus(server.take(client).last, "pub-4", "PUBLISHING")
    XCTAssertEqual(server.core.streamCount, 2)
  }

  func testGlobalStreamLimit() {
    var configuration = WCSServerConfiguration()
    XCTAssertEqual(configuration.maxStreams, 1000)
    configuration.maxStreams = 3
    let server = ServerHarness(configuration: configuration)
    server.connect(client)
    server.connect(other)
    server.publish(client, "pub-1", name: "a")
    server.publish(client, "pub-2", name: "b")
    server.play(other, "play-1", name: "a")
    assertStatus(server.take(other).last, "play-1", "PLAYING")
    server.publish(other, "pub-3", name: "c")
    let out = server.take(other)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, "pub-3", "FAILED", info: "Server stream limit reached")
    XCTAssertEqual(mediaRequests(server), 3)

    // Closing a session frees its streams for everyone.
    server.close(client)
    server.publish(other, "pub-3", name: "c")
    assertStatus(server.take(other).last, "pub-3", "PUBLISHING")
  }
}
