import Dispatch
import Foundation
import Synchronization
import XCTest

@testable import WCSEngine
@testable import WCSMedia

/// `QueueTicker`: ticks on the grid `anchor + k × interval` (no drift), on its queue; nothing
/// after `stop` returns; `stop` from a tick; its thread ends.
final class QueueTickerTests: XCTestCase {
  func testNextDeadlineStaysOnTheGrid() {
    // Anchor 1000 ns, interval 100 ns.
    func next(_ served: Int64, _ now: Int64) -> Int64 {
      QueueTicker.nextDeadline(after: served, now: now, anchor: 1000, interval: 100)
    }
    XCTAssertEqual(next(1100, 1150), 1200)
    XCTAssertEqual(next(1100, 1199), 1200)
    XCTAssertEqual(next(1100, 1200), 1200)
    // Missed 1200 and 1300: one tick now, for the latest passed point.
    XCTAssertEqual(next(1100, 1350), 1300)
    XCTAssertEqual(next(1100, 1400), 1400)
    // Each wake-up 37 ns late: after 50 ticks still on the grid, not 50 × 37 ns behind.
    var deadline: Int64 = 1000
    for _ in 0..<50 { deadline = next(deadline, deadline + 37) }
    XCTAssertEqual(deadline, 1000 + 50 * 100)
  }

  func testTicksOnTheQueueAtTheIntervalWithoutDrift() {
    let queue = DispatchQueue(label: "test.QueueTicker")
    let interval = Duration.milliseconds(10)
    let ticker = QueueTicker(queue: queue, interval: interval)
    let times = Mutex<[ContinuousClock.Instant]>([])
    let done = DispatchSemaphore(value: 0)
    let anchor = MediaInstant.now() + .milliseconds(10)
    ticker.start(anchor: anchor) {
      dispatchPrecondition(condition: .onQueue(queue))
      let count = times.withLock { times -> Int in
        times.append(.now)
        return times.count
      }
      if count == 50 { done.signal() }
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    ticker.stop()
    let ticks = times.withLock { $0 }
    XCTAssertGreaterThanOrEqual(ticks.count, 50)
    // Each tick at or after a point of the grid, at most one tick per point.
    var lateness: [Duration] = []
    var lastPoint = -1
    for time in ticks {
      let offset = (MediaInstant(time) - anchor).duration
      XCTAssertGreaterThanOrEqual(offset, .zero, "a tick came before the anchor")
      let point = Int(offset / interval)
      XCTAssertGreaterThan(point, lastPoint, "two ticks for one grid point")
      lastPoint = point
      lateness.append(offset - interval * point)
    }
    // Sleeping an interval after each tick would put the last ticks milliseconds behind the
    // grid (50 × the wake-up latency); on the grid they are only their own wake-up late.
    let last = lateness.suffix(10).sorted()
    XCTAssertLessThan(last[last.count / 2], .milliseconds(2), "ticks drift: \(last)")
  }

  func testNothingRunsAfterStopReturns() {
    struct State {
      var running = false
      var count = 0
      var stopReturned = false
      var afterStop = 0
    }
    let queue = DispatchQueue(label: "test.QueueTicker.stop")
    for round in 0..<10 {
      let ticker = QueueTicker(queue: queue, interval: .milliseconds(1))
      let state = Mutex(State())
      ticker.start {
        state.withLock { $0.running = true }
        usleep(1500)  // a tick that takes longer than the interval
        state.withLock {
          $0.running = false
          $0.count += 1
          if $0.stopReturned { $0.afterStop += 1 }
        }
      }
      let deadline = ContinuousClock.now + .seconds(5)
      while state.withLock({ $0.count }) < 2 + round % 3, ContinuousClock.now < deadline {
        usleep(300)
      }
      ticker.stop()
      let count = state.withLock { state -> Int in
        XCTAssertFalse(state.running, "stop returned during a tick")
        state.stopReturned = true
        return state.count
      }
      usleep(10_000)
      state.withLock {
        XCTAssertEqual($0.afterStop, 0, "ticked after stop returned")
        XCTAssertEqual($0.count, count)
      }
    }
  }

  func testStopFromWithinATickDoesNotDeadlock() {
    let queue = DispatchQueue(label: "test.QueueTicker.self-stop")
    let ticker = QueueTicker(queue: queue, interval: .milliseconds(2))
    let count = Mutex(0)
    let stopped = DispatchSemaphore(value: 0)
    ticker.start { [ticker] in
      let ticks = count.withLock { count -> Int in
        count += 1
        return count
      }
      guard ticks == 3 else { return }
      ticker.stop()
      stopped.signal()
    }
    XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success)
    usleep(20_000)
    XCTAssertEqual(count.withLock { $0 }, 3)
  }

  func testThreadEndsAfterStopAndAfterRelease() {
    final class Sentinel: Sendable {}
    for stopsFirst in [true, false] {
      weak var weakSentinel: Sentinel?
      let ticked = DispatchSemaphore(value: 0)
      do {
        let sentinel = Sentinel()
        weakSentinel = sentinel
        let ticker = QueueTicker(
          queue: DispatchQueue(label: "test.QueueTicker.end"), interval: .milliseconds(5))
        ticker.start {
          _ = sentinel
          ticked.signal()
        }
        XCTAssertEqual(ticked.wait(timeout: .now() + 5), .success)
        if stopsFirst { ticker.stop() }
      }
      // The thread holds the tick (and the sentinel) until it ends, at its next deadline.
      let deadline = ContinuousClock.now + .seconds(5)
      while weakSentinel != nil, ContinuousClock.now < deadline { usleep(1000) }
      XCTAssertNil(weakSentinel, "the ticker's thread still runs (stopped first: \(stopsFirst))")
    }
  }
}
