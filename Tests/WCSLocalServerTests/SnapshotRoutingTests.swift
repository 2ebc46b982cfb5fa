import WCSLocalServer
import WCSTransport
import XCTest

/// `snapshot` through the signalling core (wcs-protocol.md §3, §4.6): asked of the publisher's
/// media, answered to the stream that asked, in its session only.
final class SnapshotRoutingTests: XCTestCase {
  let publisher: WCSConnectionID = 1
  let viewer: WCSConnectionID = 2

  func testSnapshotByNameGoesToThePublisherAndBackToTheAsker() throws {
    let server = ServerHarness()
    server.engine.snapshotPNG = [1, 2, 3]
    for id in [publisher, viewer] { server.connect(id) }
    server.publish(publisher, "pub-1", name: "cam")
    for id in [publisher, viewer] { _ = server.take(id) }

    server.receive(viewer, "snapshot", ["name": "cam", "mediaSessionId": "snap-1"])
    guard case .snapshot(let source, _)? = server.engine.requests.last else {
      return XCTFail("no snapshot request: \(server.engine.requests)")
    }
    XCTAssertEqual(source, "pub-1")
    let out = server.take(viewer)
    XCTAssertEqual(out.map(\.name), ["notifyStreamEvent"])
    XCTAssertEqual(out.first?.object["mediaSessionId"], "snap-1")
    XCTAssertEqual(out.first?.object["type"], "snapshotCompleted")
    XCTAssertEqual(out.first?.object["payload"], ["snapshot": "AQID"])
    XCTAssertEqual(server.take(publisher).map(\.name), [], "the publisher hears nothing")
  }

  func testSnapshotOfAPlayedStreamWithoutANameUsesItsSource() throws {
    let server = ServerHarness()
    server.engine.snapshotPNG = [9]
    for id in [publisher, viewer] { server.connect(id) }
    server.publish(publisher, "pub-1", name: "cam")
    server.play(viewer, "play-1", name: "cam")
    for id in [publisher, viewer] { _ = server.take(id) }

    server.receive(viewer, "snapshot", ["mediaSessionId": "play-1"])
    guard case .snapshot(let source, _)? = server.engine.requests.last else {
      return XCTFail("no snapshot request")
    }
    XCTAssertEqual(source, "pub-1")
    XCTAssertEqual(server.take(viewer).first?.object["payload"], ["snapshot": "CQ=="])
  }

  func testEngineFailureAndUnknownStreamAnswerSnapshotFailed() throws {
    let server = ServerHarness()
    for id in [publisher, viewer] { server.connect(id) }
    server.publish(publisher, "pub-1", name: "cam")
    for id in [publisher, viewer] { _ = server.take(id) }

    server.receive(viewer, "snapshot", ["name": "cam", "mediaSessionId": "snap-1"])
    let failed = server.take(viewer).first
    XCTAssertEqual(failed?.object["type"], "snapshotFailed")
    XCTAssertEqual(failed?.object["payload"], ["info": "fake engine"])

    let before = server.engine.requests.count
    server.receive(viewer, "snapshot", ["name": "nobody", "mediaSessionId": "snap-2"])
    XCTAssertEqual(server.engine.requests.count, before, "nothing asked of the engine")
    let missing = server.take(viewer).first
    XCTAssertEqual(missing?.object["mediaSessionId"], "snap-2")
    XCTAssertEqual(missing?.object["payload"], ["info": "Stream not found"])
  }
}
