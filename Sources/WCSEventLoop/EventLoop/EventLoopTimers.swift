import WCSProtocols

/// The timers of one `EventLoop`: the pending actions and their deadlines, in one value kept
/// in one stored property of the loop, so scheduling, cancelling or firing a timer is one
/// access of the loop object (each stored property of a class accessed costs a dynamic
/// exclusivity check). Deadlines are `MediaInstant`s (see `TimerHeap`).
/// Loop-confined, like the loop state that holds it.
///
/// While a loop has never had more than `tableLimit` timers pending at once (a loop with a few
/// connections), the timers are only a table: each slot holds its timer's deadline and
/// deadline + leeway, the timer firing next and the sleep are found by scanning it, and
/// scheduling, moving, cancelling or firing a timer writes its slot. A played stream fires
/// a timer for about every other packet and re-arms it, and each of those ran through the
/// heaps' sifts, searches and removals cold (≈ 35 code lines a packet, measured with
/// `scripts/play-cache-misses.sh`); a scan of a few slots is a handful. Beyond that the
/// timers are also kept in two heaps (the general path, as before): while they are small
/// (`inPlaceLimit` entries) a moved, cancelled or fired timer's entries are updated or removed
/// where they are (found by a short linear search) instead of being left behind as stale
/// entries that cost a sift each when they reach the top; larger heaps delete lazily. Either
/// way the live timers, and so the order timers fire in and the sleep, are the same.
///
/// The slot of the timer firing stays reserved while its action runs, so an action that
/// re-arms itself (`rearmFiring`) gets its slot back without handing its closure over again.
struct EventLoopTimers {
  /// Heaps up to this many entries update and remove entries in place.
  static let inPlaceLimit = 32
  /// Up to this many slots (timers pending at once, at most) the timers are a table only.
  static let tableLimit = 32

  /// Pending (and stale) timers ordered by deadline; empty while `usesHeaps` is false.
  private var heap = TimerHeap()
  /// The same timers ordered by deadline + leeway: the earliest of these bounds the sleep.
  private var latestHeap = TimerHeap()
  /// Whether the timers are kept in the heaps too (once more than `tableLimit` slots were
  /// needed; for good).
  private(set) var usesHeaps = false
  /// The pending timers, at their `EventLoopTimer.slot`; a free slot has the id
  /// `freeSlotID`, the slot of the timer firing `firingSlotID` (both never match a handle and
  /// have the latest deadlines, so a scan passes over them). An array rather than a dictionary
  /// keyed by id: the loop looks a timer up for every entry it pops or skips, and a hashed
  /// look-up per timer showed in profiles.
  private var slots: [Slot] = []
  /// Slots free for reuse.
  private var freeSlots: [Int32] = []
  /// The slot of the action `takeDue` returned last, while it is reserved for it.
  private var firingSlot: Int32 = -1
  /// Timers scheduled and not yet fired or cancelled.
  private(set) var pendingCount = 0
  /// The id the next timer gets; ids only grow.
  private(set) var nextID: UInt64 = 0
  /// After `shutDown`: no timer is kept any more.
  private(set) var isShutDown = false
  /// The action `takeDue` returned last, until the next `takeDue` call: the action running
  /// (`EventLoop.scheduleFiringActionAgain`), kept here so firing a timer is one access.
  private(set) var firing: (() -> Void)?

  /// A pending timer, or a free or firing slot (no deadline).
  private struct Slot {
    /// Never a timer's id: ids count up from 0 and 2^64 - 2 timers are never scheduled.
    static let freeSlotID = UInt64.max
    static let firingSlotID = UInt64.max - 1
    var id: UInt64
    /// `MediaInstant.distantFuture` when not pending.
    var deadline: MediaInstant
    /// `deadline` + leeway.
    var latest: MediaInstant
    var action: (() -> Void)?

    /// A free slot (made where needed: a stored `static let` of this type would be a lazily
    /// initialized global, a `swift_once` check on each use).
    static var free: Slot {
      Slot(id: freeSlotID, deadline: .distantFuture, latest: .distantFuture, action: nil)
    }
  }

