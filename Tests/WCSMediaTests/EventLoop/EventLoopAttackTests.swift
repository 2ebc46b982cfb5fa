import Foundation
import TestSupport
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia

/// Adversarial use of the event loop's timer slots and poll-index dispatch: actions that cancel,
/// move or re-arm other timers (and themselves) while a turn fires, many equal deadlines, far
/// past and far future deadlines, shutdown from inside an action, and a socket handler that
/// closes another watched descriptor whose number a new one takes in the same turn.
final class EventLoopAttackTests: XCTestCase {
  private var loop = EventLoop(label: "EventLoopAttack")

  override func tearDown() {
    loop.shutdown()
    super.tearDown()
  }

  func testTimersMatchAModelWhenActionsCancelMoveAndReArmOthers() {
    for seed: UInt64 in [1, 2, 3, 0xDEAD_BEEF] {
      let torture = TimerTorture(loop: loop, seed: seed)
      let turns = LoopShared<(first: [Int], second: [Int], expectedSecond: [Int])?>(nil)
      let done = expectation(description: "two turns")
      let expectedFirst = loop.submit { [loop] in
        let expected = torture.setUp()
        // Work handed over during a turn runs at the start of the next one, before its
        // timers: after this turn fired its due timers, then after the next one fired its.
        loop.execute {
          let first = torture.fired
          let expectedSecond = torture.secondTurn()
          loop.execute {
            turns.mutate {
              $0 = (first, Array(torture.fired.dropFirst(first.count)), expectedSecond)
            }
            done.fulfill()
          }
        }
        return expected
      }
      wait(for: [done], timeout: 10)
      guard let (firstTurn, secondTurn, expectedSecond) = turns.value else { return XCTFail() }
      XCTAssertEqual(firstTurn, expectedFirst, "seed \(seed): first turn")
      XCTAssertEqual(secondTurn, expectedSecond, "seed \(seed): second turn")
      XCTAssertGreaterThan(firstTurn.count, 100, "seed \(seed)")
      XCTAssertGreaterThan(secondTurn.count, 5, "seed \(seed)")
      let (pending, modelPending) = loop.submit { (loop.pendingTimerCount, torture.model.count) }
      XCTAssertEqual(pending, modelPending, "seed \(seed): far-future timers still pending")
      XCTAssertGreaterThan(pending, 0, "seed \(seed)")
      loop.submit { torture.cancelAll() }
      XCTAssertEqual(loop.submit { loop.pendingTimerCount }, 0, "seed \(seed)")
    }
  }

  func testShutdownFromInsideAFiringActionDropsTheTimersDueInTheSameTurn() {
    let fired = LoopShared<[String]>([])
    let handles = loop.submit { () -> [EventLoopTimer] in
      let past = loop.now() - .milliseconds(5)
      let first = loop.schedule(at: past) { [loop] in
        fired.mutate { $0.append("first") }
        loop.shutdown()  // inline: on the loop already
        fired.mutate { $0.append("after shutdown, pending \(loop.pendingTimerCount)") }
        XCTAssertNotNil(loop.scheduleFiringActionAgain(at: loop.now()))
        XCTAssertEqual(loop.pendingTimerCount, 0)
      }
      let second = loop.schedule(at: past) { fired.mutate { $0.append("second") } }
      let third = loop.schedule(at: past + .milliseconds(1)) { fired.mutate { $0.append("third") } }
      return [first, second, third]
    }
    loop.submit {}
    loop.submit {}
    XCTAssertEqual(fired.value, ["first", "after shutdown, pending 0"])
    loop.submit {
      XCTAssertNil(loop.reschedule(handles[1], at: loop.now()))
      loop.cancel(handles[2])
      let late = loop.schedule(after: .zero) { fired.mutate { $0.append("late") } }
      XCTAssertNil(loop.reschedule(late, at: loop.now()))
      XCTAssertEqual(loop.pendingTimerCount, 0)
      XCTAssertEqual(loop.timerHeapEntryCount, 0)
    }
    loop.submit {}
    XCTAssertEqual(fired.value, ["first", "after shutdown, pending 0"])
  }

