import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia

final class EventLoopTests: XCTestCase {
  private var loop = EventLoop(label: "EventLoopTests")

  override func tearDown() {
    loop.shutdown()
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
    let fired = LoopShared<[String]>([])
    let early = LoopShared<[String]>([])
    let done = expectation(description: "last timer")
    loop.submit {
      let start = loop.now()
      func add(_ name: String, _ offset: Duration) -> EventLoopTimer {
        let deadline = start + offset
        return loop.schedule(at: deadline) { [loop] in
          if loop.now() < deadline { early.mutate { $0.append(name) } }
          fired.mutate { $0.append(name) }
          if name == "d" { done.fulfill() }
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
    wait(for: [done], timeout: 5)
    XCTAssertEqual(fired.value, ["a", "b1", "b2", "c", "d"])
    XCTAssertEqual(early.value, [])
    XCTAssertEqual(loop.submit { loop.pendingTimerCount }, 0)
  }

  func testTimerScheduledFromATimerAndPastDeadlinesRun() {
    let fired = LoopShared<[Int]>([])
    let done = expectation(description: "chain")
    loop.execute { [loop] in
      loop.schedule(at: loop.now() - .seconds(1)) {
        fired.mutate { $0.append(1) }
        loop.schedule(after: .milliseconds(1)) {
          fired.mutate { $0.append(2) }
          done.fulfill()
        }
      }
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(fired.value, [1, 2])
  }

  func testManyCancelledTimersAreCompactedAndTheRestStillFire() {
    let fired = LoopShared<Int>(0)
    let done = expectation(description: "survivors")
    done.expectedFulfillmentCount = 10
    loop.submit {
      for index in 0..<1000 {
        let timer = loop.schedule(after: .milliseconds(1 + index % 7)) {
          fired.mutate { $0 += 1 }
          done.fulfill()
        }
        if index % 100 != 0 { loop.cancel(timer) }
      }
      XCTAssertEqual(loop.pendingTimerCount, 10)
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(fired.value, 10)
  }

  func testReArmedLeewayTimersNeverFireEarlyAndLeaveNoStaleEntriesBehind() {
    // The play path's pattern: a turn re-arming itself from its handler with a leeway, and a
    // poll cancelled and re-armed with a leeway several times per turn (`pollNoLaterThan` on
    // every packet). Fired and cancelled timers leave entries in both heaps.
    let fires = LoopShared(0)
    let early = LoopShared(0)
    let done = expectation(description: "200 turns")
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
          if remaining == 0 { done.fulfill() } else { turn(remaining - 1) }
        }
      }
      turn(199)
    }
    wait(for: [done], timeout: 30)
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
    let fired = LoopShared<[(String, Duration)]>([])
    // Both fulfil: waiting for "lazy" alone let the test read the list while "strict" was
    // still being appended on the loop.
    let done = expectation(description: "both fired")
    done.expectedFulfillmentCount = 2
    loop.submit {
      let start = loop.now()
      loop.schedule(at: start + .milliseconds(10), leeway: .milliseconds(400)) { [loop] in
        fired.mutate { $0.append(("lazy", loop.now() - start)) }
        done.fulfill()
      }
      loop.schedule(at: start + .milliseconds(30)) { [loop] in
        fired.mutate { $0.append(("strict", loop.now() - start)) }
        done.fulfill()
      }
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(fired.value.map(\.0), ["lazy", "strict"], "equal turn: deadline order")
    let lazy = fired.value.first?.1 ?? .zero
    XCTAssertGreaterThanOrEqual(lazy, .milliseconds(30))
    XCTAssertLessThan(lazy, .milliseconds(200))
  }

  func testLeewayTimerAloneFiresWithinItsLeeway() {
    let firedAt = LoopShared<Duration?>(nil)
    let done = expectation(description: "fired")
    loop.submit {
      let start = loop.now()
      loop.schedule(after: .milliseconds(20), leeway: .milliseconds(30)) { [loop] in
        firedAt.mutate { $0 = loop.now() - start }
        done.fulfill()
      }
    }
    wait(for: [done], timeout: 5)
    let elapsed = firedAt.value ?? .zero
    // Nothing else wakes the loop, so it sleeps to deadline + leeway (50 ms, +1 ms rounding).
    XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(50))
    XCTAssertLessThan(elapsed, .milliseconds(500))
  }

  func testStrictTimerIsNotDelayedByALeewayTimerScheduledBeforeIt() {
    let firedAt = LoopShared<Duration?>(nil)
    let done = expectation(description: "strict fired")
    loop.submit {
      let start = loop.now()
      loop.schedule(at: start + .milliseconds(5), leeway: .seconds(10)) {}
      loop.schedule(at: start + .milliseconds(20)) { [loop] in
        firedAt.mutate { $0 = loop.now() - start }
        done.fulfill()
      }
    }
    wait(for: [done], timeout: 5)
    let elapsed = firedAt.value ?? .zero
    XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(20))
    XCTAssertLessThan(elapsed, .milliseconds(500))
  }
}
