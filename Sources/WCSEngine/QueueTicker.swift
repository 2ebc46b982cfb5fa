import Dispatch
import Foundation
import Synchronization
import WCSProtocols

/// A repeating tick on a serial queue (a track's queue, so ticks never race the encoder),
/// driven by a thread of its own that sleeps to each absolute deadline.
///
/// Why not a `DispatchSourceTimer`: on Linux libdispatch services timers on its manager thread
/// (epoll + timerfd) and then wakes a worker thread for the queue, two wake-ups per tick, and a
/// wake-up costs more CPU than the capture work of most ticks (docs/performance.md,
/// `PipelineBench idle-loop`). Here one thread wakes once per tick: `clock_nanosleep` to an
/// absolute `CLOCK_MONOTONIC` deadline (deadlines are `anchor + k × interval`, so the ticks
/// do not drift), then the tick runs in `queue.sync`, which libdispatch runs inline on the
/// calling thread when the serial queue is idle: serialized with the queue's other work, at no
/// second wake-up.
///
/// A tick late by more than an interval stands for all the deadlines it missed (as a Dispatch
/// timer coalesces them); sources that must not lose time count what is due from their clock.
final class QueueTicker: Sendable {
  private let queue: DispatchQueue
  private let interval: Duration
  private let name: String
  private let key = DispatchSpecificKey<Int>()
  private let run = Mutex<QueueTickerRun?>(nil)

  /// `interval`: the tick period (at least 1 ms).
  init(queue: DispatchQueue, interval: Duration) {
    self.queue = queue
    self.interval = max(interval, .milliseconds(1))
    // Thread names are cut at 15 bytes: the queue label's last part ("AudioSendTrack").
    let last = queue.label.split(separator: ".").last ?? "QueueTicker"
    name = String(decoding: Array(last.utf8.prefix(15)), as: UTF8.self)
    queue.setSpecific(key: key, value: 1)
  }

  deinit {
    // No barrier: the last reference may go inside a tick. The thread ends at its next
    // deadline.
    run.withLock { $0?.stopped.store(true, ordering: .releasing) }
    queue.setSpecific(key: key, value: nil)
  }

  /// Starts ticking; `tick` runs on the queue at the points `anchor + k × interval`: at once
  /// for the latest point already past (none when `anchor` is ahead), then at each later one.
  /// `anchor`: now when nil. Does nothing when already started.
  func start(anchor: MediaInstant? = nil, _ tick: @escaping @Sendable () -> Void) {
    run.withLock { run in
      guard run == nil else { return }
      let started = QueueTickerRun(
        queue: queue, interval: interval, anchor: anchor ?? .now(), name: name, tick: tick)
      guard started.spawn() else { return }
      run = started
    }
  }

  /// Stops ticking: no tick starts after it returns, and a running tick has finished (unless
  /// called from that tick, which finishes after it). The thread ends at its next deadline.
  func stop() {
    let stopped = run.withLock { run -> QueueTickerRun? in
      defer { run = nil }
      return run
    }
    guard let stopped else { return }
    stopped.stopped.store(true, ordering: .releasing)
    if DispatchQueue.getSpecific(key: key) == nil {
      // A tick that began before the flag was set finishes before this barrier; later ones
      // see the flag (it is read on the queue).
      queue.sync {}
    }
  }

  /// The deadline after one served at `served` (nanoseconds on `CLOCK_MONOTONIC`) when it is
  /// `now`: the next point of the grid `anchor + k × interval`, or, when that has passed, the
  /// latest passed point (one tick for all that were missed).
  static func nextDeadline(after served: Int64, now: Int64, anchor: Int64, interval: Int64)
    -> Int64
  {
    let next = served + interval
    guard now > next else { return next }
    return anchor + (now - anchor) / interval * interval
  }
}

/// One start…stop of a `QueueTicker`: what its thread needs, without the ticker (whose owner
/// may go while the thread sleeps).
private final class QueueTickerRun: Sendable {
  let stopped = Atomic(false)
  private let queue: DispatchQueue
  private let tick: @Sendable () -> Void
  private let name: String
  /// Nanoseconds.
  private let interval: Int64
  /// The grid's origin in nanoseconds on `CLOCK_MONOTONIC`.
  private let anchor: Int64

  init(
    queue: DispatchQueue, interval: Duration, anchor: MediaInstant, name: String,
    tick: @escaping @Sendable () -> Void
  ) {
    self.queue = queue
    self.tick = tick
    self.name = name
    self.interval = MediaDuration(interval).nanoseconds
    // The media clock (`CLOCK_BOOTTIME`) and `CLOCK_MONOTONIC` run at the same rate while the
    // machine is awake; their offset is taken once. Reading the monotonic clock second makes the offset err late, so a deadline is
    // never met before its instant (a microphone tick must find its frame complete).
    let offset = (anchor - MediaInstant.now()).nanoseconds
    self.anchor = Self.monotonicNow() + offset
  }

  /// Starts the thread, which holds this run until it ends; false when none could be made.
  func spawn() -> Bool {
    let context = Unmanaged.passRetained(self).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
      &thread, nil,
      { context in
        guard let context else { return nil }
        Unmanaged<QueueTickerRun>.fromOpaque(context).takeRetainedValue().main()
        return nil
      }, context)
    guard result == 0 else {
      Unmanaged<QueueTickerRun>.fromOpaque(context).release()
      return false
    }
    pthread_detach(thread)
    return true
  }

  private func main() {
    Thread.current.name = name
    let now = Self.monotonicNow()
    var deadline = now <= anchor ? anchor : anchor + (now - anchor) / interval * interval
    while !stopped.load(ordering: .acquiring) {
      Self.sleep(until: deadline)
      guard !stopped.load(ordering: .acquiring) else { break }
      queue.sync {
        guard !stopped.load(ordering: .acquiring) else { return }
        tick()
      }
      deadline = QueueTicker.nextDeadline(
        after: deadline, now: Self.monotonicNow(), anchor: anchor, interval: interval)
    }
  }

  private static func sleep(until deadline: Int64) {
    var time = timespec(
      tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    // Restarted after a signal with the same absolute deadline.
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
  }

  static func monotonicNow() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
  }

}
