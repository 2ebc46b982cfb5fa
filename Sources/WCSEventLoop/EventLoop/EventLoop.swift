import Dispatch
import Foundation
import Synchronization
import WCSProtocols

/// The thread that runs UDP sockets and protocol timers (ARCHITECTURE.md, "one event loop").
///
/// One dedicated thread per loop waits in `poll(2)` on the loop's sockets and a wake pipe, with
/// the earliest deadline (plus leeway) of its timers as the timeout; it then runs the work handed over by
/// other threads, the due timers and the handlers of readable sockets, one piece at a time, in
/// order. A packet therefore costs one wake-up of one thread. (An earlier version ran on a
/// serial `DispatchQueue` with Dispatch read and timer sources: every datagram and every timer
/// then woke Dispatch's manager thread, which re-armed epoll/timerfd and woke a worker thread,
/// several system calls and two context switches per event, more CPU than the media itself.)
/// `poll` needs only Glibc, so no C shim is involved.
///
/// Timers use `ContinuousClock` (monotonic) and never fire early; `poll` counts in
/// milliseconds, so they may fire up to about a millisecond late. A timer scheduled with a
/// leeway may fire up to that much later still: it fires on the first turn at or after its
/// deadline, and the loop sleeps no longer than its deadline plus the leeway, so timers that
/// tolerate it share the wake-ups of datagrams and of each other (the kernel's timer slack,
/// in the loop). A wake-up costs 45–50 µs of CPU on a virtual machine
/// (`PipelineBench idle-loop`), more than the media work of most of them. For the same reason a
/// socket may be watched with a coalescing window (`EventLoopUDPSocket`'s `coalescing`): what
/// arrives on it while a timer is due within that window waits for the timer's wake-up (and is
/// read before the timer runs) instead of waking the loop. Handlers run on the loop; they must
/// not block.
///
/// Thread safety: `execute`, `submit`, `run`, `inEventLoop`, `now()` and `shutdown()` may be
/// called from any thread. `schedule`, `cancel` and everything about sockets must be called on
/// the loop.
public final class EventLoop: @unchecked Sendable {
  // @unchecked Sendable: the properties under "loop thread state" are touched only on the loop
  // thread (checked by `assertInEventLoop`); `inbox` and `thread` are synchronized; the rest
  // is immutable after `init`.

  /// The process-wide loop every `PeerConnection` uses unless given another one.
  public static let shared = EventLoop(label: "WCSMedia.EventLoop.shared")

  /// The thread name, for diagnostics.
  public let label: String
  /// The monotonic clock timers run on.
  public let clock = ContinuousClock()

  /// One receive buffer for every socket of this loop: sockets read one datagram at a time on
  /// the loop, so they never need it at the same moment (no allocation per packet).
  let receiveBuffer: UnsafeMutableRawBufferPointer

  /// The share of the loop's time held by the work placed on it for good (played tracks'
  /// video decoding, `DecodePlacement`). Loop thread only.
  package let workBudget: EventLoopWorkBudget

  /// Work handed to the loop, and whether a wake byte is already on its way.
  private struct Inbox {
    var work: [@Sendable () -> Void] = []
    var wakePending = false
  }

  private let inbox = Mutex(Inbox())
  private let wake: EventLoopWakePipe
  /// The loop thread, once it started: what `inEventLoop` and `LoopBound` values check.
  package let thread: EventLoopThread

  /// Whether the clock is the tests' manual one (`init(label:manualTimeStartingAt:)`).
  let hasManualClock: Bool
  /// The manual clock's reading, nanoseconds (`MediaInstant.nanoseconds`); written on the loop
  /// by `advanceTime`, read from any thread.
  let manualNanoseconds = Atomic<Int64>(0)