  func testFarPastAndFarFutureDeadlinesNeitherOverflowNorFireEarly() {
    let fired = LoopShared<[String]>([])
    loop.submit {
      let now = loop.now()
      // ±2^40 s is beyond the media clock's range: the deadlines saturate, neither overflows.
      loop.schedule(at: now + .seconds(Int64(1) << 40), leeway: .seconds(Int64(1) << 40)) {
        fired.mutate { $0.append("future") }
      }
      loop.schedule(at: now - .seconds(Int64(1) << 40)) { fired.mutate { $0.append("past") } }
      loop.schedule(at: now - .milliseconds(1)) { fired.mutate { $0.append("recent") } }
    }
    loop.submit {}
    XCTAssertEqual(fired.value, ["past", "recent"])
    XCTAssertEqual(loop.submit { loop.pendingTimerCount }, 1)
    // The longest delay: the seconds capped at a day, its last 0.854775… s still counted.
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: .max), 86_400_855)
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: .seconds(86_401)), 86_400_000)
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: .nanoseconds(9_223_372_036)), 9_224)
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: .nanoseconds(1_000)), 1)
    XCTAssertEqual(EventLoop.pollMilliseconds(delay: .nanoseconds(999)), 0)
  }

  /// Two readable pipes; the first one's handler closes the second and puts a new, empty pipe
  /// under the same descriptor number, watched with a new handler. The poll's revents were the
  /// old pipe's: neither its handler (its descriptor is gone) nor the new one (nothing to read)
  /// may run for them. The new one runs once it really is readable.
  func testHandlerThatReplacesAnotherDescriptorUnderTheSameNumberInTheSameTurn() throws {
    let first = try Pipe.make()
    let second = try Pipe.make()
    let calls = LoopShared<[String]>([])
    let reused = LoopShared<Pipe?>(nil)
    let (low, high) = first.read < second.read ? (first, second) : (second, first)
    loop.submit {
      loop.watch(low.read) { [loop] in
        calls.mutate { $0.append("low") }
        low.drain()
        loop.unwatch(low.read)
        loop.unwatch(high.read)
        Glibc.close(high.read)
        guard let fresh = try? Pipe.make() else { return XCTFail("pipe") }
        // The kernel reuses the lowest free number; make it the closed one for certain.
        if fresh.read != high.read {
          XCTAssertEqual(dup2(fresh.read, high.read), high.read)
          Glibc.close(fresh.read)
        }
        let replacement = Pipe(read: high.read, write: fresh.write)
        reused.mutate { $0 = replacement }
        loop.watch(replacement.read) {
          calls.mutate { $0.append(replacement.drain() ? "new, read" : "new, nothing to read") }
        }
      }
      loop.watch(high.read) {
        calls.mutate { $0.append("old high") }
        high.drain()
      }
      // Both readable before the loop polls them.
      low.signal()
      high.signal()
    }
    XCTAssertTrue(eventually { calls.value.count >= 1 })
    loop.submit {}
    loop.submit {}
    XCTAssertEqual(calls.value, ["low"])
    guard let replacement = reused.value else { return XCTFail("no replacement") }
    replacement.signal()
    XCTAssertTrue(eventually { calls.value.count >= 2 })
    XCTAssertEqual(calls.value, ["low", "new, read"])
    loop.submit { loop.unwatch(replacement.read) }
    Glibc.close(low.read)
    Glibc.close(low.write)
    Glibc.close(high.write)
    Glibc.close(replacement.read)
    Glibc.close(replacement.write)
  }
}

/// A non-blocking pipe for the dispatch test.
private struct Pipe: Sendable {
  struct Failed: Error {}
  var read: Int32
  var write: Int32

  static func make() throws -> Pipe {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw Failed() }
    for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
    return Pipe(read: ends[0], write: ends[1])
  }

  func signal() {
    var byte: UInt8 = 1
    _ = Glibc.write(write, &byte, 1)
  }

  /// Reads what is there; whether there was anything.
  @discardableResult
  func drain() -> Bool {
    var byte: UInt8 = 0
    var any = false
    while Glibc.read(read, &byte, 1) > 0 { any = true }
    return any
  }
}

/// Drives one loop with seeded timers and a model of the order they must fire in: (deadline,
/// scheduling order), a move counting as a new scheduling, only timers scheduled before a turn
/// began fire in it. Every due deadline lies 20...40 ms in the past; timers scheduled or moved
/// during the first turn go to 20 ms in the past or later, so they never precede one due then.
private final class TimerTorture: @unchecked Sendable {
  // @unchecked Sendable: created on the test thread, then touched only on the loop (through
  // `submit`), one call at a time.
  enum Operation {
    case cancel(Int)
    case move(Int, Duration)
    case cancelSelf
    case again(Duration)
    case spawn(Duration)
  }

  struct Pending {
    var deadline: Duration
    var order: UInt64
  }

  let loop: EventLoop
  var random: SplitMix64
  var base: ContinuousClock.Instant
  var handles: [Int: EventLoopTimer] = [:]
  var model: [Int: Pending] = [:]
  var modelNext: UInt64 = 0
  var plans: [Int: [Operation]] = [:]
  var firings: [Int: Int] = [:]
  var fired: [Int] = []
  var names = 0

  init(loop: EventLoop, seed: UInt64) {
    self.loop = loop
    random = SplitMix64(seed: seed)
    base = loop.now()
  }

  private func randomPast() -> Duration {
    .milliseconds(-40 + 2 * Int.random(in: 0...10, using: &random))
  }

  private func randomFuture() -> Duration {
    Bool.random(using: &random) ? .seconds(3600) : .seconds(Int64(1) << 40)
  }

  /// For timers scheduled or moved while the first turn fires: never before a deadline due in
  /// it (20 ms in the past at the latest), so the model's order holds.
  private func randomLater() -> Duration {
    switch Int.random(in: 0..<4, using: &random) {
    case 0: return .milliseconds(-20)
    case 1: return .milliseconds(-5)
    default: return randomFuture()
    }
  }

