import TestSupport
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia

/// `EventLoopTimers` updates and removes the entries of moved, cancelled and fired timers in
/// place while its heaps are small, and deletes lazily when they are large: against a model
/// that keeps only the live timers (the earliest by deadline, then scheduling order, fires),
/// the same actions fire in the same order, handles get the same ids, moving a timer that fired
/// or was cancelled does nothing, and the sleep bound (earliest deadline + leeway) is the same,
/// through seeded schedules, moves, cancels, firings and re-arms of the firing action (in its
/// slot, `rearmFiring`) with few timers (a table), many (heaps too) and counts crossing over.
final class EventLoopTimersEquivalenceTests: XCTestCase {
  private func drive(seed: UInt64, maximumTimers: Int, steps: Int) {
    var generator = SplitMix64(seed: seed)
    var timers = EventLoopTimers()
    var model = EventLoopTimerModel()
    let fired = FiredTimerTags()
    // Every handle ever returned (stale ones too), with the model's id of the same timer.
    var handles: [(handle: EventLoopTimer, id: UInt64)] = []
    var now = ns(0)
    var nextTag = 0
    var firings = 0
    var moves = 0
    var rearmed = 0
    var mostLive = 0
    func randomDeadline() -> MediaInstant {
      // Equal deadlines now and then: the scheduling order decides.
      now + MediaDuration.milliseconds(Int.random(in: -2...(10 * maximumTimers), using: &generator))
    }
    func randomLeeway() -> MediaDuration {
      Bool.random(using: &generator)
        ? .zero : MediaDuration.milliseconds(Int.random(in: 1...30, using: &generator))
    }
    for step in 0..<steps {
      let roll = Double.random(in: 0..<1, using: &generator)
      if roll < 0.3, model.live.count < maximumTimers {
        let deadline = randomDeadline()
        let leeway = randomLeeway()
        let tag = nextTag
        nextTag += 1
        let handle = timers.schedule(at: deadline, leeway: leeway) { fired.tags.append(tag) }
        let id = model.schedule(deadline: deadline, leeway: leeway, tag: tag)
        XCTAssertEqual(handle.id, id, "step \(step)")
        handles.append((handle, id))
      } else if roll < 0.6, !handles.isEmpty {
        // Mostly a recent handle (likely live), else any (likely stale).
        let index = Int.random(
          in: (Bool.random(using: &generator) ? max(0, handles.count - maximumTimers) : 0)..<handles
            .count, using: &generator)
        let deadline = randomDeadline()
        let leeway = randomLeeway()
        let moved = timers.reschedule(handles[index].handle, at: deadline, leeway: leeway)
        let id = model.reschedule(handles[index].id, deadline: deadline, leeway: leeway)
        XCTAssertEqual(moved?.id, id, "step \(step)")
        if let moved, let id {
          moves += 1
          handles.append((moved, id))
        }
      } else if roll < 0.7, !handles.isEmpty {
        let index = Int.random(in: 0..<handles.count, using: &generator)
        timers.cancel(handles[index].handle)
        model.cancel(handles[index].id)
      } else if roll < 0.9 {
        now += MediaDuration.milliseconds(Int.random(in: 0...30, using: &generator))
        let limit = timers.nextID
        XCTAssertEqual(limit, model.nextID)
        while true {
          let action = timers.takeDue(now: now, limit: limit)
          let expected = model.takeDue(now: now, limit: limit)
          XCTAssertEqual(action == nil, expected == nil, "step \(step)")
          XCTAssertEqual(timers.firing == nil, action == nil, "step \(step)")
          guard let action, let expected else { break }
          action()
          firings += 1
          XCTAssertEqual(fired.tags.last, expected, "step \(step)")
          // The action re-armed, as `EventLoop.scheduleFiringActionAgain` does it: in its
          // slot, and (a second time) handed over anew.
          let rearms = Double.random(in: 0..<1, using: &generator)
          for attempt in 0..<(rearms < 0.3 ? 1 : rearms < 0.4 ? 2 : 0) {
            let deadline = randomDeadline()
            let leeway = randomLeeway()
            let inSlot = timers.rearmFiring(at: deadline, leeway: leeway)
            XCTAssertEqual(inSlot == nil, attempt > 0, "step \(step)")
            guard
              let handle = inSlot
                ?? timers.firing.map({ timers.schedule(at: deadline, leeway: leeway, $0) })
            else { return XCTFail("step \(step): no action firing") }
            let id = model.schedule(deadline: deadline, leeway: leeway, tag: expected)
            XCTAssertEqual(handle.id, id, "step \(step)")
            handles.append((handle, id))
            rearmed += 1
          }
          // Scheduled while firing, due already: runs on a later turn (`limit`).
          if Double.random(in: 0..<1, using: &generator) < 0.2 {
            let tag = nextTag
            nextTag += 1
            let handle = timers.schedule(at: now, leeway: .zero) { fired.tags.append(tag) }
            handles.append((handle, model.schedule(deadline: now, leeway: .zero, tag: tag)))
          }
        }
      } else {
        XCTAssertEqual(timers.earliestLatestDeadline(), model.earliestLatest, "step \(step)")
      }
      XCTAssertEqual(timers.pendingCount, model.live.count, "step \(step)")
      mostLive = max(mostLive, model.live.count)
      if handles.count > 4 * maximumTimers { handles.removeFirst(handles.count / 2) }
    }
    XCTAssertNil(timers.rearmFiring(at: now, leeway: .zero), "re-armed with no action firing")
    print(
      "timers \(maximumTimers): \(firings) fired, \(rearmed) re-armed, \(moves) moved, "
        + "\(mostLive) live at most, heaps \(timers.usesHeaps)")
    XCTAssertEqual(timers.usesHeaps, mostLive > EventLoopTimers.tableLimit)
    XCTAssertGreaterThan(rearmed, steps / 200)
    XCTAssertGreaterThan(firings, steps / 100)
    XCTAssertGreaterThan(moves, steps / 20)
    XCTAssertGreaterThanOrEqual(mostLive, maximumTimers * 3 / 4)
  }

