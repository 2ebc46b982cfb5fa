import Foundation

/// CPU time of the calling thread (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), for the codec
/// time counters: how much of a pipeline's CPU went into libvpx and libopus themselves, so the
/// rest (the SDK's own work) can be told apart under the same conditions.
package enum CodecCPUTime {
  /// Seconds of CPU the calling thread has used so far.
  package static func threadSeconds() -> Double {
    var time = timespec()
    guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return 0 }
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
  }

  /// Runs `body` and adds the CPU seconds it used on this thread to `total`; rethrows what
  /// `body` throws (the time is counted either way).
  package static func measure<Value, Failure: Error>(
    into total: inout Double, _ body: () throws(Failure) -> Value
  ) throws(Failure) -> Value {
    let start = threadSeconds()
    defer { total += threadSeconds() - start }
    return try body()
  }
}
