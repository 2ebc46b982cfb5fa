import WCSProtocols

/// A handle to a timer scheduled with `EventLoop.schedule(at:_:)`; pass it to
/// `EventLoop.cancel(_:)`. Handles are never reused within one loop.
public struct EventLoopTimer: Hashable, Sendable {
  /// Increasing per loop; orders timers with the same deadline by scheduling order.
  let id: UInt64
  /// Where the loop keeps the action (slots are reused; `id` tells whether it is still this
  /// timer's); -1 for a timer that was never stored (scheduled after `shutdown`).
  let slot: Int32
}

/// A binary min-heap of timer deadlines ordered by (deadline, id), so equal deadlines fire in
/// the order they were scheduled. Cancelled entries stay until they reach the top (lazy
/// deletion); `EventLoop` compacts the heap when they pile up.
///
/// Deadlines are `MediaInstant`s, not `ContinuousClock.Instant`s: that type is resilient (from
/// the Concurrency library), so every copy and comparison of an entry holding one went through
/// value witnesses and metadata look-ups; a `MediaInstant` entry is trivial and compares
/// inline.
struct TimerHeap {
  struct Entry {
    var deadline: MediaInstant
    var id: UInt64
    /// The loop's action slot of the timer (see `EventLoopTimer.slot`).
    var slot: Int32

    func precedes(_ other: Entry) -> Bool {
      deadline < other.deadline || (deadline == other.deadline && id < other.id)
    }
  }

  private(set) var entries: [Entry] = []

  var count: Int { entries.count }
  var top: Entry? { entries.first }

  mutating func insert(_ entry: Entry) {
    entries.append(entry)
    siftUp(from: entries.count - 1)
  }

  @discardableResult
  mutating func removeTop() -> Entry? {
    guard let first = entries.first else { return nil }
    let last = entries.removeLast()
    if !entries.isEmpty {
      entries[0] = last
      siftDown(from: 0)
    }
    return first
  }

  /// The index of the entry with `id`, by a linear search (for small heaps).
  func index(of id: UInt64) -> Int? {
    for index in entries.indices where entries[index].id == id { return index }
    return nil
  }

  /// Puts `entry` in the place of the one at `index` and restores the heap order.
  mutating func replace(at index: Int, with entry: Entry) {
    let old = entries[index]
    entries[index] = entry
    if entry.precedes(old) { siftUp(from: index) } else { siftDown(from: index) }
  }

  /// Removes the entry at `index` and restores the heap order.
  mutating func remove(at index: Int) {
    let removed = entries[index]
    let last = entries.removeLast()
    guard index < entries.count else { return }
    entries[index] = last
    if last.precedes(removed) { siftUp(from: index) } else { siftDown(from: index) }
  }

  /// Keeps only entries for which `isLive` holds and rebuilds the heap.
  mutating func compact(keeping isLive: (Entry) -> Bool) {
    entries.removeAll { !isLive($0) }
    var index = entries.count / 2
    while index > 0 {
      index -= 1
      siftDown(from: index)
    }
  }

  // Holes instead of swaps: the moving entry is written once, where it stops.
  private mutating func siftUp(from start: Int) {
    var child = start
    let moving = entries[child]
    while child > 0 {
      let parent = (child - 1) / 2
      guard moving.precedes(entries[parent]) else { break }
      entries[child] = entries[parent]
      child = parent
    }
    entries[child] = moving
  }

  private mutating func siftDown(from start: Int) {
    var parent = start
    let count = entries.count
    let moving = entries[parent]
    while true {
      let left = 2 * parent + 1
      guard left < count else { break }
      let right = left + 1
      var smallest = left
      if right < count, entries[right].precedes(entries[left]) { smallest = right }
      guard entries[smallest].precedes(moving) else { break }
      entries[parent] = entries[smallest]
      parent = smallest
    }
    entries[parent] = moving
  }
}