  func testFewTimersUpdatedInPlaceFireAsTheModel() {
    drive(seed: 1, maximumTimers: 6, steps: 20_000)
  }

  func testManyTimersDeletedLazilyFireAsTheModel() {
    drive(seed: 2, maximumTimers: 120, steps: 20_000)
  }

  func testTimerCountsCrossingTheInPlaceLimitFireAsTheModel() {
    drive(seed: 3, maximumTimers: EventLoopTimers.inPlaceLimit / 2 + 4, steps: 20_000)
  }

  func testTimerCountsCrossingTheTableLimitFireAsTheModel() {
    drive(seed: 4, maximumTimers: EventLoopTimers.tableLimit + 6, steps: 20_000)
  }

  func testInPlaceUpdatesLeaveNoStaleEntries() {
    var timers = EventLoopTimers()
    var poll = timers.schedule(at: ns(100), leeway: .nanoseconds(20)) {}
    _ = timers.schedule(at: ns(50), leeway: .zero) {}
    for step in 0..<100 {
      guard
        let moved = timers.reschedule(
          poll, at: MediaInstant(nanoseconds: Int64(100 + step % 50)), leeway: .nanoseconds(20))
      else {
        return XCTFail("a pending timer was not moved")
      }
      poll = moved
    }
    XCTAssertEqual(timers.entryCount, 4)
    XCTAssertNotNil(timers.takeDue(now: ns(50), limit: timers.nextID))
    XCTAssertEqual(timers.entryCount, 2)
    timers.cancel(poll)
    XCTAssertEqual(timers.entryCount, 0)
    XCTAssertNil(timers.earliestLatestDeadline())
  }
}
