import Glibc

/// A point on the monotonic clock, in nanoseconds since the continuous clock's epoch
/// (`CLOCK_BOOTTIME`, the clock `ContinuousClock` reads on Linux): the one `now` every Sans-I/O
/// core of the media stack takes.
///
/// A trivial value (one `Int64`): copies, comparisons and arithmetic are inline, where
/// `ContinuousClock.Instant` is resilient and `Duration` is 128-bit. The driver reads the clock
/// once per event-loop wake-up (`now()`) and passes that value down; `ContinuousClock` and
/// `Duration` appear only at the public API (`init(_:)`, `continuousInstant`).
public struct MediaInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// Nanoseconds since the clock's epoch (boot).
  public var nanoseconds: Int64

  /// The instant `nanoseconds` after the clock's epoch.
  @inline(__always)
  public init(nanoseconds: Int64) {
    self.nanoseconds = nanoseconds
  }

  /// The same point as a `ContinuousClock` instant (truncated to whole nanoseconds, the
  /// resolution of the kernel's clock; saturated to `distantPast...distantFuture`).
  public init(_ instant: ContinuousClock.Instant) {
    let attoseconds = Self.epoch.duration(to: instant).attoseconds
    nanoseconds = Int64(clamping: attoseconds / 1_000_000_000)
  }

  /// This point as a `ContinuousClock` instant, exactly.
  public var continuousInstant: ContinuousClock.Instant {
    Self.epoch.advanced(by: MediaDuration(nanoseconds: nanoseconds).duration)
  }

  /// `ContinuousClock`'s epoch, kept: made per use, the resilient clock costs metadata look-ups.
  private static let epoch = ContinuousClock().systemEpoch

  /// Now: one `clock_gettime(CLOCK_BOOTTIME)`, the value `ContinuousClock.now` gives, without
  /// the runtime's path to it (which ran cold on almost every loop wake-up).
  public static func now() -> MediaInstant {
    var time = timespec()
    // Fails only for a bad clock id or address (EINVAL/EFAULT); a zero time is no crash either.
    _ = clock_gettime(CLOCK_BOOTTIME, &time)
    return MediaInstant(nanoseconds: Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec))
  }

  /// Later than every instant a clock gives (about 292 years after boot): "never" for a deadline.
  public static let distantFuture = MediaInstant(nanoseconds: .max)
  /// Earlier than every instant a clock gives.
  public static let distantPast = MediaInstant(nanoseconds: .min)

  /// Seconds since the clock's epoch (exact to the nanosecond below about 104 days of uptime,
  /// then to a few nanoseconds), for cores whose arithmetic is on `Double` seconds.
  @inline(__always)
  public var seconds: Double { Double(nanoseconds) / 1e9 }

  /// The instant `seconds` after the clock's epoch, rounded to the nearest nanosecond and
  /// saturated to `distantPast...distantFuture` (NaN: the epoch).
  public init(seconds: Double) {
    self.init(nanoseconds: MediaDuration.saturatingNanoseconds(seconds * 1e9))
  }

  /// The instant `value` milliseconds after the clock's epoch, for drivers that count in
  /// milliseconds (saturating).
  public static func milliseconds(_ value: Int64) -> MediaInstant {
    MediaInstant(nanoseconds: MediaDuration.milliseconds(Int(value)).nanoseconds)
  }

  /// Milliseconds since the clock's epoch, rounded up: a deadline in milliseconds that is never
  /// before this instant.
  public var millisecondsRoundingUp: Int64 {
    let (whole, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000)
    return rest > 0 ? whole + 1 : whole
  }

  public static func < (lhs: MediaInstant, rhs: MediaInstant) -> Bool {
    lhs.nanoseconds < rhs.nanoseconds
  }

  /// The instant `duration` later (saturating at `distantPast`/`distantFuture`).
  @inline(__always)
  public static func + (lhs: MediaInstant, rhs: MediaDuration) -> MediaInstant {
    let (sum, overflow) = lhs.nanoseconds.addingReportingOverflow(rhs.nanoseconds)
    guard !overflow else { return rhs.nanoseconds > 0 ? .distantFuture : .distantPast }
    return MediaInstant(nanoseconds: sum)
  }

  /// The instant `duration` earlier (saturating).
  @inline(__always)
  public static func - (lhs: MediaInstant, rhs: MediaDuration) -> MediaInstant {
    let (difference, overflow) = lhs.nanoseconds.subtractingReportingOverflow(rhs.nanoseconds)
    guard !overflow else { return rhs.nanoseconds < 0 ? .distantFuture : .distantPast }
    return MediaInstant(nanoseconds: difference)
  }

  /// How long after `rhs` this is (negative when earlier; saturating).
  @inline(__always)
  public static func - (lhs: MediaInstant, rhs: MediaInstant) -> MediaDuration {
    let (difference, overflow) = lhs.nanoseconds.subtractingReportingOverflow(rhs.nanoseconds)
    guard !overflow else { return lhs > rhs ? .max : .min }
    return MediaDuration(nanoseconds: difference)
  }

  public static func += (lhs: inout MediaInstant, rhs: MediaDuration) { lhs = lhs + rhs }
  public static func -= (lhs: inout MediaInstant, rhs: MediaDuration) { lhs = lhs - rhs }

  public var description: String { "MediaInstant(\(MediaDuration(nanoseconds: nanoseconds)))" }
}

