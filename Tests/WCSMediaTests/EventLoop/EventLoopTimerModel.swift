import WCSProtocols

/// The model `EventLoopTimers` is checked against (`EventLoopTimersEquivalenceTests`,
/// `EventLoopTimersFiringActionTests`): only the live timers, by their current id.
struct EventLoopTimerModel {
  var live: [UInt64: (deadline: MediaInstant, latest: MediaInstant, tag: Int)] = [:]
  var nextID: UInt64 = 0

  mutating func schedule(deadline: MediaInstant, leeway: MediaDuration, tag: Int) -> UInt64 {
    defer { nextID += 1 }
    live[nextID] = (deadline, deadline + leeway, tag)
    return nextID
  }

  mutating func reschedule(_ id: UInt64, deadline: MediaInstant, leeway: MediaDuration) -> UInt64? {
    guard let timer = live.removeValue(forKey: id) else { return nil }
    defer { nextID += 1 }
    live[nextID] = (deadline, deadline + leeway, timer.tag)
    return nextID
  }

  mutating func cancel(_ id: UInt64) { live[id] = nil }

  /// The earliest live timer, when it is due and was scheduled before the turn (`limit`):
  /// one scheduled during the turn with an earlier deadline holds the others back until the
  /// next turn, as the loop always did.
  mutating func takeDue(now: MediaInstant, limit: UInt64) -> Int? {
    guard
      let first = live.min(by: {
        ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key)
      }), first.value.deadline <= now, first.key < limit
    else { return nil }
    live[first.key] = nil
    return first.value.tag
  }

  /// The sleep bound: the earliest deadline + leeway.
  var earliestLatest: MediaInstant? { live.values.map(\.latest).min() }
}

/// The tags of the actions fired, in order (a class: the actions append to it).
final class FiredTimerTags {
  var tags: [Int] = []
}

/// The instant `value` nanoseconds after the epoch: the timer tests count in nanoseconds.
func ns(_ value: Int64) -> MediaInstant { MediaInstant(nanoseconds: value) }
