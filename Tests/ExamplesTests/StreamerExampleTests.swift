import ExampleSupport
import Foundation
import XCTest

/// Streamer end to end against its own local server: it plays its stream back once PUBLISHING
/// (as the iOS example does) and says what it played; `--no-play` only publishes.
final class StreamerExampleTests: XCTestCase {
  func testStreamerPlaysItsOwnStreamBack() throws {
    let result = try ExampleRunner.run(
      "Streamer", ["--duration", "3", "--width", "320", "--height", "240", "--stream", "own"])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    XCTAssertTrue(result.output.contains("play own PLAYING"), result.output)
    XCTAssertTrue(result.output.contains("play own STOPPED"), result.output)
    let played = try XCTUnwrap(ExampleSummary.number(result.summary["Frames played"]))
    let sent = try XCTUnwrap(ExampleSummary.number(result.summary["Frames sent"]))
    // 3 s at 30 fps; the last jitter-buffer delay's worth is still held when playback stops.
    XCTAssertGreaterThan(played, 45, result.output)
    XCTAssertLessThanOrEqual(played, sent, result.output)
    XCTAssertEqual(result.summary["Played video size"], "320x240", result.output)
    XCTAssertGreaterThan(
      ExampleSummary.number(result.summary["Frames decoded"]?.components(separatedBy: "(").last)
        ?? 0, 70, result.output)
    XCTAssertEqual(
      result.summary["Playout delay (player)"]?.hasPrefix("video "), true, result.output)
  }

  func testStreamerWithNoPlayOnlyPublishes() throws {
    let result = try ExampleRunner.run("Streamer", ["--duration", "2", "--no-play"])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    XCTAssertFalse(result.output.contains(" PLAYING"), result.output)
    XCTAssertNil(result.summary["Frames played"], result.output)
    XCTAssertGreaterThan(ExampleSummary.number(result.summary["Frames sent"]) ?? 0, 30)
  }
}
