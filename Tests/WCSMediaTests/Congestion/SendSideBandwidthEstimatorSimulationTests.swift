import WCSMedia
import XCTest

/// GCC on a simulated bottleneck (see `CongestionSimulation`: 40 ms one-way delay, 300 ms
/// drop-tail queue, TWCC every 100 ms); every run prints its key figures.
final class SendSideBandwidthEstimatorSimulationTests: XCTestCase {
  private let reportSeconds: [Double] = [1, 5, 10, 15, 20, 21, 22, 25, 30, 35]

  /// The AIMD sawtooth climbs additively until the rate is a few percent over capacity (that is
  /// when the delay trend crosses the threshold), then drops to 0.85 × acked throughput. So the
  /// mean sits near 94 % and single peaks touch ~103 % for about a second.
  func testSteadyCapacitySettlesBelowCapacityWithin20Seconds() {
    let capacity = 3_000_000.0
    let trace = CongestionSimulation.run(
      CongestionScenario(capacitySchedule: [(0, capacity)], duration: 35_000_000))
    print(trace.summary("steady 3 Mbit/s", seconds: reportSeconds))
    let early = trace.meanTarget(from: 15, to: 20)
    let cycle = trace.meanTarget(from: 15, to: 35)
    print("  mean target 15–20 s: \(Int(early / 1000)) kbps, 15–35 s: \(Int(cycle / 1000)) kbps")
    XCTAssertGreaterThan(early, 0.70 * capacity)
    XCTAssertLessThan(early, 0.97 * capacity)
    XCTAssertGreaterThan(cycle, 0.70 * capacity)
    XCTAssertLessThan(cycle, 0.95 * capacity)
    for sample in trace.samples(from: 15, to: 35) {
      XCTAssertGreaterThan(Double(sample.target), 0.70 * capacity, "t=\(sample.time) µs")
      XCTAssertLessThan(Double(sample.target), 1.05 * capacity, "t=\(sample.time) µs")
      XCTAssertLessThan(sample.maxQueueingDelay, 100_000, "t=\(sample.time) µs")
    }
    XCTAssertEqual(trace.queueDrops, 0)
  }

  func testCapacityDropIsFollowedWithin5SecondsAndQueueRecoversWithin10() {
    let trace = CongestionSimulation.run(
      CongestionScenario(
        capacitySchedule: [(0, 3_000_000), (20_000_000, 600_000)], duration: 35_000_000))
    print(trace.summary("3 → 0.6 Mbit/s at 20 s", seconds: reportSeconds))
    guard let before = trace.sample(atSecond: 19.9), let after = trace.sample(atSecond: 25) else {
      return XCTFail("no samples")
    }
    XCTAssertGreaterThan(before.target, 2_000_000)
    XCTAssertLessThan(after.target, 700_000)
    XCTAssertLessThan(after.sendRate, 700_000)
    // The queue filled when capacity fell; it must drain within 10 s and stay drained.
    XCTAssertGreaterThan(
      trace.samples(from: 20, to: 21).map(\.maxQueueingDelay).max() ?? 0, 200_000)
    for sample in trace.samples(from: 30, to: 35) {
      XCTAssertLessThan(sample.maxQueueingDelay, 100_000, "t=\(sample.time) µs")
    }
    // Recovered towards the new capacity rather than starving.
    XCTAssertGreaterThan(trace.meanTarget(from: 30, to: 35), 0.5 * 600_000)
  }

  /// 5 % loss is in the 2–10 % "hold" band of the loss-based controller: the target must not
  /// collapse (it holds where it was; the delay-based part keeps it under capacity).
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
        XCTAssertGreaterThan(Double(sample.target), 0.4 * capacity, "t=\(sample.time) µs")
        XCTAssertLessThan(Double(sample.target), 1.05 * capacity, "t=\(sample.time) µs")
      }
      let measured = trace.samples(from: 15, to: 30).map(\.lossFraction)
      let meanLoss = measured.reduce(0, +) / Double(max(measured.count, 1))
      XCTAssertEqual(meanLoss, 0.05, accuracy: 0.02)
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