  // MARK: loop thread state
  var timers = EventLoopTimers()
  /// Datagram arrivals are kept as offsets from this instant.
  package let origin: ContinuousClock.Instant
  /// `origin` on the media clock: the loop's clock reads (`MediaInstant.now()`) become offsets
  /// from `origin` with one subtraction.
  let mediaOrigin: MediaInstant
  /// A readable-handler, the number of its `watch` call, and how long its descriptor may wait
  /// for a timer's wake-up (zero: never, see `watch`).
  private struct Watcher {
    /// Called with the `revents` `poll` reported.
    var handler: (Int16) -> Void
    var registration: UInt64
    var coalescing = MediaDuration.zero
    /// The `poll` events asked for (`POLLIN` unless `watch(_:events:_:)` said otherwise).
    var events = Int16(POLLIN)
  }
  /// Readable-handlers of the watched descriptors.
  private var watchers: [Int32: Watcher] = [:]
  /// `watch` calls so far.
  private var registrations: UInt64 = 0
  private var watchersChanged = true
  /// The handlers of the polled descriptors, by their index in the `poll` array (nil for the
  /// wake pipe), made with that array: a readable socket finds its handler without hashing,
  /// as long as no handler was added, replaced or removed since.
  private var pollHandlers: [Watcher?] = []
  /// How many of the polled descriptors (from the start of the `poll` array: the wake pipe,
  /// then those watched without coalescing) are polled while the coalescing ones wait for a
  /// timer (`turn`).
  private var immediateCount = 1
  /// The smallest coalescing window of the watched descriptors (zero: none coalesces).
  private var coalescingWindow = MediaDuration.zero
  /// Whether a handler stopped reading before its descriptor was drained (`readableLeft()`)
  /// since the last `turn`: then the next poll leaves no descriptor out, so the rest is read
  /// at once rather than at the next timer's wake-up.
  private var readableLeftOver = false
  /// While a socket's datagram handler runs: when that datagram arrived (see
  /// `EventLoopUDPSocket`), else nil.
  package var datagramArrival: MediaInstant? {
    datagramArrivalOffset.map {
      mediaOrigin + .nanoseconds(Int64(truncatingIfNeeded: $0.attoseconds / 1_000_000_000))
    }
  }
  /// `datagramArrival` as an offset from `origin`, as the sockets and the network emulation
  /// keep it.
  package var datagramArrivalOffset: Duration?

  /// The largest UDP payload over IPv4 (65,535 − 8 − 20), the size of the receive buffer.
  public static let maximumDatagramSize = 65_507

  /// Creates a loop and starts its thread (tests make their own; production code uses
  /// `shared`). The thread ends when the loop is deallocated.
  ///
  /// - Parameter label: the thread name.
  public convenience init(label: String = "WCSMedia.EventLoop") {
    self.init(label: label, manualStart: nil)
  }

  /// Creates a loop whose timers run on a manual clock for tests (as swift-nio's
  /// `EmbeddedEventLoop`): `now()` reads `start` until `advanceTime(to:)` or
  /// `advanceTime(by:)` moves it, and timers fire only then, as a real loop would fire them
  /// over that stretch of time. Work handed over and sockets are served as on any loop (a
  /// datagram's arrival is still the kernel's time).
  package convenience init(label: String, manualTimeStartingAt start: MediaInstant) {
    self.init(label: label, manualStart: start)
  }

  private init(label: String, manualStart: MediaInstant?) {
    self.label = label
    thread = EventLoopThread()
    workBudget = EventLoopWorkBudget(thread: thread)
    hasManualClock = manualStart != nil
    manualNanoseconds.store(manualStart?.nanoseconds ?? 0, ordering: .releasing)
    receiveBuffer = .allocate(byteCount: Self.maximumDatagramSize, alignment: 16)
    mediaOrigin = manualStart ?? MediaInstant.now()
    origin = mediaOrigin.continuousInstant
    wake = EventLoopWakePipe()
    let reference = EventLoopReference(self)
    let wake = wake
    let name = String(label.prefix(15))  // the kernel keeps 15 bytes of a thread name
    let loopThread = Thread {
      Thread.current.name = name
      Self.runThread(reference, wake: wake)
    }
    loopThread.start()
  }

  deinit {
    receiveBuffer.deallocate()
    // The thread sees the loop gone when it wakes and ends; the pipe closes when neither
    // holds it any more, so this write never meets a closed (or reused) descriptor.
    wake.signal()
  }

  /// `true` when the caller runs on this loop's thread; `false` on any other thread and before
  /// the thread started. Callable from any thread (one atomic load and `pthread_equal`).
  public var inEventLoop: Bool {
    thread.isCurrent
  }

