import Dispatch
import Foundation

/// The thread that runs UDP sockets and protocol timers (ARCHITECTURE.md, "one event loop").
///
/// Built on one serial `DispatchQueue` with Dispatch read sources for sockets and a single
/// `DispatchSourceTimer` armed at the earliest deadline of its own timer heap. Dispatch was
/// chosen over a hand-run `epoll_wait` thread because it needs only toolchain modules (Glibc
/// does not export epoll, eventfd or timerfd, so a thread of our own would need new C shim
/// declarations), it uses epoll underneath on Linux, and a serial queue gives the same
/// guarantee a dedicated thread would: everything submitted to the loop runs one piece at a
/// time, in order, with the memory effects of the previous piece visible. "On the loop" means
/// "on this queue" (`inEventLoop`), not a fixed kernel thread.
///
/// Timers use `ContinuousClock` (monotonic). Handlers run on the loop; they must not block.
///
/// Thread safety: `execute`, `submit`, `inEventLoop` and `now()` may be called from any
/// thread. `schedule`, `cancel` and everything about sockets must be called on the loop.
public final class EventLoop: @unchecked Sendable {
  // @unchecked Sendable: every mutable property below is touched only on `queue` (checked by
  // `assertInEventLoop`), which serializes access; the rest is immutable after `init`.

  /// The process-wide loop every `PeerConnection` uses unless given another one.
  public static let shared = EventLoop(label: "WCSMedia.EventLoop.shared")

  /// The queue label, for diagnostics.
  public let label: String
  /// The monotonic clock timers run on.
  public let clock = ContinuousClock()

  let queue: DispatchQueue
  /// One receive buffer for every socket of this loop: sockets read one datagram at a time on
  /// the loop, so they never need it at the same moment (no allocation per packet).
  let receiveBuffer: UnsafeMutableRawBufferPointer

  private let key = DispatchSpecificKey<UInt8>()
  private let timerSource: any DispatchSourceTimer
  private var heap = TimerHeap()
  private var actions: [UInt64: () -> Void] = [:]
  private var nextTimerID: UInt64 = 0
  private var armedDeadline: ContinuousClock.Instant?
  private var isShutDown = false

  /// The largest UDP payload over IPv4 (65,535 − 8 − 20), the size of the receive buffer.
  public static let maximumDatagramSize = 65_507

  /// Creates a private loop (tests make their own; production code uses `shared`).
  ///
  /// - Parameter label: the Dispatch queue label.
  public init(label: String = "WCSMedia.EventLoop") {
    self.label = label
    queue = DispatchQueue(label: label, qos: .userInteractive)
    receiveBuffer = .allocate(byteCount: Self.maximumDatagramSize, alignment: 16)
    timerSource = DispatchSource.makeTimerSource(queue: queue)
    queue.setSpecific(key: key, value: 1)
    timerSource.setEventHandler { [weak self] in self?.fireDueTimers() }
    timerSource.resume()
  }

  deinit {
    timerSource.cancel()
    receiveBuffer.deallocate()
  }

  /// `true` when the caller runs on this loop.
  public var inEventLoop: Bool { DispatchQueue.getSpecific(key: key) != nil }

  /// Traps unless the caller runs on this loop (debug builds only; cheap checks in release
  /// would cost a thread-local lookup per packet).
  @inline(__always)
  public func assertInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
    assert(inEventLoop, "must run on event loop \(label)", file: file, line: line)
  }

  /// Now on the loop's monotonic clock.
  public func now() -> ContinuousClock.Instant { clock.now }

  /// Runs `work` on the loop soon, after what is already queued. Callable from any thread.
  public func execute(_ work: @escaping @Sendable () -> Void) {
    queue.async(execute: work)
  }

  /// Runs `body` on the loop and waits for its result; runs it inline when already on the
  /// loop (so it never deadlocks on itself). Callable from any thread; rethrows `body`'s error.
  public func submit<Result: Sendable>(_ body: () throws -> Result) rethrows -> Result {
    if inEventLoop { return try body() }
    return try queue.sync(execute: body)
  }

  /// Runs `body` on the loop and resumes the caller with its result.
  public func run<Result: Sendable>(
    _ body: @escaping @Sendable () throws -> Result
  ) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
      queue.async { continuation.resume(with: Swift.Result { try body() }) }
    }
  }

  // MARK: - Timers

  /// Schedules `action` to run on the loop at `deadline` (at once, on the next turn, if it has
  /// passed). Timers with equal deadlines run in scheduling order. Call on the loop.
  @discardableResult
  public func schedule(
    at deadline: ContinuousClock.Instant, _ action: @escaping () -> Void
  ) -> EventLoopTimer {
    assertInEventLoop()
    let id = nextTimerID
    nextTimerID += 1
    guard !isShutDown else { return EventLoopTimer(id: id) }
    actions[id] = action
    heap.insert(TimerHeap.Entry(deadline: deadline, id: id))
    if armedDeadline.map({ deadline < $0 }) ?? true { arm(deadline) }
    return EventLoopTimer(id: id)
  }

  /// Schedules `action` to run on the loop after `delay`. Call on the loop.
  @discardableResult
  public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> EventLoopTimer {
    schedule(at: clock.now + delay, action)
  }

  /// Cancels a timer that has not fired; harmless for one that fired or was cancelled. Call on
  /// the loop.
  public func cancel(_ timer: EventLoopTimer) {
    assertInEventLoop()
    guard actions.removeValue(forKey: timer.id) != nil else { return }
    if heap.count > 64 && heap.count > 4 * actions.count {
      heap.compact { actions[$0] != nil }
    }
  }

  /// Timers scheduled and not yet fired or cancelled. Call on the loop.
  public var pendingTimerCount: Int {
    assertInEventLoop()
    return actions.count
  }

  /// Stops the loop's timers for good: pending ones never fire and new ones are ignored.
  /// Sockets belong to their owners, who close them. Callable from any thread; waits for the
  /// loop. Never call it on `shared`.
  public func shutdown() {
    submit {
      isShutDown = true
      actions.removeAll()
      heap = TimerHeap()
      timerSource.cancel()
    }
  }

  private func fireDueTimers() {
    armedDeadline = nil
    let now = clock.now
    // Timers scheduled by the handlers run on a later turn, so a handler that re-arms itself
    // for "now" cannot starve sockets.
    let limit = nextTimerID
    while let top = heap.top, top.deadline <= now, top.id < limit {
      heap.removeTop()
      guard let action = actions.removeValue(forKey: top.id) else { continue }
      action()
    }
    armEarliest()
  }

  private func armEarliest() {
    while let top = heap.top, actions[top.id] == nil { heap.removeTop() }
    guard let top = heap.top else { return }
    arm(top.deadline)
  }

  private func arm(_ deadline: ContinuousClock.Instant) {
    guard !isShutDown else { return }
    armedDeadline = deadline
    let delay = clock.now.duration(to: deadline)
    let (seconds, attoseconds) = delay.components
    // A day is the cap: deadlines further out are re-armed when they come closer.
    let nanoseconds = max(0, min(seconds, 86_400) * 1_000_000_000 + attoseconds / 1_000_000_000)
    timerSource.schedule(
      deadline: .now() + .nanoseconds(Int(clamping: nanoseconds)), repeating: .never,
      leeway: .nanoseconds(0))
  }
}
