/// The timers of one `EventLoop`: two heaps of deadlines and the pending actions, in one value
/// kept in one stored property of the loop, so scheduling, cancelling or firing a timer is one
/// access of the loop object (each stored property of a class accessed costs a dynamic
/// exclusivity check). Deadlines are attoseconds from the loop's origin (see `TimerHeap`).
/// Loop-confined, like the loop state that holds it.
///
/// While the heaps are small (`inPlaceLimit` entries, a loop with a few connections), a moved,
/// cancelled or fired timer's entries are updated or removed where they are (found by a short
/// linear search) instead of being left behind as stale entries that cost a sift each when
/// they reach the top; larger heaps delete lazily. Either way the live entries, and so the
/// order timers fire in and the sleep, are the same.
struct EventLoopTimers {
  /// Heaps up to this many entries update and remove entries in place.
  static let inPlaceLimit = 32

  /// Pending (and stale) timers ordered by deadline.
  private var heap = TimerHeap()
  /// The same timers ordered by deadline + leeway: the earliest of these bounds the sleep.
  private var latestHeap = TimerHeap()
  /// The actions of pending timers, at their `EventLoopTimer.slot`; a free slot has the id
  /// `freeSlotID`. An array rather than a dictionary keyed by id: the loop looks a timer up
  /// for every entry it pops or skips, and a hashed look-up per timer showed in profiles.
  private var slots: [Slot] = []
  /// Slots free for reuse.
  private var freeSlots: [Int32] = []
  /// Timers scheduled and not yet fired or cancelled.
  private(set) var pendingCount = 0
  /// The id the next timer gets; ids only grow.
  private(set) var nextID: UInt64 = 0
  /// After `shutDown`: no timer is kept any more.
  private(set) var isShutDown = false
  /// The action `takeDue` returned last, until the next `takeDue` call: the action running
  /// (`EventLoop.scheduleFiringActionAgain`), kept here so firing a timer is one access.
  private(set) var firing: (() -> Void)?

  /// A pending timer's action, or a free slot (`freeSlotID`, no action).
  private struct Slot {
    /// Never a timer's id: ids count up from 0 and 2^64 - 1 timers are never scheduled.
    static let freeSlotID = UInt64.max
    var id: UInt64
    var action: (() -> Void)?
  }

  /// Entries in both heaps, live and stale.
  var entryCount: Int { heap.count + latestHeap.count }

  /// Whether any entry (live or stale) is in the deadline heap.
  var hasEntries: Bool { heap.count > 0 }

  /// Adds a timer due at `deadline` that may run `leeway` (≥ 0) later, both in attoseconds.
  mutating func schedule(
    at deadline: Int128, leeway: Int128, _ action: @escaping () -> Void
  ) -> EventLoopTimer {
    let id = nextID
    nextID += 1
    guard !isShutDown else { return EventLoopTimer(id: id, slot: -1) }
    let slot: Int32
    if let free = freeSlots.popLast() {
      slot = free
      slots[Int(free)] = Slot(id: id, action: action)
    } else {
      slot = Int32(slots.count)
      slots.append(Slot(id: id, action: action))
    }
    pendingCount += 1
    insertEntries(id: id, slot: slot, deadline: deadline, leeway: leeway)
    return EventLoopTimer(id: id, slot: slot)
  }

  /// Moves a pending timer (new id, same action); nil when it is not pending.
  mutating func reschedule(
    _ timer: EventLoopTimer, at deadline: Int128, leeway: Int128
  ) -> EventLoopTimer? {
    guard isPending(timer) else { return nil }
    let id = nextID
    nextID += 1
    slots[Int(timer.slot)].id = id
    if !replaceEntries(
      of: timer.id, with: id, slot: timer.slot, deadline: deadline, leeway: leeway)
    {
      insertEntries(id: id, slot: timer.slot, deadline: deadline, leeway: leeway)
    }
    compactIfStale()
    return EventLoopTimer(id: id, slot: timer.slot)
  }

