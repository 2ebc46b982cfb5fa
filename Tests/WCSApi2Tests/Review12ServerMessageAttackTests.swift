import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// Server messages FailureTests does not send: JSON nested deeper than any WCS message,
/// statuses for a stream that already ended, a huge text frame, repeated answers.
final class Review12ServerMessageAttackTests: XCTestCase {
  /// 100,000 nested arrays (a recursive decoder would overflow the stack and kill the
  /// process) and a 4 MB string: skipped, and the session still answers `ping`.
  func testDeeplyNestedAndHugeFramesAreSkipped() throws {
    let h = try Harness()
    h.establish()
    let skippedBefore = h.session.skippedInputs.count
    let depth = 100_000
    h.pushText(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
    h.pushText(
      #"{"message":"ping","data":"# + String(repeating: "[", count: depth)
        + String(repeating: "]", count: depth) + "}")
    h.pushText(
      #"{"message":"notifyStreamStatusEvent","data":[{"mediaSessionId":""#
        + String(repeating: "x", count: 4_000_000) + #"","status":"PUBLISHING"}]}"#)
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusEstablished)
    XCTAssertGreaterThanOrEqual(h.session.skippedInputs.count, skippedBefore + 2)
    let pongs = h.transport.sentMessages.filter { $0.name == "pong" }.count
    h.push("ping", [])
    XCTAssertEqual(h.transport.sentMessages.filter { $0.name == "pong" }.count, pongs + 1)
  }

  /// Once a stream has ended (UNPUBLISHED, or FAILED), later statuses for its id do not
  /// bring it back: no callback, no media, the status stays terminal.
  func testStatusesAfterTheEndDoNotResurrectTheStream() throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("gone")
    try stream.publish()
    h.settle()
    h.answer(stream)
    h.streamStatus(stream, "PUBLISHING")
    h.streamStatus(stream, "UNPUBLISHED")
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPublishing, .fpwcsStreamStatusUnpublished])
    let connections = h.backend.connections.count
    h.streamStatus(stream, "PUBLISHING")
    h.answer(stream)
    h.streamStatus(stream, "FAILED", info: "late")
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusUnpublished)
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPublishing, .fpwcsStreamStatusUnpublished])
    XCTAssertEqual(h.backend.connections.count, connections, "no media for a finished stream")
    XCTAssertTrue(h.backend.connections[0].isClosed)
    XCTAssertEqual(h.session.getStatus(), .fpwcsSessionStatusEstablished)
  }

  /// A server that sends `setRemoteSDP` again for a stream already answered: the media engine
  /// is given one answer (the native engine refuses a second one, and that refusal used to
  /// fail the working stream with `Local error`); the repeat is a skipped input.
  func testARepeatedAnswerIsSkippedNotApplied() throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("twice")
    try stream.publish()
    h.settle()
    h.answer(stream)
    h.streamStatus(stream, "PUBLISHING")
    h.answer(stream, sdp: "v=0\r\nm=video 9 RTP/SAVPF 96\r\na=recvonly\r\n")
    let connection = try XCTUnwrap(h.backend.connections.first)
    XCTAssertEqual(connection.log, ["offer", "answer"])
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusPublishing)
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPublishing])
    XCTAssertEqual(
      h.session.skippedInputs.last,
      "setRemoteSDP again for stream \(stream.getStreamID()): its answer is already applied")
  }

  /// The same when the first answer came before the local offer and was applied from the
  /// buffer.
  func testARepeatAfterABufferedAnswerIsSkipped() throws {
    let backend = FakeMediaBackend(manualOffers: true)
    let h = try Harness(backend: backend)
    h.establish()
    let (stream, _) = try h.makeStream("early")
    try stream.publish()
    h.settle()
    h.answer(stream, sdp: "v=0\r\nm=audio 1 RTP/SAVPF 111\r\n")
    backend.completeOffers()
    h.settle()
    h.answer(stream, sdp: "v=0\r\nm=audio 2 RTP/SAVPF 111\r\n")
    let connection = try XCTUnwrap(backend.connections.first)
    XCTAssertEqual(connection.answers, ["v=0\r\nm=audio 1 RTP/SAVPF 111\r\n"])
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusPending)
  }
}