  /// Traps unless the caller runs on this loop (debug builds only; cheap checks in release
  /// would cost a thread-local lookup per packet).
  @inline(__always)
  public func assertInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
    assert(inEventLoop, "must run on event loop \(label)", file: file, line: line)
  }

  /// Now on the loop's monotonic clock (`clock.now`, or a manual loop's own clock).
  public func now() -> ContinuousClock.Instant {
    mediaNow().continuousInstant
  }

  /// Now on the media clock, for the Sans-I/O cores the loop's handlers drive: a datagram's
  /// handler takes `datagramArrival` instead (when it arrived, not when it was read).
  public func mediaNow() -> MediaInstant {
    guard hasManualClock else { return MediaInstant.now() }
    return MediaInstant(nanoseconds: manualNanoseconds.load(ordering: .acquiring))
  }

  /// Now as attoseconds from `origin`, the offsets the sockets keep datagram arrivals as.
  /// Call on the loop's thread or any other (a clock read).
  func attosecondsNow() -> Int128 {
    Int128(mediaNow().nanoseconds &- mediaOrigin.nanoseconds) * 1_000_000_000
  }

  /// Runs `work` on the loop soon, after what is already queued. Callable from any thread.
  public func execute(_ work: @escaping @Sendable () -> Void) {
    let needsWake = inbox.withLock { inbox -> Bool in
      inbox.work.append(work)
      guard !inbox.wakePending else { return false }
      inbox.wakePending = true
      return true
    }
    if needsWake { wake.signal() }
  }

  /// Runs `body` on the loop and waits for its result; runs it inline when already on the
  /// loop (so it never deadlocks on itself). Callable from any thread; throws what `body`
  /// throws.
  public func submit<Value: Sendable, Failure: Error>(
    _ body: () throws(Failure) -> Value
  ) throws(Failure) -> Value {
    if inEventLoop { return try body() }
    return try withoutActuallyEscaping(body) { escapable throws(Failure) -> Value in
      let handOff = EventLoopHandOff(escapable)
      execute { handOff.run() }
      return try handOff.wait()
    }
  }

  /// Runs `body` on the loop, after the work already handed over, and resumes the caller with
  /// its result; throws what `body` throws. Callable from any task; never blocks a thread.
  public func run<Value: Sendable>(
    _ body: @escaping @Sendable () throws -> Value
  ) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
      execute { continuation.resume(with: Result { try body() }) }
    }
  }

  // MARK: - Timers

  /// Schedules `action` to run on the loop at `deadline` (at once, on the next turn, if it has
  /// passed). Timers with equal deadlines run in scheduling order. Call on the loop.
  ///
  /// - Parameters:
  ///   - deadline: the instant on the loop's monotonic clock before which it never fires.
  ///   - leeway: how much later than `deadline` the timer may fire so it shares a wake-up the
  ///     loop makes anyway (zero: only `poll`'s millisecond rounding; negative counts as zero).
  ///   - action: runs on the loop, once.
  /// - Returns: the timer, for `cancel`.
  @discardableResult
  public func schedule(
    at deadline: ContinuousClock.Instant, leeway: Duration = .zero,
    _ action: @escaping () -> Void
  ) -> EventLoopTimer {
    schedule(at: MediaInstant(deadline), leeway: MediaDuration(leeway), action)
  }

  /// `schedule(at:leeway:_:)` on the media clock, for drivers that hold `MediaInstant`s.
  @discardableResult
  package func schedule(
    at deadline: MediaInstant, leeway: MediaDuration, _ action: @escaping () -> Void
  ) -> EventLoopTimer {
    assertInEventLoop()
    return timers.schedule(at: deadline, leeway: max(leeway, .zero), action)
  }

  /// Moves a pending timer to a new deadline and leeway, keeping its action: the same as
  /// `cancel(timer)` and scheduling the action anew (it gets a new handle, and orders after
  /// the timers scheduled before this call), without handing over the action again. Returns
  /// nil, doing nothing, when `timer` already fired or was cancelled. Call on the loop.
  ///
  /// - Parameters:
  ///   - timer: the pending timer.
  ///   - deadline: the instant on the loop's monotonic clock before which it never fires.
  ///   - leeway: as for `schedule(at:leeway:_:)`.
  /// - Returns: the timer's new handle (the old one no longer cancels it), or nil.
  package func reschedule(
    _ timer: EventLoopTimer, at deadline: ContinuousClock.Instant, leeway: Duration = .zero
  ) -> EventLoopTimer? {
    reschedule(timer, at: MediaInstant(deadline), leeway: MediaDuration(leeway))
  }

  /// `reschedule(_:at:leeway:)` on the media clock.
  package func reschedule(
    _ timer: EventLoopTimer, at deadline: MediaInstant, leeway: MediaDuration
  ) -> EventLoopTimer? {
    assertInEventLoop()
    return timers.reschedule(timer, at: deadline, leeway: max(leeway, .zero))
  }

  /// Schedules the action of the timer firing now once more: `schedule(at:leeway:_:)` with
  /// that action, for an action that re-arms itself, without making a closure each time.
  /// Returns nil, scheduling nothing, when no timer's action is running. Call on the loop,
  /// from the action itself.
  ///
  /// - Parameters:
  ///   - deadline: the instant on the loop's monotonic clock before which it never fires.
  ///   - leeway: as for `schedule(at:leeway:_:)`.
  /// - Returns: the new timer, for `cancel`, or nil.
  package func scheduleFiringActionAgain(
    at deadline: ContinuousClock.Instant, leeway: Duration = .zero
  ) -> EventLoopTimer? {
    scheduleFiringActionAgain(at: MediaInstant(deadline), leeway: MediaDuration(leeway))
  }

  /// `scheduleFiringActionAgain(at:leeway:)` on the media clock.
  package func scheduleFiringActionAgain(at deadline: MediaInstant, leeway: MediaDuration)
    -> EventLoopTimer?
  {
    assertInEventLoop()
    // In the slot the action still holds (no closure handed over again), unless it re-armed
    // once already or the timers were shut down.
    let leeway = max(leeway, .zero)
    if let again = timers.rearmFiring(at: deadline, leeway: leeway) { return again }
    // While a timer's action runs: that action.
    guard let firingAction = timers.firing else { return nil }
    return timers.schedule(at: deadline, leeway: leeway, firingAction)
  }

  /// Schedules `action` to run on the loop after `delay`; `schedule(at:leeway:_:)` with the
  /// deadline `now + delay`. Call on the loop.
  ///
  /// - Parameters:
  ///   - delay: how long from now, on the loop's monotonic clock (negative: at once, on the
  ///     next turn).
  ///   - leeway: how much later the timer may fire to share a wake-up (zero: only `poll`'s
  ///     millisecond rounding).
  ///   - action: runs on the loop, once.
  /// - Returns: the timer, for `cancel`.
  @discardableResult
  public func schedule(
    after delay: Duration, leeway: Duration = .zero, _ action: @escaping () -> Void
  ) -> EventLoopTimer {
    schedule(at: now() + delay, leeway: leeway, action)
  }

  /// Cancels a timer that has not fired; harmless for one that fired or was cancelled. Call on
  /// the loop.
  public func cancel(_ timer: EventLoopTimer) {
    assertInEventLoop()
    timers.cancel(timer)
  }

  /// Timers scheduled and not yet fired or cancelled. Call on the loop.
  public var pendingTimerCount: Int {
    assertInEventLoop()
    return timers.pendingCount
  }

  /// Entries in the two timer heaps, live and stale (cancelled or fired, not yet dropped); for
  /// tests. Call on the loop.
  var timerHeapEntryCount: Int {
    assertInEventLoop()
    return timers.entryCount
  }

  /// Stops the loop's timers for good: pending ones never fire and new ones are ignored.
  /// Work handed over with `execute` still runs and sockets are still served; they belong to
  /// their owners, who close them. Callable from any thread; waits for the loop. Never call it
  /// on `shared`.
  public func shutdown() {
    submit {
      timers.shutDown()
    }
  }

  // MARK: - Descriptors

  /// Calls `handler` on the loop whenever `descriptor` is readable (level-triggered: until it
  /// has been drained). Call on the loop.
  ///
  /// - Parameters:
  ///   - descriptor: the file descriptor, polled for `POLLIN`.
  ///   - coalescing: how long what arrives on it may wait to be read so it shares the wake-up
  ///     of a timer instead of waking the loop itself (zero, the default: it is read as soon as
  ///     it is readable). While a timer is due within the smallest such window, the loop sleeps
  ///     until that timer without polling these descriptors, then reads them before it runs the
  ///     timers. A periodic media timer (an audio turn every 20 ms) then wakes the loop for the
  ///     packets that arrived in between too, which would each have cost a wake-up
  ///     (45–50 µs of CPU on a virtual machine).
  ///   - handler: called on the loop when `descriptor` is readable.
  func watch(_ descriptor: Int32, coalescing: Duration = .zero, _ handler: @escaping () -> Void) {
    assertInEventLoop()
    registrations += 1
    watchers[descriptor] = Watcher(
      handler: { _ in handler() }, registration: registrations,
      coalescing: max(MediaDuration(coalescing), .zero))
    watchersChanged = true
  }

  /// Calls `handler` on the loop with `poll`'s `revents` whenever `descriptor` has one of
  /// `events` (`POLLIN`, `POLLOUT`; `POLLERR` and `POLLHUP` always), level-triggered, never
  /// coalesced: a stream socket asks for `POLLOUT` only while it has bytes queued or a connect
  /// pending. Calling it again replaces the events and the handler. Call on the loop.
  func watch(_ descriptor: Int32, events: Int16, _ handler: @escaping (Int16) -> Void) {
    assertInEventLoop()
    registrations += 1
    watchers[descriptor] = Watcher(
      handler: handler, registration: registrations, events: events)
    watchersChanged = true
  }

  /// Tells the loop that the handler running now stopped before its descriptor was drained (a
  /// read budget, to let timers and other sockets run): the next poll then includes the
  /// coalescing descriptors, so a backlog larger than the budget (a key frame's packets) is
  /// read on the next turns rather than one budget per coalescing window. Call on the loop,
  /// from a `watch` handler.
  func readableLeft() {
    readableLeftOver = true
  }

  /// Stops watching `descriptor`; it may be closed right after. Call on the loop.
  func unwatch(_ descriptor: Int32) {
    assertInEventLoop()
    watchers[descriptor] = nil
    watchersChanged = true
  }

  // MARK: - The thread

  /// Turns until the loop is deallocated. The loop is held strongly only while it runs work,
  /// not while the thread waits, so dropping the last reference ends the thread.
  private static func runThread(_ reference: EventLoopReference, wake: EventLoopWakePipe) {
    reference.loop?.thread.bindToCurrentThread()
    var descriptors: [pollfd] = []
    var timeout: Int32 = 0
    var polled = 0
    var ready: Int32 = 0
    while true {
      // One look at the weak reference per wake-up: the loop serves what `poll` found ready
      // and then turns, and is let go of before the thread sleeps again.
      do {
        guard let loop = reference.loop else { break }
        if ready > 0 { loop.serveReady(descriptors) }
        timeout = loop.turn(&descriptors, polling: &polled)
      }
      ready = poll(&descriptors, nfds_t(polled), timeout)
      if polled < descriptors.count, ready >= 0 {
        // The coalescing descriptors were left out: what they got meanwhile, without waiting,
        // so they are served before the timers that woke the loop.
        ready = poll(&descriptors, nfds_t(descriptors.count), 0)
      }
    }
  }

  /// Runs handed-over work and due timers, refreshes `descriptors` (the wake pipe first, then
  /// the descriptors watched without coalescing, then the others), and returns the `poll`
  /// timeout in milliseconds (-1: none), with in `polling` how many of `descriptors` to poll
  /// (all of them, or only the first `immediateCount` while a timer is due within the
  /// coalescing window).
  private func turn(_ descriptors: inout [pollfd], polling: inout Int) -> Int32 {
    let work = inbox.withLock { inbox -> [@Sendable () -> Void] in
      inbox.wakePending = false
      // Handed over whole: emptying an array still shared with the copy returned would make
      // a new buffer on every turn, work or not.
      guard !inbox.work.isEmpty else { return [] }
      let work = inbox.work
      inbox.work = []
      return work
    }
    for item in work { item() }
    fireDueTimers()
    if watchersChanged {
      watchersChanged = false
      descriptors = [pollfd(fd: wake.readDescriptor, events: Int16(POLLIN), revents: 0)]
      pollHandlers = [nil]
      let ordered = watchers.sorted { first, second in
        (first.value.coalescing > .zero ? 1 : 0, first.key)
          < (second.value.coalescing > .zero ? 1 : 0, second.key)
      }
      for (descriptor, watcher) in ordered {
        descriptors.append(pollfd(fd: descriptor, events: watcher.events, revents: 0))
        pollHandlers.append(watcher)
      }
      immediateCount = 1 + ordered.count { $0.value.coalescing == .zero }
      coalescingWindow = ordered.lazy.map(\.value.coalescing).filter { $0 > .zero }.min() ?? .zero
    }
    polling = descriptors.count
    let backlog = readableLeftOver
    readableLeftOver = false
    if wake.readDescriptor < 0 { return 1 }  // no wake pipe: look at the inbox every 1 ms
    guard let latest = timers.earliestLatestDeadline() else { return -1 }
    let delay = latest - mediaNow()
    guard delay > .zero else { return 0 }
    // On a manual clock only `advanceTime` brings a deadline nearer, and it runs the timers.
    if hasManualClock { return -1 }
    if delay <= coalescingWindow, !backlog { polling = immediateCount }
    return Self.pollMilliseconds(delay: delay)
  }

  /// Drains the wake pipe and calls the handlers of readable descriptors.
  private func serveReady(_ descriptors: [pollfd]) {
    for index in descriptors.indices where descriptors[index].revents != 0 {
      let descriptor = descriptors[index].fd
      if descriptor == wake.readDescriptor {
        wake.drain()
      } else if index < pollHandlers.count, let polled = pollHandlers[index] {
        let events = descriptors[index].revents
        if !watchersChanged {
          polled.handler(events)
        } else if let current = watchers[descriptor],
          current.registration == polled.registration
        {
          // A handler changed the watched set during this turn. Only a descriptor still
          // watched as when polled is served: one closed and reused for a new socket (same
          // number) answers for another file, and a replaced handler gets it on the next poll
          // (level-triggered).
          current.handler(events)
        }
      }
    }
  }

  func fireDueTimers() {
    guard timers.hasEntries else { return }
    let now = mediaNow()
    // Timers scheduled by the handlers run on a later turn, so a handler that re-arms itself
    // for "now" cannot starve sockets.
    let limit = timers.nextID
    // `timers.firing` is the action while it runs (until the next `takeDue`).
    while let action = timers.takeDue(now: now, limit: limit) {
      action()
    }
  }

  /// `poll`'s timeout for a positive delay: whole microseconds (a day at most: deadlines
  /// further out are looked at again when the poll times out), rounded up to milliseconds so
  /// no timer fires early.
  static func pollMilliseconds(delay: MediaDuration) -> Int32 {
    let (seconds, rest) = delay.nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
    let microseconds = min(seconds, 86_400) * 1_000_000 + rest / 1_000
    return Int32(clamping: (microseconds + 999) / 1000)
  }
}

