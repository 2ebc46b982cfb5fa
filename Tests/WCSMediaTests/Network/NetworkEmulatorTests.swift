import XCTest

@testable import WCSEventLoop
@testable import WCSMedia

/// The Sans-I/O emulator at fixed seeds: each impairment's figures over many datagrams.
final class NetworkEmulatorTests: XCTestCase {
  /// Feeds `count` datagrams of `size` octets, one every `spacing`, and returns the verdicts
  /// with the time each entered.
  private func run(
    _ conditions: NetworkConditions, count: Int = 20_000, size: Int = 1200,
    spacing: Duration = .milliseconds(5), seed: UInt64 = 42
  ) -> (verdicts: [(now: Duration, verdict: NetworkEmulatorVerdict)], emulator: NetworkEmulator) {
    var emulator = NetworkEmulator(conditions: conditions, seed: seed)
    var verdicts: [(Duration, NetworkEmulatorVerdict)] = []
    for index in 0..<count {
      let now = spacing * index
      verdicts.append((now, emulator.admit(size: size, now: now)))
    }
    return (verdicts, emulator)
  }

  private func deliveries(_ verdicts: [(now: Duration, verdict: NetworkEmulatorVerdict)])
    -> [(now: Duration, time: Duration)]
  {
    verdicts.compactMap { entry in
      guard case .deliver(let time, _, _) = entry.verdict else { return nil }
      return (entry.now, time)
    }
  }

  private func milliseconds(_ duration: Duration) -> Double {
    Double(duration.attoseconds) / 1e15
  }

  func testRandomLossDropsItsRateOfDatagramsAndNothingElse() {
    let (verdicts, emulator) = run(NetworkConditions(loss: .random(rate: 0.05)))
    let lost = verdicts.filter { $0.verdict == .dropped(.loss) }.count
    // Binomial σ over 20 000 at 5 % is 31 datagrams (0.15 points).
    XCTAssertEqual(Double(lost) / 20_000, 0.05, accuracy: 0.005)
    XCTAssertEqual(emulator.statistics.lost, lost)
    XCTAssertEqual(emulator.statistics.datagrams, 20_000)
    XCTAssertEqual(emulator.statistics.delivered, 20_000 - lost)
    XCTAssertEqual(emulator.statistics.delayed, 0)
    // The rest go out at once, unchanged.
    for (now, time) in deliveries(verdicts) { XCTAssertEqual(time, now) }
  }

  func testTheSameSeedRepeatsTheVerdictsAndAnotherSeedDoesNot() {
    let conditions = NetworkConditions(
      loss: .random(rate: 0.1), delay: .milliseconds(30), jitter: .milliseconds(10))
    let first = run(conditions, count: 2000, seed: 7).verdicts.map(\.verdict)
    let again = run(conditions, count: 2000, seed: 7).verdicts.map(\.verdict)
    let other = run(conditions, count: 2000, seed: 8).verdicts.map(\.verdict)
    XCTAssertEqual(first, again)
    XCTAssertNotEqual(first, other)
  }

  func testGilbertElliottLossHasItsOverallRateAndMeanBurstLength() throws {
    let model = try XCTUnwrap(GilbertElliottLoss(rate: 0.2, meanBurstLength: 5))
    XCTAssertEqual(model.badToGood, 0.2, accuracy: 1e-12)
    XCTAssertEqual(model.goodToBad, 0.05, accuracy: 1e-12)
    XCTAssertEqual(model.lossRate, 0.2, accuracy: 1e-12)
    let (verdicts, _) = run(NetworkConditions(loss: .gilbertElliott(model)), count: 50_000)
    var bursts: [Int] = []
    var run = 0
    for entry in verdicts {
      if entry.verdict == .dropped(.loss) {
        run += 1
      } else if run > 0 {
        bursts.append(run)
        run = 0
      }
    }
    let lost = bursts.reduce(0, +) + run
    XCTAssertEqual(Double(lost) / 50_000, 0.2, accuracy: 0.015)
    let meanBurst = Double(bursts.reduce(0, +)) / Double(bursts.count)
    XCTAssertEqual(meanBurst, 5, accuracy: 0.4)
    // Random loss at the same rate has bursts of 1 / (1 − 0.2) = 1.25 on average.
    XCTAssertGreaterThan(bursts.filter { $0 >= 5 }.count, bursts.count / 4)
  }

