import ExampleSupport
import Foundation
import XCTest

/// TwoWayStreaming's `available` checks and `sendData` end to end against the local server:
/// the played name is not available before publishing and is once PUBLISHING, and every data
/// message the publisher sends comes back to the player as a `data` stream event.
final class TwoWayStreamingDataTests: XCTestCase {
  func testAvailabilityAndDataEventsOfItsOwnStream() throws {
    let out = try ExampleRunner.temporaryDirectory("two-way-data")
    let result = try ExampleRunner.run(
      "TwoWayStreaming",
      [
        "--duration", "3", "--width", "320", "--height", "240", "--publish", "data-own",
        "--data", "hi there", "--data-count", "4", "--switch-camera-at", "-1", "--out", out,
      ])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    XCTAssertEqual(result.summary["Available before publishing"], "no (Stream not found)")
    XCTAssertEqual(result.summary["Available once PUBLISHING"], "yes (Available)")
    XCTAssertEqual(result.summary["Data sent"], "4", result.output)
    XCTAssertEqual(result.summary["Data events received"], "4", result.output)
    XCTAssertEqual(
      result.summary["Last data event"], #"{"message":"hi there","sequence":4}"#, result.output)
    for sequence in 1...4 {
      XCTAssertTrue(
        result.output.contains(
          #"data event from data-own: {"message":"hi there","sequence":\#(sequence)}"#),
        result.output)
    }
    // The answers come in the iOS order: before publishing, then once PUBLISHING.
    let lines = result.output.split(separator: "\n").map(String.init)
    let before = try XCTUnwrap(
      lines.firstIndex { $0.hasSuffix("available data-own: no (Stream not found)") })
    let publishing = try XCTUnwrap(lines.firstIndex { $0.hasSuffix("publish data-own PUBLISHING") })
    let after = try XCTUnwrap(
      lines.firstIndex { $0.hasSuffix("available data-own: yes (Available)") })
    XCTAssertLessThan(before, publishing)
    XCTAssertLessThan(publishing, after)
  }

  func testNoAvailableAndNoDataSkipBoth() throws {
    let out = try ExampleRunner.temporaryDirectory("two-way-no-data")
    let result = try ExampleRunner.run(
      "TwoWayStreaming",
      ["--duration", "3", "--no-available", "--data-count", "0", "--out", out])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    XCTAssertFalse(result.output.contains("] available "), result.output)
    XCTAssertNil(result.summary["Available once PUBLISHING"])
    XCTAssertEqual(result.summary["Data sent"], "0")
    XCTAssertEqual(result.summary["Data events received"], "0")
  }

  func testNegativeDataCountIsAUsageError() throws {
    let result = try ExampleRunner.run("TwoWayStreaming", ["--data-count", "-1"])
    XCTAssertEqual(result.status, 64, result.output)
    XCTAssertTrue(result.output.contains("--data-count wants 0 or more"), result.output)
  }
}