/// A span of monotonic time in nanoseconds (negative: backwards): the arithmetic of
/// `MediaInstant`, a trivial `Int64` where `Duration` is 128-bit. About ±292 years; the
/// operations saturate there instead of trapping.
public struct MediaDuration: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// Nanoseconds.
  public var nanoseconds: Int64

  /// A duration of `nanoseconds`.
  @inline(__always)
  public init(nanoseconds: Int64) {
    self.nanoseconds = nanoseconds
  }

  /// `duration` truncated to whole nanoseconds (saturated beyond ±292 years).
  public init(_ duration: Duration) {
    let nanoseconds = duration.attoseconds / 1_000_000_000
    self.nanoseconds = Int64(clamping: nanoseconds)
  }

  /// This duration as a `Duration`, exactly (made from attoseconds: `Duration.nanoseconds(_:)`
  /// is generic).
  public var duration: Duration { Duration(attoseconds: Int128(nanoseconds) * 1_000_000_000) }

  /// Zero.
  public static let zero = MediaDuration(nanoseconds: 0)
  /// The longest duration.
  public static let max = MediaDuration(nanoseconds: .max)
  /// The most negative duration.
  public static let min = MediaDuration(nanoseconds: .min)

  /// `value` nanoseconds.
  public static func nanoseconds(_ value: Int64) -> MediaDuration {
    MediaDuration(nanoseconds: value)
  }
  /// `value` microseconds (saturating).
  public static func microseconds(_ value: Int) -> MediaDuration {
    MediaDuration(nanoseconds: Int64(value).multipliedSaturating(by: 1_000))
  }
  /// `value` milliseconds (saturating).
  public static func milliseconds(_ value: Int) -> MediaDuration {
    MediaDuration(nanoseconds: Int64(value).multipliedSaturating(by: 1_000_000))
  }
  /// `value` seconds (saturating).
  public static func seconds(_ value: Int) -> MediaDuration {
    MediaDuration(nanoseconds: Int64(value).multipliedSaturating(by: 1_000_000_000))
  }
  /// `value` seconds, rounded to the nearest nanosecond (saturating; NaN: zero).
  public static func seconds(_ value: Double) -> MediaDuration {
    MediaDuration(nanoseconds: saturatingNanoseconds(value * 1e9))
  }

  /// This duration in seconds, correctly rounded (a division, not a multiplication by 1e-9,
  /// which is inexact: 300 ms would read 0.30000000000000004 s).
  @inline(__always)
  public var seconds: Double { Double(nanoseconds) / 1e9 }
  /// This duration in whole microseconds, truncated toward zero.
  public var microseconds: Int64 { nanoseconds / 1_000 }
  /// This duration in whole milliseconds, truncated toward zero.
  public var milliseconds: Int64 { nanoseconds / 1_000_000 }

  /// `value` (nanoseconds) rounded to the nearest and clamped to `Int64`; NaN gives zero.
  static func saturatingNanoseconds(_ value: Double) -> Int64 {
    guard !value.isNaN else { return 0 }
    guard value < 9.223_372_036_854_775e18 else { return .max }
    guard value > -9.223_372_036_854_775e18 else { return .min }
    return Int64(value.rounded())
  }

  public static func < (lhs: MediaDuration, rhs: MediaDuration) -> Bool {
    lhs.nanoseconds < rhs.nanoseconds
  }

  @inline(__always)
  public static func + (lhs: MediaDuration, rhs: MediaDuration) -> MediaDuration {
    MediaDuration(nanoseconds: lhs.nanoseconds.addingSaturating(rhs.nanoseconds))
  }

  @inline(__always)
  public static func - (lhs: MediaDuration, rhs: MediaDuration) -> MediaDuration {
    MediaDuration(nanoseconds: lhs.nanoseconds.subtractingSaturating(rhs.nanoseconds))
  }

  public static prefix func - (value: MediaDuration) -> MediaDuration {
    MediaDuration(nanoseconds: Int64(0).subtractingSaturating(value.nanoseconds))
  }

  public static func * (lhs: MediaDuration, rhs: Int) -> MediaDuration {
    MediaDuration(nanoseconds: lhs.nanoseconds.multipliedSaturating(by: Int64(rhs)))
  }

  public static func * (lhs: MediaDuration, rhs: Double) -> MediaDuration {
    MediaDuration(nanoseconds: saturatingNanoseconds(Double(lhs.nanoseconds) * rhs))
  }

  /// How many times `rhs` fits in `lhs`, truncated toward zero (`rhs` must not be zero).
  public static func / (lhs: MediaDuration, rhs: MediaDuration) -> Int {
    Int(lhs.nanoseconds / rhs.nanoseconds)
  }

  public static func / (lhs: MediaDuration, rhs: Int) -> MediaDuration {
    MediaDuration(nanoseconds: lhs.nanoseconds / Int64(rhs))
  }

  public static func += (lhs: inout MediaDuration, rhs: MediaDuration) { lhs = lhs + rhs }
  public static func -= (lhs: inout MediaDuration, rhs: MediaDuration) { lhs = lhs - rhs }

  public var description: String { duration.description }
}

extension Int64 {
  @inline(__always)
  fileprivate func addingSaturating(_ other: Int64) -> Int64 {
    let (value, overflow) = addingReportingOverflow(other)
    return overflow ? (other > 0 ? .max : .min) : value
  }

  @inline(__always)
  fileprivate func subtractingSaturating(_ other: Int64) -> Int64 {
    let (value, overflow) = subtractingReportingOverflow(other)
    return overflow ? (other < 0 ? .max : .min) : value
  }

  @inline(__always)
  fileprivate func multipliedSaturating(by other: Int64) -> Int64 {
    let (value, overflow) = multipliedReportingOverflow(by: other)
    return overflow ? ((self < 0) == (other < 0) ? .max : .min) : value
  }
}
