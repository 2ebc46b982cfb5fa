/// A time on a media clock: `ticks` of `1 / clockRate` s, as an RTP timestamp counts them
/// (RFC 3550 §5.1: 90 000 Hz for video, 48 000 Hz for Opus), extended to 64 bits.
///
/// Where an RTP timestamp becomes time (playout, jitter, lip sync) it goes through this type,
/// so the division by the clock rate is written once.
public struct MediaTime: Sendable, Hashable {
  /// Ticks of the media clock.
  public var ticks: Int64
  /// Ticks per second (> 0).
  public let clockRate: Int64

  /// `ticks` of a clock of `clockRate` Hz (a rate below 1 is taken as 1).
  @inline(__always)
  public init(ticks: Int64, clockRate: Int) {
    self.ticks = ticks
    self.clockRate = Int64(Swift.max(1, clockRate))
  }

  /// `duration` on a clock of `clockRate` Hz, truncated to whole ticks.
  public init(_ duration: MediaDuration, clockRate: Int) {
    let rate = Int64(Swift.max(1, clockRate))
    let (whole, rest) = duration.nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
    self.init(ticks: whole * rate + rest * rate / 1_000_000_000, clockRate: clockRate)
  }

  /// This time in seconds.
  @inline(__always)
  public var seconds: Double { Double(ticks) / Double(clockRate) }

  /// This time as a duration from tick zero, truncated to whole nanoseconds.
  public var duration: MediaDuration {
    let (whole, rest) = ticks.quotientAndRemainder(dividingBy: clockRate)
    return .nanoseconds(whole * 1_000_000_000 + rest * 1_000_000_000 / clockRate)
  }

  /// The same time on a clock of `clockRate` Hz, truncated to whole ticks.
  public func converted(toClockRate clockRate: Int) -> MediaTime {
    MediaTime(duration, clockRate: clockRate)
  }
}
