import WCSMedia
import XCTest

final class SendSideBandwidthEstimatorTests: XCTestCase {
  func testStartBoundsREMBAndCallback() {
    let estimator = SendSideBandwidthEstimator(
      startBitrate: 300_000, minBitrate: 50_000, maxBitrate: 2_000_000)
    var reported: [Int] = []
    estimator.onTargetBitrateChanged = { reported.append($0) }
    XCTAssertEqual(estimator.targetBitrate, 300_000)
    // Start-up probes at 3× and 6× the start rate.
    XCTAssertEqual(estimator.takeProbeClusters().map(\.bitrate), [900_000, 1_800_000])
    XCTAssertEqual(estimator.takeProbeClusters(), [])

    estimator.onREMB(REMBUpdate(bitrate: 200_000), now: atMicroseconds(0))
    XCTAssertEqual(estimator.targetBitrate, 200_000)
    estimator.onREMB(REMBUpdate(bitrate: 10_000), now: atMicroseconds(0))
    XCTAssertEqual(estimator.targetBitrate, 50_000, "min bound beats REMB")
    estimator.setBounds(min: 20_000, max: 40_000)
    XCTAssertEqual(estimator.targetBitrate, 10_000 < 20_000 ? 20_000 : 10_000)
    estimator.onREMB(REMBUpdate(bitrate: 5_000_000), now: atMicroseconds(0))
    XCTAssertEqual(estimator.targetBitrate, 40_000, "max bound")
    XCTAssertEqual(reported, [200_000, 50_000, 20_000, 40_000])
  }

  /// Feedback for packets sent across the 16-bit wrap: lost ones count as loss, unknown ones are
  /// ignored, acked ones feed the throughput.
  func testFeedbackAcrossTheWrap() {
    let estimator = SendSideBandwidthEstimator(startBitrate: 500_000, probing: false)
    var sequence: UInt16 = 65_500
    var feedback: [PacketFeedback] = []
    for index in 0..<100 {
      let sendTime = Int64(index) * 10_000
      estimator.onPacketSent(
        PacketSent(
          transportSequenceNumber: sequence, sendTime: atMicroseconds(sendTime), size: 1000))
      // Every 10th packet is lost; the rest arrive 30 ms later.
      feedback.append(
        PacketFeedback(
          transportSequenceNumber: sequence,
          arrivalTime: index % 10 == 9 ? nil : atMicroseconds(7_000_000 + sendTime + 30_000)))
      sequence &+= 1
    }
    feedback.append(PacketFeedback(transportSequenceNumber: 30_000, arrivalTime: atMicroseconds(1)))
    // Loss is measured over at least 500 ms of feedback: two reports.
    estimator.onTransportFeedback(Array(feedback[..<50]), now: atMicroseconds(600_000))
    XCTAssertEqual(estimator.lossFraction, 0)
    estimator.onTransportFeedback(Array(feedback[50...]), now: atMicroseconds(1_100_000))
    XCTAssertEqual(estimator.lossFraction, 0.1, accuracy: 0.001)
    // 900 bytes per 10 ms on average = 720 kbit/s.
    XCTAssertEqual(Double(estimator.acknowledgedBitrate ?? 0), 720_000, accuracy: 40_000)
    XCTAssertEqual(estimator.bandwidthUsage, .normal)
    // Both reports: now − send time of the newest acked packet = 120 ms, folded in by 1/8.
    XCTAssertEqual(
      estimator.roundTripTime, .microseconds(((200_000 * 7 + 120_000) / 8 * 7 + 120_000) / 8))
  }
}
