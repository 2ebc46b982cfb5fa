import WCSMedia
import XCTest

final class TransportFeedbackGeneratorTests: XCTestCase {
  /// 65534 at 1.000 s, 65535 lost, 0 at +1 ms, 2 at +1.5 ms, 1 at +2 ms (reordered), 3 at +99 ms.
  func testLossReorderingAndSequenceWrapAreEncoded() {
    var generator = TransportFeedbackGenerator()
    XCTAssertNil(generator.nextDeadline)
    let t0: Int64 = 1_000_000
    generator.onPacketReceived(transportSequenceNumber: 65534, arrivalTime: t0)
    generator.onPacketReceived(transportSequenceNumber: 0, arrivalTime: t0 + 1_000)
    generator.onPacketReceived(transportSequenceNumber: 2, arrivalTime: t0 + 1_500)
    generator.onPacketReceived(transportSequenceNumber: 1, arrivalTime: t0 + 2_000)
    generator.onPacketReceived(transportSequenceNumber: 3, arrivalTime: t0 + 99_000)
    XCTAssertEqual(generator.nextDeadline, t0 + 100_000)
    XCTAssertEqual(generator.poll(now: t0 + 99_999), [])

    let feedbacks = generator.poll(now: t0 + 100_000)
    XCTAssertEqual(feedbacks.count, 1)
    guard let feedback = feedbacks.first else { return }
    XCTAssertEqual(feedback.baseSequenceNumber, 65534)
    // 1.000 s / 64 ms = 15.625 → reference 15 (0.960 s); first delta 40 ms = 160 ticks.
    XCTAssertEqual(feedback.referenceTime, 15)
    XCTAssertEqual(feedback.feedbackPacketCount, 0)
    XCTAssertEqual(
      feedback.packetStatuses,
      [
        .received(deltaTicks: 160),  // 65534
        .notReceived,  // 65535
        .received(deltaTicks: 4),  // 0: +1 ms
        .received(deltaTicks: 4),  // 1: +2 ms, 1 ms after 0 in sequence order
        .received(deltaTicks: -2),  // 2: arrived 0.5 ms before 1 → negative (large) delta
        .received(deltaTicks: 390),  // 3: 97.5 ms after 2 → over 255, large delta
      ])
    XCTAssertEqual(
      feedback.packetFeedbacks(),
      [
        PacketFeedback(transportSequenceNumber: 65534, arrivalTime: atMicroseconds(t0)),
        PacketFeedback(transportSequenceNumber: 65535, arrivalTime: nil),
        PacketFeedback(transportSequenceNumber: 0, arrivalTime: atMicroseconds(t0 + 1_000)),
        PacketFeedback(transportSequenceNumber: 1, arrivalTime: atMicroseconds(t0 + 2_000)),
        PacketFeedback(transportSequenceNumber: 2, arrivalTime: atMicroseconds(t0 + 1_500)),
        PacketFeedback(transportSequenceNumber: 3, arrivalTime: atMicroseconds(t0 + 99_000)),
      ])
    XCTAssertNil(generator.nextDeadline, "nothing new to report")

    // 4 is lost, 5 arrives, then the late 65535: the next feedback restarts at 65535.
    generator.onPacketReceived(transportSequenceNumber: 5, arrivalTime: t0 + 150_000)
    generator.onPacketReceived(transportSequenceNumber: 65535, arrivalTime: t0 + 160_000)
    XCTAssertEqual(generator.poll(now: t0 + 199_000), [])
    let second = generator.poll(now: t0 + 200_000)
    XCTAssertEqual(second.count, 1)
    XCTAssertEqual(second.first?.baseSequenceNumber, 65535)
    XCTAssertEqual(second.first?.feedbackPacketCount, 1)
    let arrivals = second.first?.packetFeedbacks().map(\.arrivalMicroseconds)
    XCTAssertEqual(
      arrivals,
      [t0 + 160_000, t0 + 1_000, t0 + 2_000, t0 + 1_500, t0 + 99_000, nil, t0 + 150_000])
  }

