import Dispatch
import Synchronization
import XCTest

@testable import WCSMedia

/// `MediaInstant.now()` reads the clock `ContinuousClock.now` reads, giving the same
/// instants: each direct read lies between the runtime's reads around it (a different clock,
/// unit or epoch would not, and `CLOCK_BOOTTIME` vs `CLOCK_MONOTONIC` would drift apart), and
/// the loop's timers, deadlines taken from `ContinuousClock.now`, never fire before them.
final class MediaInstantClockTests: XCTestCase {
  func testDirectReadsLieBetweenTheRuntimesReads() {
    let loop = EventLoop(label: "clock-reading")
    for _ in 0..<20_000 {
      let before = ContinuousClock.now
      let direct = MediaInstant.now().continuousInstant
      // The loop's reads: from its origin, as attoseconds.
      let loopNow = loop.now()
      let after = ContinuousClock.now
      XCTAssertLessThanOrEqual(before, direct)
      XCTAssertLessThanOrEqual(direct, loopNow)
      XCTAssertLessThanOrEqual(loopNow, after)
      guard before <= direct, direct <= loopNow, loopNow <= after else { return }
    }
  }

  /// Two threads reading both clocks in turn, each publishing the latest reading it made: a
  /// reading made after another thread's published one (seen through an acquiring load) is
  /// never earlier, whichever of the two clocks either came from (one clock, monotonic across
  /// CPUs; the kernel's nanoseconds floor-divided keep the order).
  func testReadsFromTwoThreadsNeverGoBackAcrossThem() {
    let latest = Atomic<Int64>(0)
    let backwards = Atomic<Int>(0)
    let reads = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: 2) { thread in
      for index in 0..<100_000 {
        let seen = latest.load(ordering: .acquiring)
        let nanoseconds =
          (index + thread) % 2 == 0
          ? MediaInstant.now().nanoseconds : MediaInstant(ContinuousClock.now).nanoseconds
        if nanoseconds < seen { backwards.add(1, ordering: .relaxed) }
        reads.add(1, ordering: .relaxed)
        var current = latest.load(ordering: .relaxed)
        while current < nanoseconds {
          let (exchanged, original) = latest.compareExchange(
            expected: current, desired: nanoseconds, ordering: .acquiringAndReleasing)
          if exchanged { break }
          current = original
        }
      }
    }
    XCTAssertEqual(reads.load(ordering: .relaxed), 200_000)
    XCTAssertEqual(backwards.load(ordering: .relaxed), 0, "a reading went back across threads")
  }

  func testNanosecondsCountFromTheSystemEpoch() {
    let epoch = ContinuousClock().systemEpoch
    XCTAssertEqual(MediaInstant(epoch.advanced(by: .seconds(3))).nanoseconds, 3_000_000_000)
    XCTAssertEqual(
      MediaInstant(nanoseconds: 3_000_000_007).continuousInstant,
      epoch.advanced(by: .nanoseconds(3_000_000_007)))
    let before = MediaInstant(ContinuousClock.now)
    let direct = MediaInstant.now()
    let after = MediaInstant(ContinuousClock.now)
    XCTAssertLessThanOrEqual(before, direct)
    XCTAssertLessThanOrEqual(direct, after)
    XCTAssertEqual(MediaInstant(direct.continuousInstant), direct)
  }

  func testLoopTimersNeverFireBeforeDeadlinesOfTheRuntimesClock() {
    let loop = EventLoop(label: "clock-reading")
    let early = LoopShared(0)
    let fires = LoopShared(0)
    let done = expectation(description: "30 timers")
    loop.submit {
      func arm(_ remaining: Int) {
        let deadline = ContinuousClock.now + .microseconds(300)
        loop.schedule(at: deadline) {
          if ContinuousClock.now < deadline || loop.now() < deadline { early.mutate { $0 += 1 } }
          fires.mutate { $0 += 1 }
          if remaining == 0 { done.fulfill() } else { arm(remaining - 1) }
        }
      }
      arm(29)
    }
    wait(for: [done], timeout: 10)
    XCTAssertEqual(fires.value, 30)
    XCTAssertEqual(early.value, 0, "a timer fired before its deadline")
  }
}

