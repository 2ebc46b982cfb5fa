import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// Server messages FailureTests does not send: JSON nested deeper than any WCS message,
/// statuses for a stream that already ended, a huge text frame, repeated answers.
final class HostileServerMessageTests: XCTestCase {
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

/// Thousands of server messages with every known name and values of every JSON type, wrong
/// shape and extreme numbers, aimed at a publishing and a playing stream (seeded, so the run
/// is the same each time): no crash, and the session still answers `ping` and takes a real
/// status afterwards.
final class RandomServerMessageTests: XCTestCase {
  /// xorshift64*: a fixed sequence, unlike the system generator.
  struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state ^= state >> 12
      state ^= state << 25
      state ^= state >> 27
      return state &* 2_685_821_657_736_338_717
    }
  }

  func testRandomMessagesNeverCrashOrStopTheSession() throws {
    let h = try Harness()
    h.establish()
    let (publisher, _) = try h.makeStream("fuzz-publish")
    try publisher.publish()
    let (player, _) = try h.makeStream("fuzz-play")
    try player.play()
    h.settle()
    let ids: [JSONValue] = [
      .string(publisher.getStreamID()), .string(player.getStreamID()), "unknown", 7, .null,
    ]
    let names = [
      "ping", "getUserData", "getVersion", "registered", "fail", "notifyStreamStatusEvent",
      "notifyVideoFormat", "notifyStreamEvent", "setRemoteSDP", "availableStream",
      "DataStatusEvent", "OnDataEvent", "inboundVideoRate", "outboundVideoRate",
      "notifyBitrateEvent", "notifyAudioCodec",
    ]
    let keys = [
      "mediaSessionId", "status", "info", "name", "type", "payload", "videoRate", "apiMethod",
      "id", "operationId", "streamerVideoWidth", "streamerVideoHeight", "authToken", "record",
      "recordName", "audioState", "videoState", "muted",
    ]
    let strings = [
      "PUBLISHING", "PLAYING", "FAILED", "STOPPED", "UNPUBLISHED", "PENDING", "ESTABLISHED",
      "audioMuted", "videoUnmuted", "resize", "notEnoughBandwidth", "1/2", "-1/-1",
      "9223372036854775807/1", "", "v=0\r\n", "\u{0}", String(repeating: "é", count: 300),
    ]
    let numbers: [Double] = [0, -1, 1e308, -1e308, 9.2e18, 1.5, 4_294_967_296, .infinity]
    var generator = Seeded(state: 0x5EED_1234_ABCD_0001)
    func value(_ depth: Int) -> JSONValue {
      switch Int.random(in: 0..<(depth > 2 ? 5 : 8), using: &generator) {
      case 0: return .null
      case 1: return .bool(Bool.random(using: &generator))
      case 2: return .number(numbers.randomElement(using: &generator) ?? 0)
      case 3: return .string(strings.randomElement(using: &generator) ?? "")
      case 4: return ids.randomElement(using: &generator) ?? .null
      case 5:
        return .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in value(depth + 1) })
      default:
        var object: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...6, using: &generator) {
          object[keys.randomElement(using: &generator) ?? "x"] = value(depth + 1)
        }
        return .object(object)
      }
    }
    for _ in 0..<3000 {
      let name = names.randomElement(using: &generator) ?? "ping"
      let data = (0..<Int.random(in: 0...3, using: &generator)).map { _ in value(0) }
      h.transport.push(WCSMessage(name: name, data: data))
    }
    h.settle()
    XCTAssertNotEqual(h.session.getStatus(), .fpwcsSessionStatusFailed)
    let pongs = h.transport.sentMessages.filter { $0.name == "pong" }.count
    h.push("ping", [])
    XCTAssertEqual(h.transport.sentMessages.filter { $0.name == "pong" }.count, pongs + 1)
    let (late, recorder) = try h.makeStream("after-fuzz")
    try late.publish()
    h.settle()
    h.answer(late)
    h.streamStatus(late, "PUBLISHING")
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusPublishing])
  }
}
