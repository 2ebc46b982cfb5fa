import WCSLocalServer
import WCSTransport
import XCTest

/// Publish/play validation and teardown (wcs-protocol.md §9.3–9.4).
final class StreamLifecycleTests: XCTestCase {
  let publisher: WCSConnectionID = 1
  let viewer: WCSConnectionID = 2

  func makeServer() -> ServerHarness {
    let server = ServerHarness()
    server.connect(publisher, remote: "127.0.0.1:40001")
    server.connect(viewer, remote: "127.0.0.1:40002")
    return server
  }

  func testPublisherAndPlayerOnTwoSessionsThenUnpublishStopsThePlayer() {
    let server = makeServer()
    server.publish(publisher, "pub-1", name: "cam")
    var out = server.take(publisher)
    XCTAssertEqual(out.map(\.name), ["setRemoteSDP", "notifyStreamStatusEvent"])
    assertStatus(out.last, "pub-1", "PUBLISHING")

    server.play(viewer, "play-1", name: "cam")
    out = server.take(viewer)
    XCTAssertEqual(out.map(\.name), ["setRemoteSDP", "notifyStreamStatusEvent"])
    XCTAssertEqual(out.first?.data, ["play-1", .string(FakeMediaEngine.answerSDP), true])
    assertStatus(out.last, "play-1", "PLAYING")
    XCTAssertEqual(server.take(publisher), [], "the publisher hears nothing of the player")
    XCTAssertEqual(server.core.playerCount, 1)

    server.receive(publisher, "unPublishStream", ["mediaSessionId": "pub-1", "name": "cam"])
    out = server.take(publisher)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, "pub-1", "UNPUBLISHED", info: "Stopped by user")
    XCTAssertNil(out.first?.object["recordName"], "not recorded, no recordName")
    out = server.take(viewer)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, "play-1", "STOPPED", info: "Stopped by publisher stop")
    XCTAssertEqual(server.core.streamCount, 0)
    XCTAssertEqual(server.core.publishedNameCount, 0)
    XCTAssertEqual(server.engine.live, [])

    // The name is free again.
    server.publish(viewer, "pub-2", name: "cam")
    assertStatus(server.take(viewer).last, "pub-2", "PUBLISHING")
  }

  func testStopStreamStopsOnlyThatPlayer() {
    let server = makeServer()
    server.publish(publisher, "pub-1", name: "cam")
    server.play(viewer, "play-1", name: "cam")
    server.play(viewer, "play-2", name: "cam")
    _ = server.take(viewer)
    server.receive(
      viewer, "stopStream", ["mediaSessionId": "play-1", "name": "cam", "published": false])
    let out = server.take(viewer)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, "play-1", "STOPPED", info: "Stopped by user")
    XCTAssertEqual(
      server.engine.requests.last, .releaseMedia(mediaSessionId: "play-1", recordName: nil))
    XCTAssertEqual(server.core.playerCount, 1)
    XCTAssertEqual(server.core.streamCount, 2)
  }

  func testStopOfAnotherSessionsStreamIsRefused() {
    let server = makeServer()
    server.publish(publisher, "pub-1", name: "cam")
    _ = server.take(publisher)
    server.receive(viewer, "unPublishStream", ["mediaSessionId": "pub-1", "name": "cam"])
    assertStatus(server.take(viewer).first, "pub-1", "FAILED", info: "Stream not found")
    XCTAssertEqual(server.take(publisher), [])
    XCTAssertEqual(server.core.streamCount, 1)
  }

  func testDuplicateStreamName() {
    let server = makeServer()
    server.publish(publisher, "pub-1", name: "cam")
    _ = server.take(publisher)
    let requestsBefore = server.engine.requests.count
    server.publish(viewer, "pub-2", name: "cam")
    let out = server.take(viewer)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, "pub-2", "FAILED", info: "Stream name is already in use")
    XCTAssertEqual(out.first?.object["name"], "cam")
    XCTAssertEqual(out.first?.object["published"], true)
    XCTAssertEqual(server.engine.requests.count, requestsBefore, "no media for a refused stream")
    XCTAssertEqual(server.take(publisher), [])
    XCTAssertEqual(server.core.streamCount, 1)
  }

  func testNullMissingAndDuplicateMediaSessionId() {
    let server = makeServer()
    var object = ServerHarness.streamObject(.null, name: "cam", published: true).objectValue ?? [:]
    server.receive(publisher, "publishStream", .object(object))
    assertStatus(server.take(publisher).first, nil, "FAILED", info: "MediaSessionId is null")
    object["mediaSessionId"] = nil
    server.receive(viewer, "playStream", .object(object))
    assertStatus(server.take(viewer).first, nil, "FAILED", info: "MediaSessionId is null")

    server.publish(publisher, "same-id", name: "cam")
    _ = server.take(publisher)
    server.play(viewer, "same-id", name: "cam")
    let out = server.take(viewer)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, "same-id", "FAILED", info: "MediaSessionId is already in use")
    server.publish(publisher, "same-id", name: "other")
    assertStatus(
      server.take(publisher).first, "same-id", "FAILED", info: "MediaSessionId is already in use")
    XCTAssertEqual(server.core.streamCount, 1)
    XCTAssertEqual(server.core.publishedNameCount, 1)
  }

  func testPlayingAnUnknownName() {
    let server = makeServer()
    server.play(viewer, "play-1", name: "nobody")
    let out = server.take(viewer)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, "play-1", "FAILED", info: "Stream not found")
    XCTAssertEqual(out.first?.object["published"], false)
    XCTAssertEqual(server.core.streamCount, 0)
    XCTAssertEqual(server.engine.requests, [])
  }

  func testClosedConnectionEndsItsStreams() {
    let server = makeServer()
    server.publish(publisher, "pub-1", name: "cam", record: true)
    server.play(publisher, "own-play", name: "cam")
    server.play(viewer, "play-1", name: "cam")
    server.publish(viewer, "pub-2", name: "other")
    server.play(publisher, "play-other", name: "other")
    _ = server.take(publisher)
    _ = server.take(viewer)
    server.now += 10_000
    server.close(publisher)
    let out = server.take(viewer)
    XCTAssertEqual(out.count, 1)
    assertStatus(out.first, "play-1", "STOPPED", info: "Stopped by session disconnect")
    XCTAssertEqual(server.take(publisher), [], "nothing is sent to a closed connection")
    XCTAssertEqual(server.engine.live, ["pub-2"])
    XCTAssertTrue(
      server.engine.requests.contains(
        .releaseMedia(mediaSessionId: "pub-1", recordName: "stream-pub-1-.webm")),
      "a recording is finished under its name even when the publisher disconnects")
    XCTAssertEqual(server.core.sessionCount, 1)
    XCTAssertEqual(server.core.streamCount, 1)
    XCTAssertEqual(server.core.playerCount, 0)
    XCTAssertEqual(server.core.publishedNameCount, 1)
    server.close(viewer)
    server.close(viewer)  // a second close is ignored
    XCTAssertEqual(server.core.streamCount, 0)
    XCTAssertEqual(server.engine.live, [])
  }

  func testMediaFailureFailsThePublisherAndStopsItsPlayers() {
    let server = makeServer()
    server.engine.autoConnect = false
    server.publish(publisher, "pub-1", name: "cam")
    server.play(viewer, "play-1", name: "cam")
    _ = server.take(publisher)
    _ = server.take(viewer)
    server.run(
      server.core.mediaFailed(
        mediaSessionId: "pub-1", reason: "Failed by ICE timeout", now: server.now))
    assertStatus(server.take(publisher).first, "pub-1", "FAILED", info: "Failed by ICE timeout")
    assertStatus(server.take(viewer).first, "play-1", "STOPPED", info: "Stopped by publisher stop")
    // Late engine events for released streams are ignored.
    server.run(server.core.mediaConnected(mediaSessionId: "pub-1", now: server.now))
    server.run(server.core.answerReady(mediaSessionId: "play-1", sdp: "v=0", now: server.now))
    XCTAssertEqual(server.take(publisher), [])
    XCTAssertEqual(server.take(viewer), [])
    XCTAssertEqual(server.core.streamCount, 0)
  }
}
