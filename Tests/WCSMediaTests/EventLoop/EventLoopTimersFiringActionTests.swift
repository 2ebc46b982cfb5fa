import TestSupport
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia

/// `EventLoopTimers` while an action runs: the action schedules, cancels and moves timers
/// (its own re-armed one too, then re-arms again), pushes the count past `tableLimit` so the
/// heaps start in the middle of a firing, and shuts the timers down. Against a model that
/// keeps only the live timers (earliest by deadline, then id, fires; one scheduled during the
/// turn waits for the next), the same actions fire in the same order, handles get the same
/// ids and the sleep bound and pending count agree after every operation.
final class EventLoopTimersFiringActionTests: XCTestCase {
  private func drive(seed: UInt64, maximumTimers: Int, steps: Int) {
    var generator = SplitMix64(seed: seed)
    var timers = EventLoopTimers()
    var model = EventLoopTimerModel()
    let fired = FiredTimerTags()
    var handles: [(handle: EventLoopTimer, id: UInt64)] = []
    var now = ns(0)
    var nextTag = 0
    var meddled = 0
    var rearmedInSlotThenCancelled = 0
    var heapsStartedWhileFiring = false
    let unit = MediaDuration.milliseconds(1)
    func randomDeadline() -> MediaInstant {
      // In the past, now, or ahead; equal ones often.
      now + unit * Int.random(in: -3...(4 * maximumTimers), using: &generator)
    }
    func randomLeeway() -> MediaDuration {
      Bool.random(using: &generator) ? .zero : unit * Int.random(in: 1...30, using: &generator)
    }
    func check(_ message: @autoclosure () -> String) {
      XCTAssertEqual(timers.pendingCount, model.live.count, message())
      XCTAssertEqual(timers.earliestLatestDeadline(), model.earliestLatest, message())
    }
    func scheduleNew(_ message: String) {
      let deadline = randomDeadline()
      let leeway = randomLeeway()
      let tag = nextTag
      nextTag += 1
      let handle = timers.schedule(at: deadline, leeway: leeway) { fired.tags.append(tag) }
      let id = model.schedule(deadline: deadline, leeway: leeway, tag: tag)
      XCTAssertEqual(handle.id, id, message)
      handles.append((handle, id))
    }
    func cancel(_ index: Int) {
      timers.cancel(handles[index].handle)
      model.live[handles[index].id] = nil
    }
    func move(_ index: Int, _ message: String) {
      let deadline = randomDeadline()
      let leeway = randomLeeway()
      let moved = timers.reschedule(handles[index].handle, at: deadline, leeway: leeway)
      let id = model.reschedule(handles[index].id, deadline: deadline, leeway: leeway)
      XCTAssertEqual(moved?.id, id, message)
      if let moved, let id { handles.append((moved, id)) }
    }
    func recentIndex() -> Int {
      Int.random(in: max(0, handles.count - 8)..<handles.count, using: &generator)
    }

    for step in 0..<steps {
      let roll = Double.random(in: 0..<1, using: &generator)
      if roll < 0.35, model.live.count < maximumTimers {
        scheduleNew("step \(step)")
      } else if roll < 0.5, !handles.isEmpty {
        move(recentIndex(), "step \(step)")
      } else if roll < 0.55, !handles.isEmpty {
        cancel(recentIndex())
      } else {
        now += unit * Int.random(in: 0...20, using: &generator)
        let limit = timers.nextID
        while true {
          let action = timers.takeDue(now: now, limit: limit)
          let expected = model.takeDue(now: now, limit: limit)
          XCTAssertEqual(action == nil, expected == nil, "step \(step)")
          guard let action, let expected else { break }
          action()
          XCTAssertEqual(fired.tags.last, expected, "step \(step)")
          let usedHeaps = timers.usesHeaps
          var inSlot = false
          // Whatever an action may do, in any order, a few times.
          for meddle in 0..<Int.random(in: 0...6, using: &generator) {
            let message = "step \(step), meddle \(meddle)"
            meddled += 1
            switch Int.random(in: 0..<10, using: &generator) {
            case 0, 1:
              // Re-armed as `EventLoop.scheduleFiringActionAgain` does: in its slot the
              // first time, handed over anew after that.
              let deadline = randomDeadline()
              let leeway = randomLeeway()
              let again = timers.rearmFiring(at: deadline, leeway: leeway)
              XCTAssertEqual(again != nil, !inSlot, message)
              guard
                let handle = again
                  ?? timers.firing.map({ timers.schedule(at: deadline, leeway: leeway, $0) })
              else { return XCTFail("\(message): no action firing") }
              inSlot = true
              handles.append(
                (handle, model.schedule(deadline: deadline, leeway: leeway, tag: expected)))
              if again != nil, Bool.random(using: &generator) {
                // The re-armed timer cancelled at once (its slot freed while firing).
                cancel(handles.count - 1)
                rearmedInSlotThenCancelled += 1
              }
            case 2, 3, 4:
              // A burst: past the table's limit, the heaps start while this action runs.
              for _ in 0..<Int.random(in: 1...12, using: &generator)
              where model.live.count < maximumTimers {
                scheduleNew(message)
              }
            case 5, 6:
              if !handles.isEmpty { cancel(recentIndex()) }
            default:
              if !handles.isEmpty { move(recentIndex(), message) }
            }
            check(message)
          }
          if !usedHeaps, timers.usesHeaps { heapsStartedWhileFiring = true }
        }
      }
      check("step \(step)")
      if handles.count > 8 * maximumTimers { handles.removeFirst(handles.count / 2) }
    }
    XCTAssertNil(timers.rearmFiring(at: now, leeway: .zero), "re-armed with no action firing")
    XCTAssertGreaterThan(meddled, steps / 4)
    XCTAssertGreaterThan(rearmedInSlotThenCancelled, steps / 200)
    if maximumTimers > EventLoopTimers.tableLimit {
      XCTAssertTrue(heapsStartedWhileFiring, "seed \(seed)")
    }
  }