  /// Entries in both heaps, live and stale (the table: two a pending timer).
  var entryCount: Int { usesHeaps ? heap.count + latestHeap.count : 2 * pendingCount }

  /// Whether any timer may be due: a pending one, or (heaps) any entry, live or stale.
  var hasEntries: Bool { usesHeaps ? heap.count > 0 : pendingCount > 0 }

  /// Adds a timer due at `deadline` that may run `leeway` (≥ 0) later.
  mutating func schedule(
    at deadline: MediaInstant, leeway: MediaDuration, _ action: @escaping () -> Void
  ) -> EventLoopTimer {
    let id = nextID
    nextID += 1
    guard !isShutDown else { return EventLoopTimer(id: id, slot: -1) }
    let slot: Int32
    let entry = Slot(id: id, deadline: deadline, latest: deadline + leeway, action: action)
    if let free = freeSlots.popLast() {
      slot = free
      slots[Int(free)] = entry
    } else {
      slot = Int32(slots.count)
      slots.append(entry)
    }
    pendingCount += 1
    if usesHeaps {
      insertEntries(id: id, slot: slot, deadline: deadline, latest: deadline + leeway)
    } else if slots.count > Self.tableLimit {
      startHeaps()
    }
    return EventLoopTimer(id: id, slot: slot)
  }

  /// Schedules the action `takeDue` returned last once more, in its slot: nil when that
  /// action is not running or was re-armed already (the caller schedules it anew then).
  mutating func rearmFiring(at deadline: MediaInstant, leeway: MediaDuration) -> EventLoopTimer? {
    let slot = firingSlot
    guard slot >= 0, Int(slot) < slots.count, slots[Int(slot)].id == Slot.firingSlotID else {
      return nil
    }
    let id = nextID
    nextID += 1
    slots[Int(slot)].id = id
    slots[Int(slot)].deadline = deadline
    slots[Int(slot)].latest = deadline + leeway
    pendingCount += 1
    if usesHeaps {
      insertEntries(id: id, slot: slot, deadline: deadline, latest: deadline + leeway)
    }
    return EventLoopTimer(id: id, slot: slot)
  }

  /// Moves a pending timer (new id, same action); nil when it is not pending.
  mutating func reschedule(
    _ timer: EventLoopTimer, at deadline: MediaInstant, leeway: MediaDuration
  ) -> EventLoopTimer? {
    guard isPending(timer) else { return nil }
    let id = nextID
    nextID += 1
    slots[Int(timer.slot)].id = id
    slots[Int(timer.slot)].deadline = deadline
    slots[Int(timer.slot)].latest = deadline + leeway
    if usesHeaps {
      if !replaceEntries(
        of: timer.id, with: id, slot: timer.slot, deadline: deadline, leeway: leeway)
      {
        insertEntries(id: id, slot: timer.slot, deadline: deadline, latest: deadline + leeway)
      }
      compactIfStale()
    }
    return EventLoopTimer(id: id, slot: timer.slot)
  }

  /// Cancels a pending timer; nothing for one that fired or was cancelled.
  mutating func cancel(_ timer: EventLoopTimer) {
    guard isPending(timer) else { return }
    if usesHeaps {
      if heap.count <= Self.inPlaceLimit, let index = heap.index(of: timer.id) {
        heap.remove(at: index)
      }
      removeLatestEntry(of: timer.id)
    }
    slots[Int(timer.slot)] = .free
    freeSlots.append(timer.slot)
    pendingCount -= 1
    if usesHeaps { compactIfStale() }
  }

