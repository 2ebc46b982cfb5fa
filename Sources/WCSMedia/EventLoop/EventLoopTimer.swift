/// A handle to a timer scheduled with `EventLoop.schedule(at:_:)`; pass it to
/// `EventLoop.cancel(_:)`. Handles are never reused within one loop.
public struct EventLoopTimer: Hashable, Sendable {
  /// Increasing per loop; orders timers with the same deadline by scheduling order.
  let id: UInt64
}

/// A binary min-heap of timer deadlines ordered by (deadline, id), so equal deadlines fire in
/// the order they were scheduled. Cancelled entries stay until they reach the top (lazy
/// deletion); `EventLoop` compacts the heap when they pile up.
struct TimerHeap {
  struct Entry {
    var deadline: ContinuousClock.Instant
    var id: UInt64

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

  /// Keeps only entries for which `isLive` holds and rebuilds the heap.
  mutating func compact(keeping isLive: (UInt64) -> Bool) {
    entries.removeAll { !isLive($0.id) }
    var index = entries.count / 2
    while index > 0 {
      index -= 1
      siftDown(from: index)
    }
  }

  private mutating func siftUp(from start: Int) {
    var child = start
    while child > 0 {
      let parent = (child - 1) / 2
      guard entries[child].precedes(entries[parent]) else { return }
      entries.swapAt(child, parent)
      child = parent
    }
  }

  private mutating func siftDown(from start: Int) {
    var parent = start
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < entries.count, entries[left].precedes(entries[smallest]) { smallest = left }
      if right < entries.count, entries[right].precedes(entries[smallest]) { smallest = right }
      guard smallest != parent else { return }
      entries.swapAt(parent, smallest)
      parent = smallest
    }
  }
}
