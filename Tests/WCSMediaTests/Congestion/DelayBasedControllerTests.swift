import WCSMedia
import XCTest

/// Unit checks of the GCC building blocks with hand-made inputs.
final class DelayBasedControllerTests: XCTestCase {
  func testInterArrivalGroupsFiveMillisecondBursts() {
    var grouper = InterArrivalGrouper()
    // Group A: sent 0–4 ms; group B: 20–24 ms; group C starts at 40 ms and closes B.
    XCTAssertNil(grouper.add(sendTime: 0, arrivalTime: 50_000, size: 100))
    XCTAssertNil(grouper.add(sendTime: 4_000, arrivalTime: 54_000, size: 100))
    XCTAssertNil(grouper.add(sendTime: 20_000, arrivalTime: 71_000, size: 300))
    XCTAssertNil(grouper.add(sendTime: 24_000, arrivalTime: 76_000, size: 300))
    // C's first packet closes B, compared with A by their last packets (24 vs 4 ms sent,
    // 76 vs 54 ms arrived).
    XCTAssertEqual(
      grouper.add(sendTime: 40_000, arrivalTime: 90_000, size: 50),
      InterArrivalGrouper.Deltas(
        sendDelta: 20_000, arrivalDelta: 22_000, sizeDelta: 400, arrivalTime: 76_000))
    // A packet sent 10 ms later but arriving within 5 ms, ahead of its send spacing, is part of
    // the same burst on the wire: it joins C.
    XCTAssertNil(grouper.add(sendTime: 50_000, arrivalTime: 93_000, size: 50))
    let deltas = grouper.add(sendTime: 70_000, arrivalTime: 120_000, size: 50)
    // C (50 ms / 93 ms, 100 bytes) against B (24 ms / 76 ms, 600 bytes).
    XCTAssertEqual(
      deltas,
      InterArrivalGrouper.Deltas(
        sendDelta: 26_000, arrivalDelta: 17_000, sizeDelta: 100 - 600, arrivalTime: 93_000))
  }

  private func feed(
    _ trendline: inout TrendlineEstimator, groups: Int, sendSpacing: Int64, arrivalSpacing: Int64
  ) -> [TrendlineEstimator.BandwidthUsage] {
    var states: [TrendlineEstimator.BandwidthUsage] = []
    var arrival: Int64 = 0
    for _ in 0..<groups {
      arrival += arrivalSpacing
      states.append(
        trendline.update(
          InterArrivalGrouper.Deltas(
            sendDelta: sendSpacing, arrivalDelta: arrivalSpacing, sizeDelta: 0,
            arrivalTime: arrival)))
    }
    return states
  }

  func testTrendlineDetectsOveruseAndUnderuse() {
    var steady = TrendlineEstimator()
    XCTAssertEqual(
      Set(feed(&steady, groups: 100, sendSpacing: 5_000, arrivalSpacing: 5_000)), [.normal])
    // The threshold decays towards its floor while nothing happens.
    XCTAssertLessThan(steady.threshold, 12.5)
    XCTAssertGreaterThanOrEqual(steady.threshold, 6)

    // Every group arrives 1 ms later than sent: queue grows by 20 %.
    var growing = TrendlineEstimator()
    let overuse = feed(&growing, groups: 40, sendSpacing: 5_000, arrivalSpacing: 6_000)
    XCTAssertEqual(overuse.prefix(19).filter { $0 != .normal }.count, 0, "window not yet full")
    XCTAssertTrue(overuse.contains(.overusing))
    XCTAssertGreaterThan(growing.modifiedTrend, growing.threshold)

    var draining = TrendlineEstimator()
    let underuse = feed(&draining, groups: 40, sendSpacing: 5_000, arrivalSpacing: 4_000)
    XCTAssertEqual(underuse.last, .underusing)
    XCTAssertFalse(underuse.contains(.overusing))
  }

  func testThresholdStaysClamped() {
    var trendline = TrendlineEstimator()
    // Alternating large swings: |trend| stays near the threshold + 15 limit, never past 600.
    var arrival: Int64 = 0
    for index in 0..<2_000 {
      let arrivalDelta: Int64 = index % 40 < 20 ? 9_000 : 1_000
      arrival += arrivalDelta
      trendline.update(
        InterArrivalGrouper.Deltas(
          sendDelta: 5_000, arrivalDelta: arrivalDelta, sizeDelta: 0, arrivalTime: arrival))
      XCTAssertGreaterThanOrEqual(trendline.threshold, 6)
      XCTAssertLessThanOrEqual(trendline.threshold, 600)
    }
    XCTAssertGreaterThan(trendline.threshold, 12.5, "large trends raise it (K_u)")
  }