/// The loop thread's weak hold on its loop.
private final class EventLoopReference: Sendable {
  weak let loop: EventLoop?

  init(_ loop: EventLoop) { self.loop = loop }
}

/// `submit`'s hand-off: the body runs on the loop while the caller waits on `done`.
private final class EventLoopHandOff<Value, Failure: Error>: @unchecked Sendable {
  // @unchecked Sendable: `body` and `outcome` are written by the loop thread before `done` is
  // signalled and read by the caller only after it waited for `done` (the semaphore orders the
  // accesses); `body` does not escape `submit`, which waits for it.
  private var body: (() throws(Failure) -> Value)?
  private var outcome: Result<Value, Failure>?
  private let done = DispatchSemaphore(value: 0)

  init(_ body: @escaping () throws(Failure) -> Value) { self.body = body }

  func run() {
    outcome = evaluate()
    done.signal()
  }

  /// Runs the body once and lets go of it before the caller resumes: `withoutActuallyEscaping`
  /// checks that nothing holds it any more (the inbox may still hold this hand-off).
  private func evaluate() -> Result<Value, Failure>? {
    guard let body else { return nil }
    self.body = nil
    do throws(Failure) {
      return .success(try body())
    } catch {
      return .failure(error)
    }
  }

  func wait() throws(Failure) -> Value {
    done.wait()
    switch outcome {
    case .success(let value): return value
    case .failure(let error): throw error
    case nil: preconditionFailure("EventLoop.submit resumed without running its body")
    }
  }
}

/// A non-blocking pipe that wakes the loop thread from `poll`.
final class EventLoopWakePipe: Sendable {
  /// The end `poll` watches; -1 when the pipe could not be made (the loop then polls every
  /// millisecond).
  let readDescriptor: Int32
  private let writeDescriptor: Int32

  init() {
    var ends: [Int32] = [-1, -1]
    if pipe(&ends) == 0 {
      for end in ends {
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      }
      readDescriptor = ends[0]
      writeDescriptor = ends[1]
    } else {
      readDescriptor = -1
      writeDescriptor = -1
    }
  }

  /// Makes the read end readable (a full pipe is readable already).
  func signal() {
    guard writeDescriptor >= 0 else { return }
    var byte: UInt8 = 1
    _ = Glibc.write(writeDescriptor, &byte, 1)
  }

  /// Reads every pending byte.
  func drain() {
    guard readDescriptor >= 0 else { return }
    var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
    while withUnsafeMutableBytes(
      of: &bytes, { Glibc.read(readDescriptor, $0.baseAddress, $0.count) })
      > 0
    {}
  }

  deinit {
    if readDescriptor >= 0 { Glibc.close(readDescriptor) }
    if writeDescriptor >= 0 { Glibc.close(writeDescriptor) }
  }
}