  private func add(_ deadline: Duration, plan: [Operation]) {
    let name = names
    names += 1
    plans[name] = plan
    handles[name] = loop.schedule(at: base + deadline, leeway: .milliseconds(name % 3)) {
      [unowned self] in
      self.fire(name)
    }
    model[name] = Pending(deadline: deadline, order: modelNext)
    modelNext += 1
  }

  private func move(_ name: Int, to deadline: Duration) {
    guard let handle = handles[name] else { return }
    let moved = loop.reschedule(handle, at: base + deadline)
    if model[name] != nil {
      model[name] = Pending(deadline: deadline, order: modelNext)
      modelNext += 1
      handles[name] = moved
    } else if moved != nil {
      fired.append(-1_000_000 - name)  // a dead timer came back to life: shows in the log
    }
  }

  private func cancel(_ name: Int) {
    guard let handle = handles[name] else { return }
    loop.cancel(handle)
    model[name] = nil
  }

  /// Schedules the timers, cancels and moves some; returns the model's first turn.
  func setUp() -> [Int] {
    base = loop.now()
    for _ in 0..<300 {
      var plan: [Operation] = []
      for _ in 0..<Int.random(in: 0...3, using: &random) {
        let other = Int.random(in: 0..<300, using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0: plan.append(.cancel(other))
        case 1: plan.append(.move(other, randomLater()))
        case 2: plan.append(.cancelSelf)
        case 3:
          // Once per plan: the model keeps one pending timer per name (a second call would
          // schedule the action twice, as it should).
          if !plan.contains(where: { if case .again = $0 { true } else { false } }) {
            plan.append(.again(randomLater()))
          }
        default: plan.append(.spawn(randomLater()))
        }
      }
      let deadline = Int.random(in: 0..<10, using: &random) == 0 ? randomFuture() : randomPast()
      add(deadline, plan: plan)
    }
    for _ in 0..<60 {
      let name = Int.random(in: 0..<300, using: &random)
      if Bool.random(using: &random) {
        cancel(name)
      } else {
        move(name, to: Bool.random(using: &random) ? randomPast() : randomFuture())
      }
    }
    return modelTurn()
  }

  /// The model's second turn: the timers scheduled or moved during the first; plans apply
  /// only in the first turn (so nothing new lands ahead of a due timer in the second).
  func secondTurn() -> [Int] {
    plansActive = false
    return modelTurn()
  }

  private var plansActive = true

  /// What the next turn fires, by the model (run right after the real turn's timers were
  /// scheduled: it consumes the model's due timers as the loop consumed its own).
  func modelTurn() -> [Int] {
    let limit = modelNext
    var out: [Int] = []
    // Timers due now (the real turn saw every past deadline as due and no future one).
    while let (name, _) =
      model.filter({ $0.value.deadline < .zero && $0.value.order < limit })
      .min(by: {
        ($0.value.deadline, $0.value.order) < ($1.value.deadline, $1.value.order)
      })
    {
      model[name] = nil
      out.append(name)
      apply(name, modelOnly: true)
    }
    return out
  }

  private func fire(_ name: Int) {
    fired.append(name)
    apply(name, modelOnly: false)
  }

  /// The plan of `name` on its first firing: on the real loop (`modelOnly` false), or on the
  /// model alone (its real counterpart already ran, or runs, on the loop).
  private func apply(_ name: Int, modelOnly: Bool) {
    let key = modelOnly ? -name - 1 : name
    firings[key, default: 0] += 1
    guard plansActive, firings[key] == 1, let plan = plans[name] else { return }
    for operation in plan {
      switch operation {
      case .cancel(let other):
        if modelOnly {
          model[other] = nil
        } else if let handle = handles[other] {
          loop.cancel(handle)
        }
      case .move(let other, let deadline):
        if modelOnly {
          if model[other] != nil {
            model[other] = Pending(deadline: deadline, order: modelNext)
            modelNext += 1
          }
        } else if let handle = handles[other] {
          let moved = loop.reschedule(handle, at: base + deadline)
          if let moved { handles[other] = moved }
        }
      case .cancelSelf:
        // Harmless while firing; after `.again` it cancels the re-armed timer.
        if modelOnly {
          model[name] = nil
        } else if let handle = handles[name] {
          loop.cancel(handle)
        }
      case .again(let deadline):
        if modelOnly {
          model[name] = Pending(deadline: deadline, order: modelNext)
          modelNext += 1
        } else if let again = loop.scheduleFiringActionAgain(at: base + deadline) {
          handles[name] = again
        }
      case .spawn(let deadline):
        let spawned = spawnNames[key, default: 0]
        spawnNames[key] = spawned + 1
        let child = 1_000 + name * 10 + spawned
        if modelOnly {
          model[child] = Pending(deadline: deadline, order: modelNext)
          modelNext += 1
        } else {
          plans[child] = []
          handles[child] = loop.schedule(at: base + deadline) { [unowned self] in
            self.fire(child)
          }
        }
      }
    }
  }

  private var spawnNames: [Int: Int] = [:]

  func cancelAll() {
    for handle in handles.values { loop.cancel(handle) }
  }
}
