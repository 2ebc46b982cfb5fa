import Foundation
import WCSProtocols

/// How much of an event loop's time work taken over from a worker queue may use: a played
/// track's video decoding runs on the loop (sparing the hand-off to its queue, ≈ 25 µs, and
/// the worker's wake-up, as much again on a virtual machine) only while such work stays under
/// `share` of the loop's wall-clock time, so the loop keeps room for packets and timers.
///
/// The load is an exponentially decaying sum of the time spent (time constant `window`), so a
/// burst counts for about a `window` and then fades. Loop-confined: its methods trap off its
/// loop's thread.
package final class EventLoopWorkBudget: Sendable {
  /// Share of the loop's time (0…1) taken-over work may use.
  let share: Double
  /// Time constant of the decaying load.
  let window: Duration
  /// `window` in seconds, converted once.
  private let windowSeconds: Double

  /// The decaying load: seconds of work, decayed to `updatedAt`.
  private struct Load {
    var seconds: Double = 0
    var updatedAt: MediaInstant?
  }

  private let load: LoopBoundBox<Load>

  /// - Parameters:
  ///   - thread: the thread of the loop whose time it budgets.
  ///   - share: the largest share of the loop's time (0…1) such work may take; default 0.25.
  ///   - window: the time constant of the load's decay; default 1 s.
  init(thread: EventLoopThread, share: Double = 0.25, window: Duration = .seconds(1)) {
    self.share = share
    self.window = window
    windowSeconds = MediaDuration(window).seconds
    load = LoopBoundBox(Load(), thread: thread)
  }

  /// The decayed load at `now` as a share of the loop's time (0 when idle; about the busy
  /// fraction under steady work).
  func utilization(at now: MediaInstant) -> Double {
    decay(to: now)
    return load.value.seconds / windowSeconds
  }

  /// Whether work expected to take `cost` may run on the loop at `now`.
  package func allows(_ cost: MediaDuration, at now: MediaInstant) -> Bool {
    utilization(at: now) + cost.seconds / windowSeconds <= share
  }

  /// Records work that took `spent` and ended at `now`.
  package func record(_ spent: MediaDuration, endingAt now: MediaInstant) {
    decay(to: now)
    load.value.seconds += max(0, spent.seconds)
  }

  /// Decays the load to `now`; an instant before the last one changes nothing.
  private func decay(to now: MediaInstant) {
    guard let last = load.value.updatedAt else {
      load.value.updatedAt = now
      return
    }
    guard now > last else { return }
    load.value.seconds *= exp(-(now - last).seconds / windowSeconds)
    load.value.updatedAt = now
  }
}
