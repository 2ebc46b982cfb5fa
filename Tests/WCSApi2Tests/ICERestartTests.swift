import Foundation
import WCSMediaSeam
import WCSTransport
import XCTest

@testable import WCSApi2

/// ICE restart by re-publishing/re-playing under the same name (WCS takes no mid-stream
/// offer): on lost consent or `restartIce()`, the old server stream is ended, a new
/// connection's offer goes out with a new `mediaSessionId`, and the app sees no FAILED or
/// PENDING, only a second PUBLISHING/PLAYING once the server took it.
final class ICERestartTests: XCTestCase {
  private func publishing(_ h: Harness) throws -> (FPWCSApi2Stream, StatusRecorder) {
    h.establish()
    let (stream, recorder) = try h.makeStream("cam")
    try stream.publish()
    h.settle()
    h.answer(stream)
    h.streamStatus(stream, "PUBLISHING")
    return (stream, recorder)
  }

  func testLostConsentRepublishesUnderTheSameNameWithANewID() throws {
    let h = try Harness()
    let (stream, recorder) = try publishing(h)
    let oldId = stream.getStreamID()
    stream.muteAudio()
    h.settle()

    try XCTUnwrap(h.backend.connections.first).fail(.consentExpired)
    h.settle()
    let newId = stream.getStreamID()
    XCTAssertNotEqual(newId, oldId)
    XCTAssertEqual(h.sent("unPublishStream").map { $0["mediaSessionId"] }, [.string(oldId)])
    let published = h.sent("publishStream")
    XCTAssertEqual(published.map { $0["mediaSessionId"] }, [.string(oldId), .string(newId)])
    XCTAssertEqual(published.map { $0["name"] }, ["cam", "cam"])
    XCTAssertNotNil(published.last?["sdp"]?.stringValue, "the new connection's offer")
    let connections = h.backend.connections
    XCTAssertEqual(connections.count, 2)
    XCTAssertTrue(connections[0].isClosed, "the old connection is released")
    XCTAssertFalse(connections[1].isClosed)
    XCTAssertEqual(
      connections[1].state.withLock { $0.trackEnabled[CaptureDevice.Kind.audio.rawValue] }, false,
      "the mute carries over to the new connection")
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusPublishing)
    XCTAssertEqual(h.session.getStreams().map { $0.getStreamID() }, [newId])

    h.streamStatus(stream, "PUBLISHING")
    // The server ends the old stream; it is unknown now, so the app hears nothing of it.
    h.push(
      "notifyStreamStatusEvent",
      [["mediaSessionId": .string(oldId), "name": "cam", "status": "UNPUBLISHED"]])
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPublishing, .fpwcsStreamStatusPublishing])
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusPublishing)
    XCTAssertTrue(h.session.skippedInputs.contains("status for unknown stream \(oldId)"))
  }

  func testRestartIceOnAPlayerAndRetriesUntilTheLimitThenFails() throws {
    let h = try Harness()
    h.establish()
    let (player, recorder) = try h.makeStream("remote")
    XCTAssertThrowsError(try player.restartIce()) {
      XCTAssertEqual(
        $0 as? WCSError, .invalidStreamState(.fpwcsStreamStatusNew, operation: "restartIce"))
    }
    try player.play()
    h.settle()
    h.answer(player)
    h.streamStatus(player, "PLAYING")

    try player.restartIce()
    h.settle()
    XCTAssertEqual(h.sent("stopStream").count, 1)
    XCTAssertEqual(h.sent("playStream").count, 2)
    // Every restart finds no pair: restarts again, SessionCore.maximumICERestarts in all.
    for attempt in 1...SessionCore.maximumICERestarts {
      let connection = try XCTUnwrap(h.backend.connections.last)
      connection.fail(.noCandidatePair(tried: "local 1 host udp; remote none"))
      h.settle()
      let expectedPlays = min(attempt + 2, SessionCore.maximumICERestarts + 1)
      XCTAssertEqual(h.sent("playStream").count, expectedPlays, "attempt \(attempt)")
    }
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(
      player.getInfo(),
      "Failed by ICE timeout: no ICE candidate pair succeeded: local 1 host udp; remote none")
    XCTAssertEqual(
      recorder.all,
      [.fpwcsStreamStatusPending, .fpwcsStreamStatusPlaying, .fpwcsStreamStatusFailed])
    XCTAssertThrowsError(try player.restartIce())
  }

  func testAConnectedRestartResetsTheCount() throws {
    let h = try Harness()
    let (stream, recorder) = try publishing(h)
    for _ in 0..<(SessionCore.maximumICERestarts + 2) {
      try stream.restartIce()
      h.settle()
      h.answer(stream)
      h.streamStatus(stream, "PUBLISHING")
    }
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusPublishing)
    XCTAssertEqual(recorder.all.count, SessionCore.maximumICERestarts + 3)
    XCTAssertFalse(recorder.all.contains(.fpwcsStreamStatusFailed))
  }

  func testNetworkChangeRestartsAPublishingStreamAndFailsOneNotUpYet() throws {
    let h = try Harness()
    let (stream, recorder) = try publishing(h)
    let oldId = stream.getStreamID()
    try XCTUnwrap(h.backend.connections.first).fail(
      .networkChanged("address 127.0.1.1 in use was removed"))
    h.settle()
    XCTAssertNotEqual(stream.getStreamID(), oldId)
    XCTAssertEqual(h.sent("publishStream").count, 2)
    XCTAssertEqual(h.sent("unPublishStream").map { $0["mediaSessionId"] }, [.string(oldId)])
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPublishing])

    let (player, playerRecorder) = try h.makeStream("remote")
    try player.play()
    h.settle()
    try XCTUnwrap(h.backend.connections.last).fail(
      .networkChanged("address 127.0.1.1 in use was removed"))
    h.settle()
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(
      player.getInfo(),
      "Failed by ICE timeout: network changed: address 127.0.1.1 in use was removed")
    XCTAssertEqual(playerRecorder.all, [.fpwcsStreamStatusPending, .fpwcsStreamStatusFailed])
    XCTAssertEqual(h.sent("playStream").count, 1, "no restart before the stream was up")
  }
}
