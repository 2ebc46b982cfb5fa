import Dispatch
import Foundation
import Synchronization

/// The time of `clock` in seconds (`clock_gettime`): `CLOCK_PROCESS_CPUTIME_ID` for the CPU of
/// all the process's threads, `CLOCK_THREAD_CPUTIME_ID` for the calling thread's (the fairer
/// figure on a shared machine), `CLOCK_MONOTONIC` for wall time.
public func clockSeconds(_ clock: clockid_t) -> Double {
  var time = timespec()
  clock_gettime(clock, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Calls a completion-handler API and waits for its value.
public func wait<T: Sendable>(_ body: (@escaping @Sendable (T) -> Void) -> Void) -> T {
  let box = Mutex<T?>(nil)
  let done = DispatchSemaphore(value: 0)
  body { value in
    box.withLock { $0 = value }
    done.signal()
  }
  done.wait()
  guard let value = box.withLock({ $0 }) else { fatalError("completion without a value") }
  return value
}

extension Duration {
  /// This duration in seconds, for printing and averaging figures.
  public var seconds: Double {
    Double(components.seconds) + Double(components.attoseconds) * 1e-18
  }

  /// This duration in milliseconds.
  public var milliseconds: Double { seconds * 1000 }
}
