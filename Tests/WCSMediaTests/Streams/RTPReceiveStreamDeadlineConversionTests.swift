import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// `RTPReceiveStream.duration(seconds:)` replaces `Duration.seconds(_:)` where the stream turns
/// its deadline into an instant; the two must agree to the attosecond.
final class RTPReceiveStreamDeadlineConversionTests: XCTestCase {
  func testSameDurationAsTheRuntimeOnSeededSeconds() {
    var random = SplitMix64(seed: 0xDEAD_11E5)
    let scales = [1e-12, 1e-9, 1e-6, 1e-3, 0.02, 1, 10, 1_000, 86_400, 1e7]
    for round in 0..<400_000 {
      let seconds = Double.random(in: -1...1, using: &random) * scales[round % scales.count]
      XCTAssertEqual(
        RTPReceiveStream.duration(seconds: seconds).attoseconds,
        Duration.seconds(seconds).attoseconds, "\(seconds)")
    }
    // Any positive bit pattern up to ~2^33 s: every exponent and fraction there.
    for _ in 0..<200_000 {
      let seconds = Double(bitPattern: random.next() & 0x41FF_FFFF_FFFF_FFFF)
      XCTAssertEqual(
        RTPReceiveStream.duration(seconds: seconds).attoseconds,
        Duration.seconds(seconds).attoseconds, "\(seconds)")
    }
  }

  func testEdgeValues() {
    let values: [Double] = [
      0, -0.0, 1, -1, 0.5, 0.1, 0.3, 1e-18, 5e-19, 1.5e-18, 2.5e-18, -2.5e-18, 1e-19,
      .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 1e-300, 0.020, 0.040, 8191.9999,
      4_294_967_296.000_000_5, 86_400 * 365.0,
    ]
    for seconds in values {
      XCTAssertEqual(
        RTPReceiveStream.duration(seconds: seconds), Duration.seconds(seconds), "\(seconds)")
    }
    // One written out: 0.1 s is 100,000,000,000,000,000 as, from the double nearest 0.1.
    XCTAssertEqual(RTPReceiveStream.duration(seconds: 0.1).attoseconds, 100_000_000_000_000_000)
  }
}