  func testActionsMeddlingWithFewTimersFireAsTheModel() {
    drive(seed: 11, maximumTimers: 8, steps: 6_000)
  }

  func testActionsMeddlingAcrossTheTableLimitFireAsTheModel() {
    for seed: UInt64 in 12...16 {
      drive(seed: seed, maximumTimers: EventLoopTimers.tableLimit + 10, steps: 3_000)
    }
  }

  func testActionsMeddlingWithManyTimersFireAsTheModel() {
    drive(seed: 17, maximumTimers: 100, steps: 6_000)
  }

  /// A timer an action schedules (due already) and cancels while the heaps delete lazily
  /// leaves a stale entry at their top with an id above the turn's limit: it must not hold
  /// back the due timers scheduled before the turn (it held them to the next wake-up).
  func testStaleEntryOfATimerScheduledDuringTheTurnDoesNotHoldBackDueTimers() {
    var timers = EventLoopTimers()
    let fired = FiredTimerTags()
    for tag in 0..<40 {
      _ = timers.schedule(at: MediaInstant(nanoseconds: Int64(10 + tag)), leeway: .zero) {
        fired.tags.append(tag)
      }
    }
    XCTAssertTrue(timers.usesHeaps)
    let limit = timers.nextID
    timers.takeDue(now: ns(100), limit: limit)?()
    let early = timers.schedule(at: ns(0), leeway: .zero) { fired.tags.append(99) }
    timers.cancel(early)
    XCTAssertGreaterThan(timers.entryCount, 2 * EventLoopTimers.inPlaceLimit)
    while let action = timers.takeDue(now: ns(100), limit: limit) { action() }
    XCTAssertEqual(fired.tags, Array(0..<40))
    // Likewise a timer moved during the turn (its old entry stale, its new id above the limit).
    var more = EventLoopTimers()
    fired.tags = []
    for tag in 0..<40 {
      _ = more.schedule(at: MediaInstant(nanoseconds: Int64(10 + tag)), leeway: .zero) {
        fired.tags.append(tag)
      }
    }
    let moreLimit = more.nextID
    more.takeDue(now: ns(100), limit: moreLimit)?()
    let moved = more.schedule(at: ns(0), leeway: .zero) { fired.tags.append(99) }
    _ = more.reschedule(moved, at: ns(1_000), leeway: .zero)
    while let action = more.takeDue(now: ns(100), limit: moreLimit) { action() }
    XCTAssertEqual(fired.tags, Array(0..<40))
  }

