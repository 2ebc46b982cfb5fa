import ExampleSupport
import Foundation
import XCTest

/// TwoPlayers end to end against the local server: two streams, each played into its own file
/// with its own status lines and summary figures.
final class TwoPlayersExampleTests: XCTestCase {
  func testTwoPlayersEachPlayTheirOwnStream() throws {
    let out = try ExampleRunner.temporaryDirectory("two-players")
    // A bar a loaded test machine meets; the default (90 %) is for a person's run.
    let result = try ExampleRunner.run(
      "TwoPlayers", ["--duration", "2", "--min-decoded", "30", "--out", out])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    let first = try XCTUnwrap(result.summary["player1 stream"])
    let second = try XCTUnwrap(result.summary["player2 stream"])
    XCTAssertNotEqual(first, second)
    for label in ["player1", "player2"] {
      XCTAssertTrue(result.output.contains("\(label) "), result.output)
      XCTAssertNotNil(result.summary["\(label) decoded share"], result.output)
      XCTAssertNotNil(result.summary["\(label) freezes (no new picture > 0.5 s)"], result.output)
      let path = try XCTUnwrap(result.summary["\(label) video written to"])
      XCTAssertTrue(FileManager.default.fileExists(atPath: path), path)
    }
  }

  func testAPlayerOverTheFreezeLimitFailsTheRun() throws {
    let out = try ExampleRunner.temporaryDirectory("two-players-freeze")
    // No picture follows another within 10 ms at 30 fps: every run breaks this limit.
    let result = try ExampleRunner.run(
      "TwoPlayers", ["--duration", "1", "--max-freeze", "0.01", "--out", out])
    XCTAssertEqual(result.status, 1, result.output)
    XCTAssertNotEqual(result.summary["Result"], "OK", result.output)
    XCTAssertTrue(result.output.contains("player1: the video froze for"), result.output)
  }
}