/// `MediaInstant` and `MediaDuration` arithmetic: exact in nanoseconds, saturating at the ends
/// instead of trapping, and the conversions to and from `Duration` and seconds.
final class MediaInstantArithmeticTests: XCTestCase {
  func testArithmeticIsExactInNanoseconds() {
    let start = MediaInstant(nanoseconds: 1_000_000_123)
    let later = start + .milliseconds(20) + .microseconds(3) + .nanoseconds(4)
    XCTAssertEqual(later.nanoseconds, 1_020_003_127)
    XCTAssertEqual(later - start, .nanoseconds(20_003_004))
    XCTAssertEqual(start - later, .nanoseconds(-20_003_004))
    XCTAssertEqual((later - .seconds(1)).nanoseconds, 20_003_127)
    XCTAssertEqual(MediaDuration.milliseconds(70) / .milliseconds(20), 3)
    XCTAssertEqual(MediaDuration.milliseconds(70) / 8, .nanoseconds(8_750_000))
    XCTAssertEqual(MediaDuration.milliseconds(20) * 3, .milliseconds(60))
    XCTAssertEqual(-MediaDuration.milliseconds(5), .milliseconds(-5))
    XCTAssertEqual(MediaDuration.seconds(0.25), .milliseconds(250))
    XCTAssertEqual(MediaDuration.milliseconds(1500).seconds, 1.5)
    XCTAssertEqual(MediaDuration.nanoseconds(-1_999).microseconds, -1)
  }

  func testOperationsSaturateInsteadOfTrapping() {
    XCTAssertEqual(MediaInstant.distantFuture + .seconds(1), .distantFuture)
    XCTAssertEqual(MediaInstant.distantPast - .seconds(1), .distantPast)
    XCTAssertEqual(MediaInstant.distantPast + .min, .distantPast)
    XCTAssertEqual(MediaInstant.distantFuture - MediaInstant.distantPast, .max)
    XCTAssertEqual(MediaInstant.distantPast - MediaInstant.distantFuture, .min)
    XCTAssertEqual(MediaDuration.max + .nanoseconds(1), .max)
    XCTAssertEqual(MediaDuration.min - .nanoseconds(1), .min)
    XCTAssertEqual(-MediaDuration.min, .max)
    XCTAssertEqual(MediaDuration.seconds(Int.max), .max)
    XCTAssertEqual(MediaDuration.seconds(-1e300), .min)
    XCTAssertEqual(MediaDuration.seconds(Double.nan), .zero)
    XCTAssertEqual(MediaDuration.max * 2, .max)
    XCTAssertEqual(MediaDuration.max * -2, .min)
  }

  func testConversionsWithDurationAndMilliseconds() {
    XCTAssertEqual(MediaDuration(.milliseconds(20)), .milliseconds(20))
    XCTAssertEqual(MediaDuration(Duration(attoseconds: 1_999_999_999)), .nanoseconds(1))
    XCTAssertEqual(MediaDuration(.seconds(Int64.max)), .max)
    XCTAssertEqual(MediaDuration.microseconds(-7).duration, .microseconds(-7))
    XCTAssertEqual(MediaInstant.milliseconds(1234).nanoseconds, 1_234_000_000)
    XCTAssertEqual(MediaInstant(nanoseconds: 1_234_000_000).millisecondsRoundingUp, 1234)
    XCTAssertEqual(MediaInstant(nanoseconds: 1_234_000_001).millisecondsRoundingUp, 1235)
    XCTAssertEqual(MediaInstant(seconds: 2.5).nanoseconds, 2_500_000_000)
  }
}

/// `MediaTime`: RTP timestamp ticks on a media clock, turned into durations and seconds.
final class MediaTimeTests: XCTestCase {
  func testTicksBecomeDurationsOnTheirClock() {
    XCTAssertEqual(MediaTime(ticks: 90_000, clockRate: 90_000).duration, .seconds(1))
    XCTAssertEqual(MediaTime(ticks: 960, clockRate: 48_000).duration, .milliseconds(20))
    XCTAssertEqual(MediaTime(ticks: 1, clockRate: 90_000).duration, .nanoseconds(11_111))
    XCTAssertEqual(MediaTime(ticks: -3_000, clockRate: 90_000).seconds, -1.0 / 30, accuracy: 1e-12)
    XCTAssertEqual(MediaTime(ticks: 5, clockRate: 0).clockRate, 1)
  }

  func testDurationsBecomeTicksTruncated() {
    XCTAssertEqual(MediaTime(.milliseconds(20), clockRate: 48_000).ticks, 960)
    XCTAssertEqual(MediaTime(.nanoseconds(11_112), clockRate: 90_000).ticks, 1)
    XCTAssertEqual(
      MediaTime(ticks: 180_000, clockRate: 90_000).converted(toClockRate: 48_000).ticks, 96_000)
  }
}