  /// The action of the earliest live timer due at `now` with an id below `limit`, taken out
  /// (the timer no longer pending); nil when none is. The action is `firing`, and its slot
  /// reserved for `rearmFiring`, until the next call.
  mutating func takeDue(now: MediaInstant, limit: UInt64) -> (() -> Void)? {
    finishFiring()
    guard usesHeaps else {
      // The earliest live timer by (deadline, id); free and firing slots sort last.
      var earliest = -1
      var deadline = MediaInstant.distantFuture
      var id = UInt64.max
      for index in slots.indices
      where slots[index].deadline < deadline
        || (slots[index].deadline == deadline && slots[index].id < id)
      {
        earliest = index
        deadline = slots[index].deadline
        id = slots[index].id
      }
      guard earliest >= 0, deadline <= now, id < limit else { return nil }
      return take(slot: Int32(earliest))
    }
    // Stale entries on the way are dropped whatever their id: one of a timer scheduled during
    // the turn and then moved or cancelled must not hold back the due timers behind it.
    while let top = heap.top, top.deadline <= now {
      guard isLive(top) else {
        heap.removeTop()
        continue
      }
      guard top.id < limit else { return nil }
      heap.removeTop()
      removeLatestEntry(of: top.id)
      return take(slot: top.slot)
    }
    return nil
  }

  /// The earliest deadline + leeway of the live timers (stale tops of both heaps dropped);
  /// nil without timers.
  mutating func earliestLatestDeadline() -> MediaInstant? {
    guard usesHeaps else {
      guard pendingCount > 0 else { return nil }
      var latest = MediaInstant.distantFuture
      for index in slots.indices where slots[index].latest < latest {
        latest = slots[index].latest
      }
      return latest
    }
    while let top = heap.top, !isLive(top) { heap.removeTop() }
    while let top = latestHeap.top, !isLive(top) { latestHeap.removeTop() }
    return latestHeap.top?.deadline
  }

  /// Drops every timer; later ones are not kept.
  mutating func shutDown() {
    isShutDown = true
    slots.removeAll()
    freeSlots.removeAll()
    firingSlot = -1
    pendingCount = 0
    heap = TimerHeap()
    latestHeap = TimerHeap()
  }

  /// Takes the pending timer of `slot` out (reserving the slot while its action runs) and
  /// returns its action.
  private mutating func take(slot: Int32) -> (() -> Void)? {
    let action = slots[Int(slot)].action
    slots[Int(slot)].id = Slot.firingSlotID
    slots[Int(slot)].deadline = .distantFuture
    slots[Int(slot)].latest = .distantFuture
    pendingCount -= 1
    firingSlot = slot
    firing = action
    return action
  }

  /// Frees the slot of the action that ran, unless it was re-armed (or cancelled once
  /// re-armed: freed then already).
  private mutating func finishFiring() {
    firing = nil
    let slot = firingSlot
    firingSlot = -1
    guard slot >= 0, Int(slot) < slots.count, slots[Int(slot)].id == Slot.firingSlotID else {
      return
    }
    slots[Int(slot)] = .free
    freeSlots.append(slot)
  }

  /// Puts every pending timer in the heaps, which keep them from now on.
  private mutating func startHeaps() {
    usesHeaps = true
    for index in slots.indices where isPending(slot: index) {
      insertEntries(
        id: slots[index].id, slot: Int32(index), deadline: slots[index].deadline,
        latest: slots[index].latest)
    }
  }

  private func isPending(slot index: Int) -> Bool {
    slots[index].id < Slot.firingSlotID
  }

  /// Moves the entries of the timer `oldID` to `deadline` (+ `leeway`) under its new `id`, in
  /// place; false (nothing changed) when a heap is too large or they are not found.
  private mutating func replaceEntries(
    of oldID: UInt64, with id: UInt64, slot: Int32, deadline: MediaInstant, leeway: MediaDuration
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

  private mutating func insertEntries(
    id: UInt64, slot: Int32, deadline: MediaInstant, latest: MediaInstant
  ) {
    heap.insert(TimerHeap.Entry(deadline: deadline, id: id, slot: slot))
    latestHeap.insert(TimerHeap.Entry(deadline: latest, id: id, slot: slot))
  }

  private func isPending(_ timer: EventLoopTimer) -> Bool {
    timer.slot >= 0 && Int(timer.slot) < slots.count && slots[Int(timer.slot)].id == timer.id
  }

  /// Whether a heap entry is its timer's current one (not fired, cancelled or moved).
  private func isLive(_ entry: TimerHeap.Entry) -> Bool {
    slots[Int(entry.slot)].id == entry.id
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
