import ExampleSupport
import Foundation
import XCTest

/// The room examples end to end on the local server with their in-process participants.
final class RoomExamplesTests: XCTestCase {
  func testConferenceMeetsBothBotsPlaysThemAndChats() throws {
    let out = try ExampleRunner.temporaryDirectory("conference")
    let result = try ExampleRunner.run(
      "Conference", ["--duration", "4", "--login", "alice", "--room", "r1", "--out", out])
    XCTAssertEqual(result.status, 0, result.output)
    let summary = result.summary
    XCTAssertEqual(summary["Result"], "OK", result.output)
    XCTAssertEqual(summary["Participants seen"], "bot1, bot2", result.output)
    for bot in ["bot1", "bot2"] {
      XCTAssertGreaterThan(
        ExampleSummary.number(summary["Frames decoded from \(bot)"]) ?? 0, 5, result.output)
      XCTAssertEqual(summary["Video of \(bot) written to"], out + "/r1-\(bot).y4m")
      XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/r1-\(bot).y4m"))
      XCTAssertTrue(
        result.output.contains("message from \(bot): echo from \(bot): Hello from alice"),
        result.output)
    }
    XCTAssertEqual(summary["Messages sent"], "2")
    XCTAssertEqual(summary["Messages received"], "2")
    // The protocol's order as the user saw it: bot2 comes, publishes, unpublishes, leaves.
    let lines = result.output.split(separator: "\n").map(String.init)
    let order = [
      "bot2 joined", "bot2 published", "bot2 unpublished", "bot2 left", "leave ACCEPTED",
    ]
    let positions = order.map { event in lines.firstIndex { $0.contains(event) } ?? -1 }
    XCTAssertFalse(positions.contains(-1), result.output)
    XCTAssertEqual(positions, positions.sorted(), result.output)
  }

  func testARefusedJoinEndsTheRunWithTheServersReason() throws {
    let out = try ExampleRunner.temporaryDirectory("conference-refused")
    let result = try ExampleRunner.run(
      "Conference",
      [
        "--duration", "2", "--bots", "0", "--room", String(repeating: "x", count: 10_000), "--out",
        out,
      ])
    XCTAssertEqual(result.status, 1, result.output)
    XCTAssertEqual(
      summaryFailure(result.summary),
      "join \(String(repeating: "x", count: 10_000)) FAILED: Bad request: options.name must be at most 96 UTF-8 bytes, got 10000; "
    )
  }

  func testVideoChatPlaysThePeerAndRecordsOurStream() throws {
    let out = try ExampleRunner.temporaryDirectory("videochat")
    let result = try ExampleRunner.run(
      "VideoChat", ["--duration", "2", "--login", "alice", "--room", "chat", "--out", out])
    XCTAssertEqual(result.status, 0, result.output)
    let summary = result.summary
    XCTAssertEqual(summary["Result"], "OK", result.output)
    XCTAssertEqual(summary["Peer"], "peer")
    XCTAssertGreaterThan(
      ExampleSummary.number(summary["Frames decoded from peer"]) ?? 0, 5, result.output)
    XCTAssertEqual(summary["Messages received"], "1")
    let recordName = try XCTUnwrap(summary["Record name"], result.output)
    XCTAssertTrue(recordName.hasPrefix("stream-"), recordName)
    XCTAssertTrue(recordName.hasSuffix("-alice.webm"), recordName)
    let recordPath = try XCTUnwrap(summary["Record path"], result.output)
    XCTAssertTrue(FileManager.default.fileExists(atPath: recordPath))
    if RecordFile.findExecutable("ffprobe") != nil {
      XCTAssertGreaterThan(ExampleSummary.number(summary["Record duration"]) ?? 0, 1.0)
    }
  }

  private func summaryFailure(_ summary: [String: String]) -> String? { summary["FAILED"] }
}
