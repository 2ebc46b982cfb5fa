import WCSMedia
import XCTest

/// GCC on a simulated bottleneck (see `CongestionSimulation`: 40 ms one-way delay, 300 ms
/// drop-tail queue, TWCC every 100 ms); every run prints its key figures.
final class SendSideBandwidthEstimatorSimulationTests: XCTestCase {
  private let reportSeconds: [Double] = [1, 5, 10, 15, 20, 21, 22, 25, 30, 35]

  /// Steady 3 Mbit/s; the issue asks that the rate "settles between 70 % and 95 % of capacity
  /// within 20 s".
  ///
  /// GCC's steady state is a sawtooth: back-off to β = 0.85 × the acknowledged rate, additive
  /// climb at half a packet per response time (~24 kbit/s per second here), and the next overuse
  /// once the send rate is ~2–3 % above capacity: the trendline only sees a growing queue, and the
  /// queue only grows while the send rate exceeds the capacity. So the 1-second average around
  /// each peak is 100–103 % of capacity by construction, and the mean of any window shorter than
  /// one sawtooth period (back-off to back-off, ~22 s here) measures where in the cycle it falls,
  /// not the level the estimator settled at. The shortest honest window is one period: from 20 s
  /// on, every window of that length (sliding by 100 ms over more than a whole period of phases)
  /// must lie in 70–95 %, and every 1-second average in the sawtooth's envelope, 80–105 %.
  func testSteadyCapacitySettlesBetween70And95PercentWithin20Seconds() {
    let capacity = 3_000_000.0
    let duration = 70.0
    let trace = CongestionSimulation.run(
      CongestionScenario(capacitySchedule: [(0, capacity)], duration: Int64(duration * 1_000_000)))
    print(trace.summary("steady 3 Mbit/s", seconds: reportSeconds + [40, 50, 60, 70]))
    let early = trace.meanTarget(from: 15, to: 20) / capacity
    let longer = trace.meanTarget(from: 15, to: 40) / capacity
    let backOffs = trace.backOffs(from: 5, to: duration)
    let periods = zip(backOffs, backOffs.dropFirst()).map { $1 - $0 }
    let period = (periods.max() ?? duration).rounded(.up)
    let periodMeans = trace.slidingMeans(window: period, from: 20, to: duration).map {
      $0 / capacity
    }
    let secondMeans = trace.slidingMeans(window: 1, from: 20, to: duration).map { $0 / capacity }
    let worstDelay = trace.worstQueueingDelay(from: 15, to: duration)
    let finalCapacity = Double(trace.samples.last?.linkCapacity ?? 0) / capacity
    print(
      """
        mean target 15–20 s: \(percent(early)), 15–40 s: \(percent(longer)) of capacity
        back-offs at \(backOffs.map { "\($0) s" }.joined(separator: ", ")); longest period \(period) s
        \(Int(period)) s means from 20 s: \(percent(periodMeans.min() ?? 0))–\(percent(periodMeans.max() ?? 0))
        1 s means from 20 s: \(percent(secondMeans.min() ?? 0))–\(percent(secondMeans.max() ?? 0))
        worst queueing delay 15–\(Int(duration)) s: \(worstDelay / 1000) ms, queue drops \(trace.queueDrops)
        link capacity estimate at \(Int(duration)) s: \(percent(finalCapacity))
      """)
    XCTAssertGreaterThan(early, 0.70)
    XCTAssertLessThan(early, 0.95)
    XCTAssertGreaterThan(longer, 0.70)
    XCTAssertLessThan(longer, 0.95)
    // At least two whole periods, so that the windows from 20 s sweep every phase.
    XCTAssertGreaterThanOrEqual(backOffs.count, 3)
    XCTAssertLessThanOrEqual(20 + 2 * period, duration)
    XCTAssertFalse(periodMeans.isEmpty)
    for (index, mean) in periodMeans.enumerated() {
      XCTAssertGreaterThan(mean, 0.70, "window from \(20 + Double(index) / 10) s")
      XCTAssertLessThan(mean, 0.95, "window from \(20 + Double(index) / 10) s")
    }
    for (index, mean) in secondMeans.enumerated() {
      XCTAssertGreaterThan(mean, 0.80, "second from \(20 + Double(index) / 10) s")
      XCTAssertLessThan(mean, 1.05, "second from \(20 + Double(index) / 10) s")
    }
    XCTAssertLessThan(worstDelay, 150_000)
    XCTAssertEqual(trace.queueDrops, 0)
    XCTAssertEqual(finalCapacity, 1, accuracy: 0.05)
  }

  func testCapacityDropIsFollowedWithin5SecondsAndQueueRecovers() {
    let trace = CongestionSimulation.run(
      CongestionScenario(
        capacitySchedule: [(0, 3_000_000), (20_000_000, 600_000)], duration: 40_000_000))
    print(trace.summary("3 → 0.6 Mbit/s at 20 s", seconds: reportSeconds + [40]))
    guard let before = trace.sample(atSecond: 19.9),
      let firstUnder = trace.samples(from: 20, to: 40).first(where: { $0.sendRate < 700_000 })
    else { return XCTFail("no samples") }
    let lastQueued = trace.samples(from: 20, to: 40).last { $0.maxQueueingDelay >= 100_000 }
    let recovered = Double(lastQueued?.time ?? 20_000_000) / 1_000_000 + 0.1
    let mean = trace.meanTarget(from: 30, to: 40)
    print(
      """
        1 s send rate under 700 kbps from \(Double(firstUnder.time) / 1_000_000) s; \
      queueing delay under 100 ms from \(recovered) s; mean target 30–40 s \(Int(mean / 1000)) kbps
      """)
    XCTAssertGreaterThan(before.target, 2_000_000)
    // "Under 0.7 Mbit/s within 5 s": from 25 s on, both the target and the 1-second send rate.
    for sample in trace.samples(from: 25, to: 40) {
      XCTAssertLessThan(sample.target, 700_000, "t=\(sample.time) µs")
      XCTAssertLessThan(sample.sendRate, 700_000, "t=\(sample.time) µs")
    }
    // The queue filled when capacity fell; it has drained 5 s later and stays drained through
    // the later sawtooth peaks.
    XCTAssertGreaterThan(trace.worstQueueingDelay(from: 20, to: 21), 200_000)
    XCTAssertLessThan(trace.worstQueueingDelay(from: 25, to: 40), 100_000)
    XCTAssertLessThanOrEqual(recovered, 25)
    // Settled near the new capacity rather than starving.
    XCTAssertGreaterThan(mean, 0.70 * 600_000)
    XCTAssertLessThan(mean, 600_000)
  }

