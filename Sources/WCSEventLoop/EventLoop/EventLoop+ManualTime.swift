import WCSProtocols

extension EventLoop {
  /// Moves a manual clock (`init(label:manualTimeStartingAt:)`) forward to `target` and fires
  /// the timers a real loop would fire on the way, then returns. The clock stops at each
  /// wake-up the real loop would make: the earliest deadline plus leeway of the pending
  /// timers; there every timer whose deadline has come fires, in deadline order (a leeway
  /// timer sharing the wake-up of an earlier strict one), with `now()` reading that instant.
  /// Timers that the actions schedule for no later than `target` fire in the same call, on a
  /// later wake-up, as on a real loop. A `target` in the past leaves the clock where it is.
  ///
  /// Call from a thread other than the loop's (it waits for the loop), on a manual loop only.
  package func advanceTime(to target: MediaInstant) {
    precondition(hasManualClock, "advanceTime on event loop \(label), which runs in real time")
    precondition(!inEventLoop, "advanceTime called on its own event loop \(label)")
    submit { runTimers(until: target) }
  }

  /// `advanceTime(to:)` `delay` after the manual clock's reading.
  package func advanceTime(by delay: Duration) {
    advanceTime(to: mediaNow() + MediaDuration(delay))
  }

  /// The real loop's wake-ups up to `target`, on the loop.
  private func runTimers(until target: MediaInstant) {
    while let wakeUp = timers.earliestLatestDeadline(), wakeUp <= target {
      setManualClock(max(wakeUp, mediaNow()))
      fireDueTimers()
    }
    setManualClock(max(target, mediaNow()))
    fireDueTimers()
  }

  private func setManualClock(_ instant: MediaInstant) {
    manualNanoseconds.store(instant.nanoseconds, ordering: .releasing)
  }
}
