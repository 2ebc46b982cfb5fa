import WCSMedia
import XCTest

/// Unit checks of the GCC building blocks with hand-made inputs.
final class DelayBasedControllerTests: XCTestCase {
  func testInterArrivalGroupsFiveMillisecondBursts() {
    var grouper = InterArrivalGrouper()
    // Group A: sent 0–4 ms; group B: 20–24 ms; group C starts at 40 ms and closes B.
    XCTAssertNil(
      grouper.add(sendTime: atMicroseconds(0), arrivalTime: atMicroseconds(50_000), size: 100))
    XCTAssertNil(
      grouper.add(sendTime: atMicroseconds(4_000), arrivalTime: atMicroseconds(54_000), size: 100))
    XCTAssertNil(
      grouper.add(sendTime: atMicroseconds(20_000), arrivalTime: atMicroseconds(71_000), size: 300))
    XCTAssertNil(
      grouper.add(sendTime: atMicroseconds(24_000), arrivalTime: atMicroseconds(76_000), size: 300))
    // C's first packet closes B, compared with A by their last packets (24 vs 4 ms sent,
    // 76 vs 54 ms arrived).
    XCTAssertEqual(
      grouper.add(sendTime: atMicroseconds(40_000), arrivalTime: atMicroseconds(90_000), size: 50),
      InterArrivalGrouper.Deltas(
        sendDelta: .microseconds(20_000), arrivalDelta: .microseconds(22_000), sizeDelta: 400,
        arrivalTime: atMicroseconds(76_000)))
    // A packet sent 10 ms later but arriving within 5 ms, ahead of its send spacing, is part of
    // the same burst on the wire: it joins C.
    XCTAssertNil(
      grouper.add(sendTime: atMicroseconds(50_000), arrivalTime: atMicroseconds(93_000), size: 50))
    let deltas = grouper.add(
      sendTime: atMicroseconds(70_000), arrivalTime: atMicroseconds(120_000), size: 50)
    // C (50 ms / 93 ms, 100 bytes) against B (24 ms / 76 ms, 600 bytes).
    XCTAssertEqual(
      deltas,
      InterArrivalGrouper.Deltas(
        sendDelta: .microseconds(26_000), arrivalDelta: .microseconds(17_000), sizeDelta: 100 - 600,
        arrivalTime: atMicroseconds(93_000)))
  }