  /// An action that shuts the timers down: nothing else fires in that turn or later, a re-arm
  /// or a new timer is not kept, and the loop sleeps without a bound.
  func testShutDownInsideAnActionDropsEverything() {
    var timers = EventLoopTimers()
    let fired = FiredTimerTags()
    var handles: [EventLoopTimer] = []
    for tag in 0..<5 {
      handles.append(
        timers.schedule(at: MediaInstant(nanoseconds: Int64(tag)), leeway: .zero) {
          fired.tags.append(tag)
        })
    }
    let limit = timers.nextID
    let first = timers.takeDue(now: ns(10), limit: limit)
    XCTAssertNotNil(first)
    first?()
    XCTAssertEqual(fired.tags, [0])
    timers.shutDown()
    XCTAssertNil(timers.rearmFiring(at: ns(0), leeway: .zero))
    if let action = timers.firing { _ = timers.schedule(at: ns(0), leeway: .zero, action) }
    _ = timers.schedule(at: ns(0), leeway: .zero) { fired.tags.append(99) }
    timers.cancel(handles[3])
    XCTAssertNil(timers.reschedule(handles[4], at: ns(0), leeway: .zero))
    XCTAssertNil(timers.takeDue(now: ns(100), limit: .max))
    XCTAssertNil(timers.firing)
    XCTAssertNil(timers.takeDue(now: ns(100), limit: .max))
    XCTAssertEqual(fired.tags, [0])
    XCTAssertEqual(timers.pendingCount, 0)
    XCTAssertNil(timers.earliestLatestDeadline())
    XCTAssertFalse(timers.hasEntries)
  }

  /// The firing timer's own handle is not pending: cancelling or moving it does nothing, and
  /// the re-arm that follows still gets the slot.
  func testCancellingTheFiringTimerThenRearmingIt() {
    var timers = EventLoopTimers()
    let fired = FiredTimerTags()
    let handle = timers.schedule(at: ns(5), leeway: .zero) { fired.tags.append(1) }
    let other = timers.schedule(at: ns(5), leeway: .zero) { fired.tags.append(2) }
    let action = timers.takeDue(now: ns(5), limit: timers.nextID)
    action?()
    XCTAssertEqual(fired.tags, [1], "equal deadlines: the lower id first")
    timers.cancel(handle)
    XCTAssertNil(timers.reschedule(handle, at: ns(1), leeway: .zero))
    XCTAssertEqual(timers.pendingCount, 1)
    let again = timers.rearmFiring(at: ns(3), leeway: .nanoseconds(4))
    XCTAssertEqual(again?.slot, handle.slot)
    XCTAssertEqual(timers.earliestLatestDeadline(), ns(5))
    timers.cancel(handle)
    XCTAssertEqual(timers.pendingCount, 2)
    // The re-armed timer (deadline 3) was scheduled during the turn: it waits for the next,
    // and, the earliest, holds back the other due one (as the loop always did).
    XCTAssertNil(timers.takeDue(now: ns(10), limit: other.id + 1))
    timers.takeDue(now: ns(10), limit: timers.nextID)?()
    XCTAssertEqual(fired.tags, [1, 1])
    timers.takeDue(now: ns(10), limit: timers.nextID)?()
    XCTAssertEqual(fired.tags, [1, 1, 2])
    XCTAssertNil(timers.takeDue(now: ns(10), limit: timers.nextID))
    XCTAssertEqual(timers.pendingCount, 0)
  }
}