  func testBurstsTooShortForTheLossRateHaveNoChain() {
    // p = rate · r / (1 − rate) = 0.8 · 1 / 0.2 = 4 > 1.
    XCTAssertNil(GilbertElliottLoss(rate: 0.8, meanBurstLength: 1))
    XCTAssertNotNil(GilbertElliottLoss(rate: 0.8, meanBurstLength: 4))
    XCTAssertNil(GilbertElliottLoss(rate: 0.2, meanBurstLength: 0.5))
  }

  func testDelayAndJitterHaveTheirMeanAndStandardDeviation() {
    // 100 ms apart, so ±3σ (30 ms) never meets the order rule.
    let (verdicts, emulator) = run(
      NetworkConditions(delay: .milliseconds(40), jitter: .milliseconds(10)),
      spacing: .milliseconds(100))
    let delays = deliveries(verdicts).map { milliseconds($0.time - $0.now) }
    XCTAssertEqual(delays.count, 20_000)
    let mean = delays.reduce(0, +) / Double(delays.count)
    let variance = delays.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(delays.count)
    XCTAssertEqual(mean, 40, accuracy: 0.3)
    // A normal cut at ±3σ keeps 98.7 % of σ.
    XCTAssertEqual(variance.squareRoot(), 10 * 0.987, accuracy: 0.3)
    XCTAssertGreaterThanOrEqual(delays.min() ?? 0, 10 - 1e-9)
    XCTAssertLessThanOrEqual(delays.max() ?? 0, 70 + 1e-9)
    XCTAssertEqual(emulator.statistics.delayed, 20_000)
    XCTAssertEqual(emulator.statistics.reordered, 0)
  }

  func testJitterKeepsTheOrderUnlessReorderingIsAsked() {
    let jittery = NetworkConditions(delay: .milliseconds(40), jitter: .milliseconds(15))
    let (inOrder, kept) = run(jittery, spacing: .milliseconds(1))
    let times = deliveries(inOrder).map(\.time)
    XCTAssertEqual(times, times.sorted())
    XCTAssertEqual(kept.statistics.reordered, 0)

    var reordering = jittery
    reordering.reorderRate = 0.1
    let (verdicts, reordered) = run(reordering, spacing: .milliseconds(1))
    let shuffled = deliveries(verdicts)
    // Delivered before the datagram that entered just ahead of it.
    let overtaking = shuffled.indices.dropFirst().filter {
      shuffled[$0].time < shuffled[$0 - 1].time
    }
    XCTAssertEqual(Double(reordered.statistics.reordered) / 20_000, 0.1, accuracy: 0.01)
    XCTAssertGreaterThan(overtaking.count, 0)
    // A reordered datagram skips the delay: it leaves as it entered.
    let early = shuffled.filter { $0.time == $0.now }.count
    XCTAssertEqual(early, reordered.statistics.reordered, accuracy: 20)
  }

  func testDuplicationDeliversItsShareTwice() {
    let (verdicts, emulator) = run(NetworkConditions(duplicateRate: 0.05))
    let twice = verdicts.filter {
      if case .deliver(_, 2, _) = $0.verdict { return true }
      return false
    }.count
    XCTAssertEqual(Double(twice) / 20_000, 0.05, accuracy: 0.005)
    XCTAssertEqual(emulator.statistics.duplicated, twice)
    XCTAssertEqual(emulator.statistics.delivered, 20_000 + twice)
  }