  func testAIMDDecreasesToBetaTimesAckedAndIncreases() {
    var controller = AIMDRateController(startBitrate: 1_000_000, bounds: 10_000...5_000_000)
    // 8 %/s far from convergence.
    controller.update(usage: .normal, ackedBitrate: 1_000_000, rtt: 100_000, now: 0)
    let increased = controller.update(
      usage: .normal, ackedBitrate: 1_000_000, rtt: 100_000, now: 1_000_000)
    XCTAssertEqual(increased, 1_080_000, accuracy: 1)
    // Overuse: 0.85 × acked, then hold.
    let decreased = controller.update(
      usage: .overusing, ackedBitrate: 800_000, rtt: 100_000, now: 1_100_000)
    XCTAssertEqual(decreased, 680_000, accuracy: 1)
    XCTAssertEqual(controller.state, .hold)
    XCTAssertTrue(controller.isNearConvergence)
    XCTAssertFalse(controller.canReduceFurther(now: 1_150_000, rtt: 100_000, ackedBitrate: 700_000))
    XCTAssertTrue(controller.canReduceFurther(now: 1_200_000, rtt: 100_000, ackedBitrate: 700_000))
    // Near the link capacity the increase is additive: one ~1200-byte packet per response time
    // (RTT + 100 ms): 680 kbit/s / 30 fps = 22.7 kbit/frame in 3 packets → 7.6 kbit / 0.2 s.
    let resumed = controller.update(
      usage: .normal, ackedBitrate: 680_000, rtt: 100_000, now: 1_200_000)
    let additive = controller.update(
      usage: .normal, ackedBitrate: 680_000, rtt: 100_000, now: 2_200_000)
    XCTAssertEqual(additive - resumed, 37_778, accuracy: 300)
    // Never more than 1.5 × acked + 10 kbit/s.
    var capped = AIMDRateController(startBitrate: 1_000_000, bounds: 10_000...5_000_000)
    capped.update(usage: .normal, ackedBitrate: 500_000, rtt: 100_000, now: 0)
    XCTAssertEqual(
      capped.update(usage: .normal, ackedBitrate: 500_000, rtt: 100_000, now: 1_000_000),
      1_000_000)
  }

  func testLossBasedRules() {
    func run(lossPercent: Int) -> Double? {
      var controller = LossBasedController()
      controller.update(
        received: 100 - lossPercent, lost: lossPercent, currentTarget: 1_000_000, rtt: 100_000,
        now: 0)
      controller.update(
        received: 100 - lossPercent, lost: lossPercent, currentTarget: 1_000_000, rtt: 100_000,
        now: 1_000_000)
      return controller.bitrate
    }
    XCTAssertEqual(run(lossPercent: 1) ?? 0, 1_050_000, accuracy: 1, "< 2 %: +5 %/s")
    XCTAssertEqual(run(lossPercent: 5) ?? 0, 1_000_000, accuracy: 1, "2–10 %: hold")
    XCTAssertEqual(run(lossPercent: 20) ?? 0, 900_000, accuracy: 1, "> 10 %: × (1 − 0.5 loss)")
    var tooFew = LossBasedController()
    XCTAssertFalse(
      tooFew.update(received: 5, lost: 5, currentTarget: 1_000_000, rtt: 0, now: 2_000_000))
    XCTAssertNil(tooFew.bitrate)
  }

  func testAcknowledgedBitrate() {
    var estimator = AcknowledgedBitrateEstimator()
    // 1000 bytes every 10 ms = 800 kbit/s.
    for index in 0..<10 { estimator.onAcknowledged(arrivalTime: Int64(index) * 10_000, size: 1000) }
    XCTAssertNil(estimator.bitrate, "less than 150 ms seen")
    for index in 10..<200 {
      estimator.onAcknowledged(arrivalTime: Int64(index) * 10_000, size: 1000)
    }
    XCTAssertEqual(estimator.bitrate ?? 0, 800_000, accuracy: 20_000)
  }

  func testSequenceUnwrapping() {
    var unwrapper = TransportSequenceUnwrapper()
    XCTAssertEqual(unwrapper.unwrap(65_534), 65_534)
    XCTAssertEqual(unwrapper.unwrap(1), 65_537)
    XCTAssertEqual(unwrapper.unwrap(65_535), 65_535, "reordered across the wrap")
    XCTAssertEqual(unwrapper.peek(3), 65_539)
  }
}
