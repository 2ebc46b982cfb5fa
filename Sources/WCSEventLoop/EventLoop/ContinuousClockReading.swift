import Glibc

/// `ContinuousClock.now` read straight from the kernel: the same clock (`CLOCK_BOOTTIME`, which
/// the Swift runtime's `swift_get_time` reads for the continuous clock on Linux) and the same
/// value (seconds and nanoseconds as attoseconds from `ContinuousClock.systemEpoch`), without
/// the runtime's path to it (`ContinuousClock.now`, `swift_get_time`, the `Duration` made from
/// seconds and nanoseconds).
///
/// Why: the play path reads the clock several times per loop wake-up (the due timers, the
/// poll, the audio turn, the lip sync, the sleep), and between two packets the caches are
/// evicted, so the runtime's path ran cold on almost every wake-up: ≈ 15 code lines a packet
/// (`scripts/play-cache-misses.sh`). The two are checked against each other by
/// `ContinuousClockReadingTests`.
package enum ContinuousClockReading {
  /// `ContinuousClock.systemEpoch`, kept: made per read, the resilient clock and instant cost
  /// metadata look-ups and value-witness calls.
  private static let epoch = ContinuousClock().systemEpoch

  /// Now, in attoseconds since `ContinuousClock.systemEpoch`.
  package static func attosecondsSinceEpoch() -> Int128 {
    var time = timespec()
    // Never fails for a valid clock id and address (EINVAL/EFAULT only); the zero time it
    // would leave is not a crash either.
    _ = clock_gettime(CLOCK_BOOTTIME, &time)
    // Wrapping operations, exact here: |seconds| < 2^63, so the product stays below 2^123.
    return Int128(time.tv_sec) &* 1_000_000_000_000_000_000 &+ Int128(time.tv_nsec)
      &* 1_000_000_000
  }

  /// Now on the continuous clock: the instant `ContinuousClock.now` would give.
  package static func now() -> ContinuousClock.Instant {
    epoch.advanced(by: Duration(attoseconds: attosecondsSinceEpoch()))
  }

  /// `instant` in attoseconds since `ContinuousClock.systemEpoch`.
  package static func attosecondsSinceEpoch(of instant: ContinuousClock.Instant) -> Int128 {
    epoch.duration(to: instant).attoseconds
  }
}