  func testRateCapPassesItsRateAndTailDropsPastTheQueue() {
    // 2 Mbit/s offered (1200 octets every 4.8 ms) into a 1 Mbit/s link with a 100 ms queue.
    let conditions = NetworkConditions(
      rateBitsPerSecond: 1_000_000, queueLimit: .duration(.milliseconds(100)))
    let (verdicts, emulator) = run(
      conditions, count: 2500, spacing: .microseconds(4800))
    let delivered = deliveries(verdicts)
    let seconds = milliseconds(delivered.last?.time ?? .zero) / 1000
    let throughput = Double(delivered.count * 1200 * 8) / seconds
    XCTAssertEqual(throughput, 1_000_000, accuracy: 20_000)
    XCTAssertEqual(emulator.statistics.queueDrops, 2500 - delivered.count)
    XCTAssertEqual(Double(emulator.statistics.queueDrops) / 2500, 0.5, accuracy: 0.03)
    // No datagram waits longer than the queue plus its own 9.6 ms on the wire.
    let waits = delivered.map { milliseconds($0.time - $0.now) }
    XCTAssertLessThanOrEqual(waits.max() ?? 0, 100 + 9.6 + 1e-6)
    XCTAssertGreaterThan(waits.max() ?? 0, 90)
  }

  func testByteQueueLimitHoldsThatManyOctets() {
    // 10 datagrams of 1000 octets at once into 80 kbit/s (100 ms each) with a 3000-octet queue:
    // the first starts at once (its own bytes count), two more wait, the rest are dropped.
    var emulator = NetworkEmulator(
      conditions: NetworkConditions(rateBitsPerSecond: 80_000, queueLimit: .bytes(3000)),
      seed: 1)
    let verdicts = (0..<10).map { _ in emulator.admit(size: 1000, now: .zero) }
    XCTAssertEqual(
      verdicts.prefix(3),
      [
        .deliver(at: .milliseconds(100), copies: 1, reordered: false),
        .deliver(at: .milliseconds(200), copies: 1, reordered: false),
        .deliver(at: .milliseconds(300), copies: 1, reordered: false),
      ])
    XCTAssertEqual(verdicts.dropFirst(3).filter { $0 == .dropped(.queueFull) }.count, 7)
    // Once the link drained, it takes datagrams again.
    XCTAssertEqual(
      emulator.admit(size: 1000, now: .milliseconds(300)),
      .deliver(at: .milliseconds(400), copies: 1, reordered: false))
  }

  func testInFlightDatagramsAreBounded() {
    var emulator = NetworkEmulator(
      conditions: NetworkConditions(delay: .seconds(10)), seed: 3)
    let count = NetworkEmulator.maximumInFlight + 100
    for _ in 0..<count { _ = emulator.admit(size: 100, now: .zero) }
    XCTAssertEqual(emulator.statistics.queueDrops, 100)
    // Due ones leave the count: after the delay there is room again.
    XCTAssertNotEqual(emulator.admit(size: 100, now: .seconds(10)), .dropped(.queueFull))
  }

  func testIdealConditionsMakeNoEmulator() {
    let emulation = NetworkEmulation(
      send: NetworkConditions(), receive: NetworkConditions(delay: .milliseconds(5)))
    XCTAssertTrue(emulation.send.isIdeal)
    XCTAssertFalse(emulation.isIdeal)
    XCTAssertNil(emulation.makeEmulator(.send))
    XCTAssertNotNil(emulation.makeEmulator(.receive))
  }

  func testOutOfRangeConditionsAreClamped() {
    var emulator = NetworkEmulator(
      conditions: NetworkConditions(
        loss: .random(rate: 7), delay: .milliseconds(-5), duplicateRate: -1),
      seed: 1)
    XCTAssertEqual(emulator.conditions.loss, .random(rate: 1))
    XCTAssertEqual(emulator.conditions.delay, .zero)
    XCTAssertEqual(emulator.admit(size: 10, now: .zero), .dropped(.loss))
  }
}
