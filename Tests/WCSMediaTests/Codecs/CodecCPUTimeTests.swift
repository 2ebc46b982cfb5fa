import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSMedia

final class CodecCPUTimeTests: XCTestCase {
  func testCountsThisThreadsCPUNotWallTime() {
    var busy = 0.0
    var sink = 0.0
    CodecCPUTime.measure(into: &busy) {
      let start = Date()
      while Date().timeIntervalSince(start) < 0.03 { sink += sin(sink + 1) }
    }
    var asleep = 0.0
    CodecCPUTime.measure(into: &asleep) { Thread.sleep(forTimeInterval: 0.05) }
    // 30 ms of spinning is mostly CPU (a loaded machine may take some of it away); 50 ms of
    // sleep is almost none.
    XCTAssertGreaterThan(busy, 0.01)
    XCTAssertLessThan(busy, 0.5)
    XCTAssertLessThan(asleep, 0.01)
    XCTAssertNotEqual(sink, -1)
  }

  func testAccumulatesAndCountsAThrowingCall() {
    enum Failure: Error { case expected }
    var total = 1.0
    XCTAssertThrowsError(
      try CodecCPUTime.measure(into: &total) { () throws(Failure) -> Int in throw .expected })
    XCTAssertGreaterThanOrEqual(total, 1.0)
    XCTAssertLessThan(total, 1.01)
  }
}
