import ExampleSupport
import Foundation
import XCTest

/// TwoPlayers end to end against the local server: two streams, each played into its own file
/// with its own status lines and summary figures.
final class TwoPlayersExampleTests: XCTestCase {
  func testTwoPlayersEachPlayTheirOwnStream() throws {
    let out = try ExampleRunner.temporaryDirectory("two-players")
    let result = try ExampleRunner.run("TwoPlayers", ["--duration", "2", "--out", out])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    let first = try XCTUnwrap(result.summary["player1 stream"])
    let second = try XCTUnwrap(result.summary["player2 stream"])
    XCTAssertNotEqual(first, second)
    for label in ["player1", "player2"] {
      XCTAssertTrue(result.output.contains("\(label) "), result.output)
      XCTAssertGreaterThan(
        ExampleSummary.number(result.summary["\(label) frames decoded"]) ?? 0, 20, result.output)
      let path = try XCTUnwrap(result.summary["\(label) video written to"])
      XCTAssertTrue(FileManager.default.fileExists(atPath: path), path)
    }
  }
}
