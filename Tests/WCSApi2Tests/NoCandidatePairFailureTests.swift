import Foundation
import WCSMediaSeam
import WCSTransport
import XCTest

@testable import WCSApi2

/// A stream whose media connection found no working ICE candidate pair fails locally at once,
/// with the engine's account of what it tried in `getInfo()`, instead of waiting for the
/// server's bare "Failed by ICE timeout".
final class NoCandidatePairFailureTests: XCTestCase {
  private let tried =
    "local 1 host udp; remote 1 host udp; UDP blocked? configure TURN over TCP"
    + " (turn:host?transport=tcp or turns:)"

  func testThePublisherFailsOnceWithTheReasonAndTheServerIsTold() throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("cam")
    try stream.publish()
    h.settle()
    h.streamStatus(stream, "PENDING")
    h.answer(stream)
    let connection = try XCTUnwrap(h.backend.connections.first)

    connection.fail(.noCandidatePair(tried: tried))
    h.settle()
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(stream.getStatusInfo(), .fpwcsStreamStatusInfoFailedByIceTimeout)
    XCTAssertEqual(
      stream.getInfo(), "Failed by ICE timeout: no ICE candidate pair succeeded: \(tried)")
    XCTAssertEqual(h.sent("unPublishStream").count, 1)
    XCTAssertTrue(connection.isClosed, "the media is released")
    // The server's own timeout arrives later for a stream already forgotten.
    h.streamStatus(stream, "FAILED", info: "Failed by ICE timeout")
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPending, .fpwcsStreamStatusFailed])
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusEstablished)
  }

  func testAPlayerFailsTooAndOtherICEFailuresStayWithTheServer() throws {
    let h = try Harness()
    h.establish()
    let (player, recorder) = try h.makeStream("remote")
    try player.play()
    h.settle()
    let (other, _) = try h.makeStream("other")
    try other.play()
    h.settle()
    let connections = h.backend.connections
    XCTAssertEqual(connections.count, 2)

    connections[0].fail(.noCandidatePair(tried: tried))
    connections[1].fail(.ice)
    h.settle()
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(recorder.all.last, .fpwcsStreamStatusFailed)
    XCTAssertEqual(h.sent("stopStream").count, 1)
    XCTAssertNotEqual(other.getStatus(), .fpwcsStreamStatusFailed, "a bare ICE failure waits")
    XCTAssertEqual(other.getConnectionState(), .failed(.ice))
  }

  func testTheFailureDescriptionSaysWhatWasTried() {
    XCTAssertEqual(
      MediaConnectionState.failed(.noCandidatePair(tried: "local none; remote none")).description,
      "failed (no ICE candidate pair succeeded: local none; remote none)")
  }
}
