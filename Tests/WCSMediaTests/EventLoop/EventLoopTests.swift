import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia

final class EventLoopTests: XCTestCase {
  private var loop = EventLoop(label: "EventLoopTests")
  /// The timer tests' loop: its clock moves only with `advanceTime`, so they do not wait on
  /// real time and can check the instants timers fire at exactly.
  private var manual = EventLoop(label: "EventLoopManual", manualTimeStartingAt: .now())

  override func tearDown() {
    loop.shutdown()
    manual.shutdown()
    super.tearDown()
  }

  func testExecuteRunsOnTheLoopAndSubmitReturnsItsResult() {
    XCTAssertFalse(loop.inEventLoop)
    let ran = expectation(description: "execute ran")
    let onLoop = LoopShared<Bool?>(nil)
    let other = EventLoop(label: "other")
    loop.execute { [loop] in
      onLoop.mutate { $0 = loop.inEventLoop && !other.inEventLoop }
      ran.fulfill()
    }
    wait(for: [ran], timeout: 5)
    XCTAssertEqual(onLoop.value, true)
    XCTAssertEqual(loop.submit { loop.inEventLoop ? 42 : 0 }, 42)
    // Inline when already on the loop instead of deadlocking.
    XCTAssertEqual(loop.submit { loop.submit { 7 } }, 7)
    other.shutdown()
  }

  func testTimersFireInDeadlineOrderNotBeforeTheirDeadlineAndCancelledOnesNever() {
    let loop = manual
    let fired = LoopShared<[String]>([])
    let early = LoopShared<[String]>([])
    loop.submit {
      let start = loop.now()
      func add(_ name: String, _ offset: Duration) -> EventLoopTimer {
        let deadline = start + offset
        return loop.schedule(at: deadline) { [loop] in
          if loop.now() != deadline { early.mutate { $0.append(name) } }
          fired.mutate { $0.append(name) }
        }
      }
      _ = add("c", .milliseconds(30))
      _ = add("a", .milliseconds(5))
      let cancelled = add("x", .milliseconds(15))
      _ = add("b1", .milliseconds(20))
      _ = add("b2", .milliseconds(20))
      _ = add("d", .milliseconds(40))
      loop.cancel(cancelled)
      loop.cancel(cancelled)
    }
    loop.advanceTime(by: .milliseconds(39))
    XCTAssertEqual(fired.value, ["a", "b1", "b2", "c"], "d is due at 40 ms")
    loop.advanceTime(by: .milliseconds(1))
    XCTAssertEqual(fired.value, ["a", "b1", "b2", "c", "d"])
    XCTAssertEqual(early.value, [])
    XCTAssertEqual(loop.submit { loop.pendingTimerCount }, 0)
  }

  func testTimerScheduledFromATimerAndPastDeadlinesRun() {
    let loop = manual
    let fired = LoopShared<[Int]>([])
    loop.execute { [loop] in
      loop.schedule(at: loop.now() - .seconds(1)) {
        fired.mutate { $0.append(1) }
        loop.schedule(after: .milliseconds(1)) {
          fired.mutate { $0.append(2) }
        }
      }
    }
    loop.advanceTime(by: .zero)
    XCTAssertEqual(fired.value, [1], "the past deadline at once, the chained one 1 ms later")
    loop.advanceTime(by: .milliseconds(1))
    XCTAssertEqual(fired.value, [1, 2])
  }

  func testManyCancelledTimersAreCompactedAndTheRestStillFire() {
    let loop = manual
    let fired = LoopShared<Int>(0)
    loop.submit {
      for index in 0..<1000 {
        let timer = loop.schedule(after: .milliseconds(1 + index % 7)) {
          fired.mutate { $0 += 1 }
        }
        if index % 100 != 0 { loop.cancel(timer) }
      }
      XCTAssertEqual(loop.pendingTimerCount, 10)
    }
    loop.advanceTime(by: .milliseconds(7))
    XCTAssertEqual(fired.value, 10)
    XCTAssertEqual(loop.submit { loop.pendingTimerCount }, 0)
  }

