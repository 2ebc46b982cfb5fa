import WCSMedia
import XCTest

final class ConnectionQualityTests: XCTestCase {
  func testThresholdsAsInTheWebSDK() {
    func settled(measured: Double, expected: Double) -> ConnectionQuality {
      var estimator = ConnectionQualityEstimator()
      var quality = ConnectionQuality.unknown
      for _ in 0..<30 { quality = estimator.update(measured: measured, expected: expected) }
      return quality
    }
    XCTAssertEqual(settled(measured: 1_000_000, expected: 1_050_000), .perfect)
    XCTAssertEqual(settled(measured: 700_000, expected: 1_000_000), .good)  // 30 % apart
    XCTAssertEqual(settled(measured: 400_000, expected: 1_000_000), .bad)  // 60 % apart
    XCTAssertEqual(settled(measured: 1_600_000, expected: 1_000_000), .bad)
    // Below 50 kbit/s only > 150 % is BAD.
    XCTAssertEqual(settled(measured: 40_000, expected: 30_000), .perfect)
    XCTAssertEqual(settled(measured: 100_000, expected: 30_000), .bad)
    var empty = ConnectionQualityEstimator()
    XCTAssertEqual(empty.update(measured: 1_000, expected: 0), .unknown)
  }

  func testOneOutlierIsSmoothed() {
    var estimator = ConnectionQualityEstimator()
    for _ in 0..<20 { estimator.update(measured: 1_000_000, expected: 1_000_000) }
    // Steady-state Kalman gain with Q = 0.01, R = 0.05 is ≈ 0.36: 1 − 0.36 × 0.7 ≈ 0.75.
    XCTAssertEqual(estimator.update(measured: 300_000, expected: 1_000_000), .good)
    XCTAssertEqual(estimator.smoothedRatio ?? 0, 0.75, accuracy: 0.01)
    for _ in 0..<20 { estimator.update(measured: 300_000, expected: 1_000_000) }
    XCTAssertEqual(estimator.quality, .bad)
  }

  func testNotEnoughBandwidthAfterHoldTime() {
    var detector = InsufficientBandwidthDetector()
    XCTAssertNil(detector.update(estimate: 400_000, minBitrate: 500_000, now: 0))
    XCTAssertNil(detector.update(estimate: 400_000, minBitrate: 500_000, now: 2_999_999))
    XCTAssertEqual(
      detector.update(estimate: 380_000, minBitrate: 500_000, now: 3_000_000),
      .notEnoughBandwidth(required: 500_000, estimate: 380_000))
    XCTAssertTrue(detector.isRaised)
    XCTAssertNil(detector.update(estimate: 380_000, minBitrate: 500_000, now: 4_000_000))
    XCTAssertEqual(
      detector.update(estimate: 600_000, minBitrate: 500_000, now: 5_000_000), .recovered)
    // A short dip does not raise it.
    XCTAssertNil(detector.update(estimate: 100_000, minBitrate: 500_000, now: 6_000_000))
    XCTAssertNil(detector.update(estimate: 600_000, minBitrate: 500_000, now: 7_000_000))
    XCTAssertNil(detector.update(estimate: 100_000, minBitrate: 500_000, now: 9_500_000))
    XCTAssertEqual(
      InsufficientBandwidthDetector.info(required: 500_000, estimate: 380_000), "500000/380000")
  }

  func testBitrateSplit() {
    let audio = 16_000...64_000
    let video = 100_000...2_000_000
    XCTAssertEqual(
      BitrateAllocation.split(
        target: 1_000_000, audioRange: audio, audioPreferred: 32_000, videoRange: video),
      BitrateAllocation(audio: 32_000, video: 968_000))
    XCTAssertEqual(
      BitrateAllocation.split(
        target: 5_000_000, audioRange: audio, audioPreferred: 32_000, videoRange: video),
      BitrateAllocation(audio: 32_000, video: 2_000_000))
    // Video keeps its minimum; audio gives way down to its own.
    XCTAssertEqual(
      BitrateAllocation.split(
        target: 120_000, audioRange: audio, audioPreferred: 32_000, videoRange: video),
      BitrateAllocation(audio: 20_000, video: 100_000))
    XCTAssertEqual(
      BitrateAllocation.split(
        target: 50_000, audioRange: audio, audioPreferred: 32_000, videoRange: video),
      BitrateAllocation(audio: 16_000, video: 100_000))
    XCTAssertEqual(
      BitrateAllocation.split(
        target: 20_000, audioRange: audio, audioPreferred: 32_000, videoRange: nil),
      BitrateAllocation(audio: 20_000, video: 0))
    XCTAssertEqual(
      BitrateAllocation.split(
        target: 300_000, audioRange: nil, audioPreferred: 0, videoRange: video),
      BitrateAllocation(audio: 0, video: 300_000))
  }
}
