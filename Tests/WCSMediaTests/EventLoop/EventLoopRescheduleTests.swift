import Foundation
import TestSupport
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia

/// `EventLoop.reschedule`, `scheduleFiringActionAgain` (the play poll and the audio playout
/// turn re-arm through them without a new closure) and the `poll` timeout's rounding.
final class EventLoopRescheduleTests: XCTestCase {
  /// On a manual clock: the tests move time instead of waiting for it.
  private var loop = EventLoop(label: "EventLoopResched", manualTimeStartingAt: .now())

  override func tearDown() {
    loop.shutdown()
    super.tearDown()
  }

  func testRescheduledTimerFiresOnceAtItsNewDeadlineInSchedulingOrder() {
    let fired = LoopShared<[String]>([])
    let early = LoopShared<[String]>([])
    let deadlines = LoopShared<[String: ContinuousClock.Instant]>([:])
    loop.submit {
      let start = loop.now()
      func add(_ name: String, _ offset: Duration) -> EventLoopTimer {
        deadlines.mutate { $0[name] = start + offset }
        return loop.schedule(at: start + offset) { [loop] in
          if let deadline = deadlines.value[name], loop.now() != deadline {
            early.mutate { $0.append(name) }
          }
          fired.mutate { $0.append(name) }
        }
      }
      let moved = add("moved", .milliseconds(5))
      _ = add("b", .milliseconds(20))
      // Same deadline as "b", moved after "b" was scheduled: fires after it, like a timer
      // cancelled and scheduled anew.
      let deadline = start + .milliseconds(20)
      deadlines.mutate { $0["moved"] = deadline }
      guard let handle = loop.reschedule(moved, at: deadline) else {
        return XCTFail("a pending timer was not moved")
      }
      XCTAssertNotEqual(handle, moved)
      // The old handle neither cancels nor moves it any more.
      loop.cancel(moved)
      XCTAssertNil(loop.reschedule(moved, at: start))
      XCTAssertEqual(loop.pendingTimerCount, 2)
      _ = add("last", .milliseconds(30))
      // A cancelled timer cannot be moved back to life.
      let cancelled = add("cancelled", .milliseconds(10))
      loop.cancel(cancelled)
      XCTAssertNil(loop.reschedule(cancelled, at: start + .milliseconds(25)))
    }
    loop.advanceTime(by: .milliseconds(5))
    XCTAssertEqual(fired.value, [], "moved away from 5 ms")
    loop.advanceTime(by: .milliseconds(25))
    XCTAssertEqual(fired.value, ["b", "moved", "last"])
    XCTAssertEqual(early.value, [])
    XCTAssertEqual(loop.submit { loop.pendingTimerCount }, 0)
  }

  func testRescheduleOfAFiredTimerReturnsNilAndMovedTimersCanBeCancelled() {
    let fired = LoopShared<[String]>([])
    let marker = LoopShared(false)
    let first = loop.submit {
      loop.schedule(after: .milliseconds(1)) { fired.mutate { $0.append("first") } }
    }
    _ = loop.submit {
      loop.schedule(after: .milliseconds(20)) { [loop] in
        XCTAssertNil(loop.reschedule(first, at: loop.now()), "a fired timer was moved")
        var timer = loop.schedule(after: .milliseconds(5)) { fired.mutate { $0.append("never") } }
        for step in 1...100 {
          guard let moved = loop.reschedule(timer, at: loop.now() + .milliseconds(step)) else {
            return XCTFail("move \(step) failed")
          }
          timer = moved
        }
        XCTAssertEqual(loop.pendingTimerCount, 1)
        // 100 moves leave stale entries; compaction keeps both heaps small.
        XCTAssertLessThanOrEqual(loop.timerHeapEntryCount, 2 * 80)
        loop.cancel(timer)
        XCTAssertEqual(loop.pendingTimerCount, 0)
        loop.schedule(after: .milliseconds(150)) { marker.mutate { $0 = true } }
      }
    }
    loop.advanceTime(by: .milliseconds(170))
    XCTAssertTrue(marker.value)
    XCTAssertEqual(fired.value, ["first"])
  }

  func testAnActionSchedulesItselfAgainAndNothingElseCan() {
    let runs = LoopShared(0)
    loop.submit {
      XCTAssertNil(loop.scheduleFiringActionAgain(at: loop.now()), "no action is firing")
      loop.schedule(after: .milliseconds(1)) { [loop] in
        runs.mutate { $0 += 1 }
        if runs.value == 10 { return }
        XCTAssertEqual(loop.pendingTimerCount, 0)
        XCTAssertNotNil(loop.scheduleFiringActionAgain(at: loop.now() + .milliseconds(1)))
        XCTAssertEqual(loop.pendingTimerCount, 1)
      }
    }
    loop.advanceTime(by: .milliseconds(9))
    XCTAssertEqual(runs.value, 9, "one run per millisecond")
    loop.advanceTime(by: .seconds(1))
    XCTAssertEqual(runs.value, 10)
    XCTAssertNil(loop.submit { loop.scheduleFiringActionAgain(at: loop.now()) })
    XCTAssertEqual(loop.submit { loop.pendingTimerCount }, 0)
  }

  func testPollTimeoutRoundsUpToWholeMillisecondsAndCapsAtADay() {
    let second = MediaDuration.seconds(1)
    let millisecond = MediaDuration.milliseconds(1)
    // Whole microseconds count, as before: less than one is no wait at all.
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: .nanoseconds(1)), 0)
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: millisecond), 1)
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: millisecond + .nanoseconds(1)), 1)  // sub-µs
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: millisecond + millisecond / 1000), 2)
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: millisecond * 20), 20)
    // Several seconds: whole seconds and the rest counted apart.
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: second * 9), 9_000)
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: second * 10 + .nanoseconds(1)), 10_000)
    XCTAssertEqual(
      EventLoop.pollMilliseconds(delay: second * 10 + millisecond / 1000), 10_001)
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: second * 86_400), 86_400_000)
    // Beyond a day the seconds are capped (the sub-second part still counts).
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: second * 3 * 86_400), 86_400_000)
    XCTAssertEqual(
      EventLoop.pollMilliseconds(delay: second * 3 * 86_400 + millisecond * 500),
      86_400_500)
    // The old computation through `Duration.components`, for random delays.
    var random = SplitMix64(seed: 0x7140_0117)
    for _ in 0..<2_000 {
      let delay = Duration(
        secondsComponent: Int64.random(in: 0...200_000, using: &random) % 100_000,
        attosecondsComponent: Int64.random(in: 1..<1_000_000_000_000_000_000, using: &random))
      let (seconds, attoseconds) = delay.components
      let microseconds = min(seconds, 86_400) * 1_000_000 + attoseconds / 1_000_000_000_000
      let expected = Int32(clamping: (microseconds + 999) / 1000)
      XCTAssertEqual(EventLoop.pollMilliseconds(delay: MediaDuration(delay)), expected)
    }
  }
}