  func testReArmedLeewayTimersNeverFireEarlyAndLeaveNoStaleEntriesBehind() {
    // The play path's pattern: a turn re-arming itself from its handler with a leeway, and a
    // poll cancelled and re-armed with a leeway several times per turn (`pollNoLaterThan` on
    // every packet). Fired and cancelled timers leave entries in both heaps.
    let loop = manual
    let fires = LoopShared(0)
    let early = LoopShared(0)
    loop.submit {
      var poll: EventLoopTimer?
      func turn(_ remaining: Int) {
        let deadline = loop.now() + .microseconds(200)
        loop.schedule(at: deadline, leeway: .milliseconds(5)) { [loop] in
          if loop.now() < deadline { early.mutate { $0 += 1 } }
          fires.mutate { $0 += 1 }
          // Each re-arm is earlier than the one it replaces, as in `pollNoLaterThan`: the
          // cancelled entries sit behind the live one in both heaps.
          let base = loop.now() + .milliseconds(50)
          for step in 0..<5 {
            if let poll { loop.cancel(poll) }
            poll = loop.schedule(at: base - .milliseconds(2 * step), leeway: .milliseconds(20)) {}
          }
          if remaining > 0 { turn(remaining - 1) }
        }
      }
      turn(199)
    }
    // Each turn fires at its deadline + leeway (5.2 ms): nothing wakes the loop earlier.
    loop.advanceTime(by: .microseconds(199 * 5_200))
    XCTAssertEqual(fires.value, 199)
    loop.advanceTime(by: .microseconds(5_200))
    XCTAssertEqual(fires.value, 200)
    XCTAssertEqual(early.value, 0, "a leeway timer fired before its deadline")
    let (pending, entries) = loop.submit { (loop.pendingTimerCount, loop.timerHeapEntryCount) }
    XCTAssertEqual(pending, 1, "only the last poll is live")
    print("event loop: \(entries) heap entries after 1 000 polls cancelled, 200 turns fired")
    // 1 000 polls were cancelled and 200 turns fired: compaction and dropping stale tops keep
    // each heap near its compaction threshold (64), not thousands.
    XCTAssertLessThanOrEqual(entries, 2 * 80, "\(entries) heap entries for \(pending) timer")
  }

  func testLeewayTimerSharesTheWakeUpOfAnEarlierTimerAndNeverFiresEarly() {
    // "lazy" is due at 10 ms with 400 ms of leeway; "strict" (no leeway) at 30 ms wakes the
    // loop, and "lazy" fires in the same turn, right after it, not at 410 ms.
    let loop = manual
    let fired = LoopShared<[(String, Duration)]>([])
    loop.submit {
      let start = loop.now()
      loop.schedule(at: start + .milliseconds(10), leeway: .milliseconds(400)) { [loop] in
        fired.mutate { $0.append(("lazy", loop.now() - start)) }
      }
      loop.schedule(at: start + .milliseconds(30)) { [loop] in
        fired.mutate { $0.append(("strict", loop.now() - start)) }
      }
    }
    loop.advanceTime(by: .seconds(1))
    XCTAssertEqual(fired.value.map(\.0), ["lazy", "strict"], "equal turn: deadline order")
    XCTAssertEqual(fired.value.map(\.1), [.milliseconds(30), .milliseconds(30)])
  }

  func testLeewayTimerAloneFiresWithinItsLeeway() {
    let loop = manual
    let firedAt = LoopShared<Duration?>(nil)
    loop.submit {
      let start = loop.now()
      loop.schedule(after: .milliseconds(20), leeway: .milliseconds(30)) { [loop] in
        firedAt.mutate { $0 = loop.now() - start }
      }
    }
    loop.advanceTime(by: .seconds(1))
    // Nothing else wakes the loop, so it sleeps to deadline + leeway.
    XCTAssertEqual(firedAt.value, .milliseconds(50))
  }

  func testStrictTimerIsNotDelayedByALeewayTimerScheduledBeforeIt() {
    let loop = manual
    let firedAt = LoopShared<Duration?>(nil)
    loop.submit {
      let start = loop.now()
      loop.schedule(at: start + .milliseconds(5), leeway: .seconds(10)) {}
      loop.schedule(at: start + .milliseconds(20)) { [loop] in
        firedAt.mutate { $0 = loop.now() - start }
      }
    }
    loop.advanceTime(by: .seconds(1))
    XCTAssertEqual(firedAt.value, .milliseconds(20))
  }
}