  private func feed(
    _ trendline: inout TrendlineEstimator, groups: Int, sendSpacing: Int64, arrivalSpacing: Int64,
    after start: Int64 = 0
  ) -> [TrendlineEstimator.BandwidthUsage] {
    var states: [TrendlineEstimator.BandwidthUsage] = []
    var arrival = start
    for _ in 0..<groups {
      arrival += arrivalSpacing
      states.append(
        trendline.update(
          InterArrivalGrouper.Deltas(
            sendDelta: .microseconds(Int(sendSpacing)),
            arrivalDelta: .microseconds(Int(arrivalSpacing)), sizeDelta: 0,
            arrivalTime: atMicroseconds(arrival))))
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
          sendDelta: .microseconds(5_000), arrivalDelta: .microseconds(Int(arrivalDelta)),
          sizeDelta: 0, arrivalTime: atMicroseconds(arrival)))
      XCTAssertGreaterThanOrEqual(trendline.threshold, 6)
      XCTAssertLessThanOrEqual(trendline.threshold, 600)
    }
  }

  /// libwebrtc's trendline gains: the threshold climbs slowly towards a sustained trend
  /// (k_up = 0.0087/ms) and falls back fast once it is gone (k_down = 0.039/ms), so one queue
  /// episode does not blind the detector to the next.
  func testThresholdFollowsTheTrend() {
    var trendline = TrendlineEstimator()
    // Groups 5 ms apart arriving 5.5 ms apart: modified trend 60 × 4 × 0.5 / 5.5 = 21.8.
    let overuse = feed(&trendline, groups: 150, sendSpacing: 5_000, arrivalSpacing: 5_500)
    XCTAssertEqual(trendline.modifiedTrend, 21.8, accuracy: 0.1)
    XCTAssertEqual(trendline.threshold, 21.7, accuracy: 0.1)
    XCTAssertEqual(overuse.last, .overusing)
    // 200 ms of flat delay: back at the 6 ms floor (the draft's K_d = 0.00018 would still be
    // near 21 here).
    _ = feed(&trendline, groups: 40, sendSpacing: 5_000, arrivalSpacing: 5_000, after: 825_000)
    XCTAssertEqual(trendline.threshold, 6)
    XCTAssertEqual(trendline.state, .normal)
  }

  func testAIMDDecreasesToBetaTimesAckedAndIncreases() {
    var controller = AIMDRateController(startBitrate: 1_000_000, bounds: 10_000...5_000_000)
    // 8 %/s far from convergence.
    controller.update(
      usage: .normal, ackedBitrate: 1_000_000, rtt: .microseconds(100_000), now: atMicroseconds(0))
    let increased = controller.update(
      usage: .normal, ackedBitrate: 1_000_000, rtt: .microseconds(100_000),
      now: atMicroseconds(1_000_000))
    XCTAssertEqual(increased, 1_080_000, accuracy: 1)
    // Overuse: 0.85 × acked, then hold.
    let decreased = controller.update(
      usage: .overusing, ackedBitrate: 800_000, rtt: .microseconds(100_000),
      now: atMicroseconds(1_100_000))
    XCTAssertEqual(decreased, 680_000, accuracy: 1)
    XCTAssertEqual(controller.state, .hold)
    XCTAssertTrue(controller.isNearConvergence)
    XCTAssertFalse(
      controller.canReduceFurther(
        now: atMicroseconds(1_150_000), rtt: .microseconds(100_000), ackedBitrate: 700_000))
    XCTAssertTrue(
      controller.canReduceFurther(
        now: atMicroseconds(1_200_000), rtt: .microseconds(100_000), ackedBitrate: 700_000))
    // Near the link capacity the increase is additive: half a ~1200-byte packet per response
    // time (RTT + 100 ms): 680 kbit/s / 30 fps = 22.7 kbit/frame in 3 packets → 7.6 kbit / 2 /
    // 0.2 s.
    let resumed = controller.update(
      usage: .normal, ackedBitrate: 680_000, rtt: .microseconds(100_000),
      now: atMicroseconds(1_200_000))
    XCTAssertEqual(resumed, decreased, accuracy: 1, "hold → increase starts from now")
    let additive = controller.update(
      usage: .normal, ackedBitrate: 680_000, rtt: .microseconds(100_000),
      now: atMicroseconds(2_200_000))
    XCTAssertEqual(additive - resumed, 18_889, accuracy: 1)
    // Never more than 1.5 × acked + 10 kbit/s.
    var capped = AIMDRateController(startBitrate: 1_000_000, bounds: 10_000...5_000_000)
    capped.update(
      usage: .normal, ackedBitrate: 500_000, rtt: .microseconds(100_000), now: atMicroseconds(0))
    XCTAssertEqual(
      capped.update(
        usage: .normal, ackedBitrate: 500_000, rtt: .microseconds(100_000),
        now: atMicroseconds(1_000_000)),
      1_000_000)
  }

  /// The link capacity estimate (draft §5.5 "average max bitrate") is what switches the increase
  /// from multiplicative to additive; a throughput outside its 3σ band switches it back.
  func testLinkCapacityEstimateSwitchesBetweenMultiplicativeAndAdditiveIncrease() {
    var controller = AIMDRateController(startBitrate: 3_600_000, bounds: 10_000...10_000_000)
    XCTAssertNil(controller.linkCapacityEstimate.estimate)
    XCTAssertFalse(controller.isNearConvergence)
    controller.update(
      usage: .normal, ackedBitrate: 3_000_000, rtt: .microseconds(100_000), now: atMicroseconds(0))
    // Overuse with 3 Mbit/s acknowledged: 0.85 × acked, not 0.85 × the 3.6 Mbit/s estimate.
    let backedOff = controller.update(
      usage: .overusing, ackedBitrate: 3_000_000, rtt: .microseconds(100_000),
      now: atMicroseconds(100_000))
    XCTAssertEqual(backedOff, 2_550_000, accuracy: 1)
    // First sample: estimate 3000 kbit/s, σ = √(0.4 × 3000) = 34.64 kbit/s.
    let capacity = controller.linkCapacityEstimate
    XCTAssertEqual(capacity.estimate ?? 0, 3_000_000, accuracy: 1)
    XCTAssertEqual(capacity.upperBound ?? 0, 3_103_923, accuracy: 1)
    XCTAssertEqual(capacity.lowerBound ?? 0, 2_896_077, accuracy: 1)
    XCTAssertTrue(controller.isNearConvergence)
    // Queues draining: hold.
    XCTAssertEqual(
      controller.update(
        usage: .underusing, ackedBitrate: 2_900_000, rtt: .microseconds(100_000),
        now: atMicroseconds(200_000)),
      2_550_000)
    XCTAssertEqual(controller.state, .hold)
    // 2.55 Mbit/s / 30 fps = 85 kbit/frame = 9 packets of 9.44 kbit; half a packet per
    // (100 ms RTT + 100 ms) = 23.6 kbit/s per second, against 8 % = 204 kbit/s multiplicative.
    XCTAssertEqual(controller.nearMaxIncreaseRate(rtt: .microseconds(100_000)), 23_611, accuracy: 1)
    controller.update(
      usage: .normal, ackedBitrate: 2_550_000, rtt: .microseconds(100_000),
      now: atMicroseconds(300_000))
    let additive = controller.update(
      usage: .normal, ackedBitrate: 2_550_000, rtt: .microseconds(100_000),
      now: atMicroseconds(1_300_000))
    XCTAssertEqual(additive, 2_573_611, accuracy: 1)
    // 3.05 Mbit/s is inside 3000 ± 104 kbit/s: still additive.
    let stillAdditive = controller.update(
      usage: .normal, ackedBitrate: 3_050_000, rtt: .microseconds(100_000),
      now: atMicroseconds(1_400_000))
    XCTAssertEqual(stillAdditive - additive, 2_383, accuracy: 1)
    // 3.2 Mbit/s is beyond the upper bound: the path changed, forget it and grow by 8 %/s.
    let multiplicative = controller.update(
      usage: .normal, ackedBitrate: 3_200_000, rtt: .microseconds(100_000),
      now: atMicroseconds(2_400_000))
    XCTAssertNil(controller.linkCapacityEstimate.estimate)
    XCTAssertEqual(multiplicative, stillAdditive * 1.08, accuracy: 1)

    // A second overuse sample averages in with α = 0.05 and widens σ by the squared error.
    var estimate = LinkCapacityEstimate()
    estimate.onOveruse(3_000_000)
    estimate.onOveruse(2_950_000)
    XCTAssertEqual(estimate.estimate ?? 0, 2_997_500, accuracy: 1)
    XCTAssertEqual(estimate.upperBound ?? 0, 3_103_645, accuracy: 1)
    XCTAssertEqual(estimate.lowerBound ?? 0, 2_891_355, accuracy: 1)
    estimate.reset()
    XCTAssertNil(estimate.upperBound)
  }

  /// A back-off waits one RTT (10…200 ms) after the last change of the rate, so an overuse seen
  /// right after a probe result is not cut against an acknowledged rate still catching up with it;
  /// unless the acknowledged rate is below half the estimate (libwebrtc `TimeToReduceFurther`).
  func testBackOffIsRateLimitedFromTheLastChange() {
    var controller = AIMDRateController(startBitrate: 300_000, bounds: 50_000...5_000_000)
    XCTAssertTrue(
      controller.canReduceFurther(
        now: atMicroseconds(0), rtt: .microseconds(200_000), ackedBitrate: nil))
    controller.setEstimate(2_850_000, now: atMicroseconds(400_000))
    // 150 ms after the probe result, 1.76 Mbit/s acknowledged (≥ half of 2.85): wait.
    XCTAssertFalse(
      controller.canReduceFurther(
        now: atMicroseconds(550_000), rtt: .microseconds(200_000), ackedBitrate: 1_760_000))
    XCTAssertTrue(
      controller.canReduceFurther(
        now: atMicroseconds(550_000), rtt: .microseconds(200_000), ackedBitrate: 1_400_000))
    XCTAssertTrue(
      controller.canReduceFurther(
        now: atMicroseconds(600_000), rtt: .microseconds(200_000), ackedBitrate: 2_200_000))
    // The RTT is clamped to 200 ms …
    XCTAssertFalse(
      controller.canReduceFurther(
        now: atMicroseconds(599_999), rtt: .microseconds(900_000), ackedBitrate: 2_200_000))
    XCTAssertTrue(
      controller.canReduceFurther(
        now: atMicroseconds(600_000), rtt: .microseconds(900_000), ackedBitrate: 2_200_000))
    // … and to at least 10 ms.
    XCTAssertTrue(
      controller.canReduceFurther(
        now: atMicroseconds(410_000), rtt: .microseconds(1_000), ackedBitrate: 2_200_000))
    XCTAssertEqual(
      controller.update(
        usage: .overusing, ackedBitrate: 2_200_000, rtt: .microseconds(200_000),
        now: atMicroseconds(600_000)),
      1_870_000, accuracy: 1)
  }

  /// Underuse holds the rate, which is no change: the next back-off may come one RTT after the
  /// decrease, however many hold updates came in between.
  func testHoldUpdatesDoNotPostponeTheNextBackOff() {
    var controller = AIMDRateController(startBitrate: 1_000_000, bounds: 10_000...5_000_000)
    let decreased = controller.update(
      usage: .overusing, ackedBitrate: 800_000, rtt: .microseconds(100_000),
      now: atMicroseconds(1_000_000))
    XCTAssertEqual(decreased, 680_000, accuracy: 1)
    for now: Int64 in [1_050_000, 1_150_000, 1_190_000] {
      XCTAssertEqual(
        controller.update(
          usage: .underusing, ackedBitrate: 700_000, rtt: .microseconds(100_000),
          now: atMicroseconds(now)),
        decreased, accuracy: 1)
    }
    XCTAssertEqual(controller.state, .hold)
    XCTAssertTrue(
      controller.canReduceFurther(
        now: atMicroseconds(1_100_000), rtt: .microseconds(100_000), ackedBitrate: 700_000))
    XCTAssertFalse(
      controller.canReduceFurther(
        now: atMicroseconds(1_099_999), rtt: .microseconds(100_000), ackedBitrate: 700_000))
  }

  func testLossBasedRules() {
    func run(lossPercent: Int) -> Double? {
      var controller = LossBasedController()
      controller.update(
        received: 100 - lossPercent, lost: lossPercent, currentTarget: 1_000_000,
        rtt: .microseconds(100_000),
        now: atMicroseconds(0))
      controller.update(
        received: 100 - lossPercent, lost: lossPercent, currentTarget: 1_000_000,
        rtt: .microseconds(100_000),
        now: atMicroseconds(1_000_000))
      return controller.bitrate
    }
    XCTAssertEqual(run(lossPercent: 1) ?? 0, 1_050_000, accuracy: 1, "< 2 %: +5 %/s")
    XCTAssertEqual(run(lossPercent: 5) ?? 0, 1_000_000, accuracy: 1, "2–10 %: hold")
    XCTAssertEqual(run(lossPercent: 20) ?? 0, 900_000, accuracy: 1, "> 10 %: × (1 − 0.5 loss)")
    var tooFew = LossBasedController()
    XCTAssertFalse(
      tooFew.update(
        received: 5, lost: 5, currentTarget: 1_000_000, rtt: .microseconds(0),
        now: atMicroseconds(2_000_000)))
    XCTAssertNil(tooFew.bitrate)
  }

  func testAcknowledgedBitrate() {
    var estimator = AcknowledgedBitrateEstimator()
    // 1000 bytes every 10 ms = 800 kbit/s.
    for index in 0..<10 {
      estimator.onAcknowledged(arrivalTime: atMicroseconds(Int64(index) * 10_000), size: 1000)
    }
    XCTAssertNil(estimator.bitrate, "less than 150 ms seen")
    for index in 10..<200 {
      estimator.onAcknowledged(arrivalTime: atMicroseconds(Int64(index) * 10_000), size: 1000)
    }
    XCTAssertEqual(estimator.bitrate ?? 0, 800_000, accuracy: 20_000)
  }

  func testSequenceUnwrapping() {
    var unwrapper = RTPExtendedSequenceNumber()
    XCTAssertEqual(unwrapper.extend(65_534), 65_534 + 65_536)
    XCTAssertEqual(unwrapper.extend(1), 65_537 + 65_536)
    XCTAssertEqual(unwrapper.extend(65_535), 65_535 + 65_536, "reordered across the wrap")
    XCTAssertEqual(unwrapper.extended(3), 65_539 + 65_536)
  }
}
