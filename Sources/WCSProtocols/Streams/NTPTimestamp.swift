import Foundation

/// A 64-bit NTP timestamp: seconds since 1 January 1900 in the high 32 bits, the fraction of a
/// second in the low 32 bits (RFC 3550 §4, RFC 5905 §6).
public struct NTPTimestamp: Equatable, Hashable, Sendable {
  /// Seconds from the NTP era (1900) to the Unix epoch (1970).
  public static let unixEpochOffset: UInt64 = 2_208_988_800

  /// The wire value: seconds << 32 | fraction.
  public var value: UInt64

  /// Wraps a wire value.
  public init(value: UInt64) { self.value = value }

  /// The NTP time of `seconds` since 1900 (negative values clamp to 0).
  public init(seconds: Double) {
    let clamped = max(0, seconds)
    let whole = UInt64(clamped)
    let fraction = UInt64((clamped - Double(whole)) * 4_294_967_296)
    value = whole << 32 | min(fraction, 0xFFFF_FFFF)
  }

  /// The NTP time of a wall-clock date (what a driver passes when it creates a send stream).
  public init(date: Date) {
    self.init(seconds: date.timeIntervalSince1970 + Double(Self.unixEpochOffset))
  }

  /// Seconds since 1900 as a floating-point number.
  public var seconds: Double { Double(value >> 32) + Double(value & 0xFFFF_FFFF) / 4_294_967_296 }

  /// The middle 32 bits, the "LSR" form used in report blocks (RFC 3550 §6.4.1), units 1/65536 s.
  public var middle32: UInt32 { UInt32(truncatingIfNeeded: value >> 16) }

  /// This time moved by `duration` (which may be negative).
  public func advanced(by duration: MediaDuration) -> NTPTimestamp {
    NTPTimestamp(seconds: seconds + duration.seconds)
  }
}
