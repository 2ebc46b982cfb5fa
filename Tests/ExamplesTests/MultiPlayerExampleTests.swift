import ExampleSupport
import Foundation
import XCTest

/// MultiPlayer end to end against the local server: N players of one stream, each with its
/// frames and decoder CPU in the summary, and its exit status.
final class MultiPlayerExampleTests: XCTestCase {
  func testThreePlayersAllDecodeTheStream() throws {
    let result = try ExampleRunner.run("MultiPlayer", ["--players", "3", "--duration", "2"])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    XCTAssertEqual(result.summary["Players PLAYING"], "3 / 3")
    for player in 1...3 {
      let line = result.summary["player\(player) frames decoded"] ?? ""
      let frames = ExampleSummary.number(line) ?? 0
      XCTAssertGreaterThan(frames, 20, "player\(player): \(line)")
      XCTAssertTrue(line.contains("decoder CPU"), line)
    }
    XCTAssertTrue(
      result.summary["Process CPU while playing"]?.contains("% of one core") ?? false,
      result.output)
  }

  func testBadPlayerCountIsAUsageError() throws {
    let result = try ExampleRunner.run("MultiPlayer", ["--players", "0"])
    XCTAssertEqual(result.status, 64, result.output)
    XCTAssertTrue(result.output.contains("--players wants 1...32"), result.output)
  }
}