  /// 5 % loss is in the 2–10 % "hold" band of the loss-based controller: the target must not
  /// collapse (it holds where it was; the delay-based part keeps it under capacity). The 5 % is
  /// lost before the bottleneck, so the link carries 95 % of the send rate.
  func testFivePercentRandomLossDoesNotCollapse() {
    let capacity = 3_000_000.0
    let fromStart = CongestionSimulation.run(
      CongestionScenario(
        capacitySchedule: [(0, capacity)], lossSchedule: [(0, 0.05)], duration: 30_000_000,
        seed: 7))
    print(fromStart.summary("3 Mbit/s, 5 % loss from 0 s", seconds: reportSeconds))
    let afterRampUp = CongestionSimulation.run(
      CongestionScenario(
        capacitySchedule: [(0, capacity)], lossSchedule: [(10_000_000, 0.05)],
        duration: 30_000_000, seed: 11))
    print(afterRampUp.summary("3 Mbit/s, 5 % loss from 10 s", seconds: reportSeconds))
    for trace in [fromStart, afterRampUp] {
      XCTAssertGreaterThan(trace.randomLosses, 200)
      for sample in trace.samples(from: 10, to: 30) {
        XCTAssertGreaterThan(Double(sample.target), 0.70 * capacity, "t=\(sample.time) µs")
        XCTAssertLessThan(Double(sample.target), capacity, "t=\(sample.time) µs")
      }
      let measured = trace.samples(from: 15, to: 30).map(\.lossFraction)
      let meanLoss = measured.reduce(0, +) / Double(max(measured.count, 1))
      XCTAssertEqual(meanLoss, 0.05, accuracy: 0.02)
      print("  mean target 10–30 s: \(percent(trace.meanTarget(from: 10, to: 30) / capacity))")
    }
  }

  func testREMBCapsTheTarget() {
    let trace = CongestionSimulation.run(
      CongestionScenario(
        capacitySchedule: [(0, 3_000_000)], duration: 15_000_000,
        remb: [(5_000_000, 1_000_000), (10_000_000, 4_000_000)]))
    print(trace.summary("REMB 1 Mbit/s at 5 s, 4 Mbit/s at 10 s", seconds: [1, 5, 6, 10, 15]))
    for sample in trace.samples(from: 5.05, to: 9.95) {
      XCTAssertLessThanOrEqual(sample.target, 1_000_000, "t=\(sample.time) µs")
    }
    XCTAssertEqual(trace.sample(atSecond: 9.9)?.target, 1_000_000)
    // Raising the cap lets the target grow again (at the loss-based 5 %/s, from 1 Mbit/s).
    XCTAssertGreaterThan(trace.sample(atSecond: 15)?.target ?? 0, 1_200_000)
  }

  func testMinAndMaxBoundsHold() {
    let capped = CongestionSimulation.run(
      CongestionScenario(
        capacitySchedule: [(0, 3_000_000)], duration: 10_000_000,
        boundsChanges: [(4_000_000, 200_000, 1_200_000)]))
    print(capped.summary("max 1.2 Mbit/s from 4 s", seconds: [1, 4, 5, 10]))
    for sample in capped.samples(from: 4.01, to: 10) {
      XCTAssertLessThanOrEqual(sample.target, 1_200_000, "t=\(sample.time) µs")
      XCTAssertGreaterThanOrEqual(sample.target, 200_000, "t=\(sample.time) µs")
    }
    XCTAssertEqual(capped.sample(atSecond: 10)?.target, 1_200_000)

    // A floor above the path capacity holds even though the path overuses.
    let floored = CongestionSimulation.run(
      CongestionScenario(
        capacitySchedule: [(0, 400_000)], duration: 10_000_000, minBitrate: 600_000,
        maxBitrate: 2_000_000))
    print(floored.summary("min 600 kbit/s on a 400 kbit/s path", seconds: [1, 5, 10]))
    XCTAssertTrue(floored.samples.allSatisfy { $0.target >= 600_000 })
    XCTAssertGreaterThan(floored.queueDrops, 0)
  }

  private func percent(_ fraction: Double) -> String {
    "\((fraction * 1000).rounded() / 10) %"
  }

  func testRunsAreDeterministic() {
    let scenario = CongestionScenario(
      capacitySchedule: [(0, 2_000_000)], lossSchedule: [(0, 0.03)], duration: 5_000_000,
      seed: 42)
    let first = CongestionSimulation.run(scenario)
    let second = CongestionSimulation.run(scenario)
    XCTAssertEqual(first.samples.map(\.target), second.samples.map(\.target))
    XCTAssertEqual(first.randomLosses, second.randomLosses)
    XCTAssertGreaterThan(first.randomLosses, 0)
  }
}
