import Dispatch
import Synchronization
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// `ContinuousClockReading` reads the clock `ContinuousClock.now` reads, giving the same
/// instants: each direct read lies between the runtime's reads around it (a different clock,
/// unit or epoch would not, and `CLOCK_BOOTTIME` vs `CLOCK_MONOTONIC` would drift apart), and
/// the loop's timers, deadlines taken from `ContinuousClock.now`, never fire before them.
final class ContinuousClockReadingTests: XCTestCase {
  func testDirectReadsLieBetweenTheRuntimesReads() {
    let loop = EventLoop(label: "clock-reading")
    for _ in 0..<20_000 {
      let before = ContinuousClock.now
      let direct = ContinuousClockReading.now()
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
        let attoseconds =
          (index + thread) % 2 == 0
          ? ContinuousClockReading.attosecondsSinceEpoch()
          : ContinuousClockReading.attosecondsSinceEpoch(of: ContinuousClock.now)
        let nanoseconds = Int64(attoseconds / 1_000_000_000)
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

  func testAttosecondsCountFromTheSystemEpoch() {
    let epoch = ContinuousClock().systemEpoch
    XCTAssertEqual(
      ContinuousClockReading.attosecondsSinceEpoch(of: epoch.advanced(by: .seconds(3))),
      3_000_000_000_000_000_000)
    let before = ContinuousClockReading.attosecondsSinceEpoch(of: ContinuousClock.now)
    let direct = ContinuousClockReading.attosecondsSinceEpoch()
    let after = ContinuousClockReading.attosecondsSinceEpoch(of: ContinuousClock.now)
    XCTAssertLessThanOrEqual(before, direct)
    XCTAssertLessThanOrEqual(direct, after)
    // Whole nanoseconds, as the kernel gives them.
    XCTAssertEqual(direct % 1_000_000_000, 0)
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
