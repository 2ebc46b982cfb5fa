import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// `stop()` in each stream state (wcs-protocol.md §3.1 client-side rules).
final class StopTests: XCTestCase {
  func testStopInNewFailsLocallyAndSendsNothing() throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("s")
    try stream.stop()
    h.settle()
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(stream.getStatusInfo(), .fpwcsStreamStatusInfoStoppedByUser)
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusFailed])
    XCTAssertEqual(h.sentNames, ["connection"])
  }

  func testStopInPendingIsSentWhenTheServerAnswers() throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("s")
    try stream.publish()
    h.settle()
    try stream.stop()
    h.settle()
    XCTAssertEqual(
      h.sentNames, ["connection", "publishStream"], "nothing to stop on the server yet")
    h.answer(stream)
    h.streamStatus(stream, "PUBLISHING")
    let unpublish = try XCTUnwrap(h.sent("unPublishStream").first)
    XCTAssertEqual(unpublish["status"], "PUBLISHING")
    XCTAssertTrue(h.backend.connections[0].isClosed)
    h.streamStatus(stream, "UNPUBLISHED", info: "Stopped by user")
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPublishing, .fpwcsStreamStatusUnpublished])
  }

  func testStopInPendingBeforeTheOfferEndsLocally() throws {
    let backend = FakeMediaBackend(manualOffers: true)
    let h = try Harness(backend: backend)
    h.establish()
    let (player, recorder) = try h.makeStream("s")
    try player.play()
    h.settle()
    try player.stop()
    backend.completeOffers()
    h.settle()
    XCTAssertEqual(h.sentNames, ["connection"], "the offer is never sent")
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusStopped)
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPending, .fpwcsStreamStatusStopped])
    XCTAssertTrue(backend.connections[0].isClosed)
  }

  func testStopWhilePlayingSendsStopStream() throws {
    let h = try Harness()
    h.establish()
    let (player, recorder) = try h.makeStream("s")
    try player.play()
    h.settle()
    h.answer(player)
    h.streamStatus(player, "PLAYING")
    try player.stop()
    h.settle()
    let stop = try XCTUnwrap(h.sent("stopStream").first)
    XCTAssertEqual(stop["mediaSessionId"]?.stringValue, player.getStreamID())
    XCTAssertEqual(stop["published"], false)
    XCTAssertEqual(stop["status"], "PLAYING")
    h.streamStatus(player, "STOPPED")
    XCTAssertEqual(
      recorder.all,
      [.fpwcsStreamStatusPending, .fpwcsStreamStatusPlaying, .fpwcsStreamStatusStopped])
  }

  func testStopAfterFailureIsIgnored() throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("s")
    try stream.publish()
    h.settle()
    h.streamStatus(stream, "FAILED", info: "Failed by ICE error")
    try stream.stop()
    h.settle()
    XCTAssertEqual(h.sentNames, ["connection", "publishStream"])
    XCTAssertEqual(stream.getStatusInfo(), .fpwcsStreamStatusInfoFailedByIceError)
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusFailed])
    // A late status for a finished stream changes nothing.
    h.streamStatus(stream, "PUBLISHING")
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
  }

  func testStopAndDisconnectFromInsideCallbacksDoNotDeadlock() throws {
    let h = try Harness()
    h.establish()
    let (stream, _) = try h.makeStream("s")
    let stopped = expectation(description: "stop returned inside the callback")
    let disconnected = expectation(description: "disconnected")
    let queue = h.callbackQueue
    stream.on(.fpwcsStreamStatusPublishing) { s in
      dispatchPrecondition(condition: .onQueue(queue))
      try? s?.stop()
      XCTAssertEqual(s?.getStatus(), .fpwcsStreamStatusPublishing)
      stopped.fulfill()
    }
    stream.on(.fpwcsStreamStatusUnpublished) { [session = h.session] _ in
      session.disconnect()
      XCTAssertEqual(session.getStatus(), .fpwcsSessionStatusDisconnected)
      disconnected.fulfill()
    }
    try stream.publish()
    h.settle()
    h.answer(stream)
    h.streamStatus(stream, "PUBLISHING")
    wait(for: [stopped], timeout: 5)
    h.settle()
    XCTAssertEqual(h.sent("unPublishStream").count, 1)
    h.streamStatus(stream, "UNPUBLISHED")
    wait(for: [disconnected], timeout: 5)
  }
}