  func testRoundingToTicksDoesNotDrift() {
    var generator = TransportFeedbackGenerator()
    let t0: Int64 = 5_000_123
    for index in 0..<50 {
      generator.onPacketReceived(
        transportSequenceNumber: UInt16(index), arrivalTime: t0 + Int64(index) * 1_100)
    }
    let feedbacks = generator.flush()
    XCTAssertEqual(feedbacks.count, 1)
    let rebuilt = feedbacks.flatMap { $0.packetFeedbacks() }
    XCTAssertEqual(rebuilt.count, 50)
    for (index, entry) in rebuilt.enumerated() {
      let truth = t0 + Int64(index) * 1_100
      XCTAssertLessThanOrEqual(
        abs((entry.arrivalMicroseconds ?? 0) - truth), 125, "packet \(index)")
    }
  }

  func testDeltaBeyondSixteenBitsStartsANewFeedback() {
    var generator = TransportFeedbackGenerator()
    generator.onPacketReceived(transportSequenceNumber: 10, arrivalTime: 0)
    // 9 s = 36000 ticks does not fit a signed 16-bit delta (max 8.19 s).
    generator.onPacketReceived(transportSequenceNumber: 11, arrivalTime: 9_000_000)
    let feedbacks = generator.flush()
    XCTAssertEqual(feedbacks.map(\.baseSequenceNumber), [10, 11])
    XCTAssertEqual(feedbacks.map(\.feedbackPacketCount), [0, 1])
    XCTAssertEqual(feedbacks.last?.referenceTime, UInt32(9_000_000 / 64_000))
    XCTAssertEqual(
      feedbacks.flatMap { $0.packetFeedbacks() }.map(\.arrivalMicroseconds), [0, 9_000_000])
  }

  func testDuplicatesAreReportedOnce() {
    var generator = TransportFeedbackGenerator()
    generator.onPacketReceived(transportSequenceNumber: 7, arrivalTime: 64_000)
    generator.onPacketReceived(transportSequenceNumber: 7, arrivalTime: 70_000)
    generator.onPacketReceived(transportSequenceNumber: 8, arrivalTime: 65_000)
    let feedbacks = generator.flush()
    XCTAssertEqual(
      feedbacks.first?.packetStatuses, [.received(deltaTicks: 0), .received(deltaTicks: 4)])
  }
}

final class TransportFeedbackRobustnessTests: XCTestCase {
  /// A sender restart (or garbage) jumping far ahead is not reported as thousands of losses.
  func testHugeSequenceJumpRestartsTheWindow() {
    var generator = TransportFeedbackGenerator()
    generator.onPacketReceived(transportSequenceNumber: 100, arrivalTime: 0)
    generator.onPacketReceived(transportSequenceNumber: 20_100, arrivalTime: 1_000)
    generator.onPacketReceived(transportSequenceNumber: 20_101, arrivalTime: 2_000)
    let feedbacks = generator.flush()
    XCTAssertEqual(feedbacks.map(\.baseSequenceNumber), [20_100])
    XCTAssertEqual(feedbacks.first?.packetStatuses.count, 2)
  }

  /// Feedback with absurd arrival times or unknown sequence numbers changes nothing.
  func testEstimatorIgnoresAbsurdFeedback() {
    let estimator = SendSideBandwidthEstimator(startBitrate: 500_000, probing: false)
    estimator.onPacketSent(
      PacketSent(transportSequenceNumber: 1, sendTime: atMicroseconds(0), size: 1000))
    estimator.onTransportFeedback(
      [
        PacketFeedback(transportSequenceNumber: 1, arrivalTime: .distantFuture),
        PacketFeedback(transportSequenceNumber: 2, arrivalTime: .distantPast),
        PacketFeedback(transportSequenceNumber: 40_000, arrivalTime: atMicroseconds(5)),
      ], now: atMicroseconds(100_000))
    XCTAssertEqual(estimator.targetBitrate, 500_000)
    XCTAssertNil(estimator.acknowledgedBitrate)
  }
}