  /// Cancels a pending timer; nothing for one that fired or was cancelled.
  mutating func cancel(_ timer: EventLoopTimer) {
    guard isPending(timer) else { return }
    if heap.count <= Self.inPlaceLimit, let index = heap.index(of: timer.id) {
      heap.remove(at: index)
    }
    removeLatestEntry(of: timer.id)
    _ = release(slot: timer.slot)
    compactIfStale()
  }

  /// The action of the earliest live timer due at `now` with an id below `limit`, taken out
  /// (the timer no longer pending); nil when none is. Stale entries on the way are dropped.
  /// The action is `firing` until the next call.
  mutating func takeDue(now: Int128, limit: UInt64) -> (() -> Void)? {
    firing = nil
    while let top = heap.top, top.deadline <= now, top.id < limit {
      heap.removeTop()
      guard isLive(top), let action = release(slot: top.slot) else { continue }
      removeLatestEntry(of: top.id)
      firing = action
      return action
    }
    return nil
  }

  /// The earliest deadline + leeway of the live timers (stale tops of both heaps dropped);
  /// nil without timers.
  mutating func earliestLatestDeadline() -> Int128? {
    while let top = heap.top, !isLive(top) { heap.removeTop() }
    while let top = latestHeap.top, !isLive(top) { latestHeap.removeTop() }
    return latestHeap.top?.deadline
  }

  /// Drops every timer; later ones are not kept.
  mutating func shutDown() {
    isShutDown = true
    slots.removeAll()
    freeSlots.removeAll()
    pendingCount = 0
    heap = TimerHeap()
    latestHeap = TimerHeap()
  }

  /// Moves the entries of the timer `oldID` to `deadline` (+ `leeway`) under its new `id`, in
  /// place; false (nothing changed) when a heap is too large or they are not found.
  private mutating func replaceEntries(
    of oldID: UInt64, with id: UInt64, slot: Int32, deadline: Int128, leeway: Int128
  ) -> Bool {
    guard heap.count <= Self.inPlaceLimit, latestHeap.count <= Self.inPlaceLimit,
      let index = heap.index(of: oldID), let latestIndex = latestHeap.index(of: oldID)
    else { return false }
    heap.replace(at: index, with: TimerHeap.Entry(deadline: deadline, id: id, slot: slot))
    latestHeap.replace(
      at: latestIndex, with: TimerHeap.Entry(deadline: deadline + leeway, id: id, slot: slot))
    return true
  }

  /// Removes the deadline + leeway entry of the timer `id` in place, when the heap is small.
  private mutating func removeLatestEntry(of id: UInt64) {
    guard latestHeap.count <= Self.inPlaceLimit, let index = latestHeap.index(of: id) else {
      return
    }
    latestHeap.remove(at: index)
  }

  private mutating func insertEntries(id: UInt64, slot: Int32, deadline: Int128, leeway: Int128) {
    heap.insert(TimerHeap.Entry(deadline: deadline, id: id, slot: slot))
    latestHeap.insert(TimerHeap.Entry(deadline: deadline + leeway, id: id, slot: slot))
  }

  private func isPending(_ timer: EventLoopTimer) -> Bool {
    timer.slot >= 0 && Int(timer.slot) < slots.count && slots[Int(timer.slot)].id == timer.id
  }

  /// Whether a heap entry is its timer's current one (not fired, cancelled or moved).
  private func isLive(_ entry: TimerHeap.Entry) -> Bool {
    slots[Int(entry.slot)].id == entry.id
  }

  /// Frees `slot` and returns its action.
  private mutating func release(slot: Int32) -> (() -> Void)? {
    let action = slots[Int(slot)].action
    slots[Int(slot)] = Slot(id: Slot.freeSlotID, action: nil)
    freeSlots.append(slot)
    pendingCount -= 1
    return action
  }

  private mutating func compactIfStale() {
    if heap.count > 64 && heap.count > 4 * pendingCount {
      let slots = slots
      heap.compact { slots[Int($0.slot)].id == $0.id }
    }
    if latestHeap.count > 64 && latestHeap.count > 4 * pendingCount {
      let slots = slots
      latestHeap.compact { slots[Int($0.slot)].id == $0.id }
    }
  }
}
