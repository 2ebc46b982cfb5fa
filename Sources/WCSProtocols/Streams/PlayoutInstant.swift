/// Instants of the continuous clock as `Duration`s from one origin, for times the play path
/// keeps per packet, frame or turn (render statistics, playout deadlines, held frames).
///
/// `ContinuousClock.Instant` is resilient (its layout is not known outside the standard
/// library), so every copy, optional, comparison or struct holding one goes through runtime
/// calls: value witnesses, generic metadata looked up by mangled name, `Comparable` witnesses.
/// A `Duration` is two words handled inline. Exact both ways: the offset is the instant's
/// attoseconds minus the origin's, and an instant is the origin advanced by its offset, so
/// differences, order and equality are those of the instants.
package enum PlayoutInstant {
  /// Any instant serves; this one is read once, at the first use.
  static let origin = ContinuousClock.now
  /// `origin` in attoseconds since `ContinuousClock.systemEpoch`, so a clock read
  /// (`ContinuousClockReading`) becomes an offset with one subtraction.
  private static let originSinceEpoch = ContinuousClockReading.attosecondsSinceEpoch(of: origin)

  /// Now as an offset from `origin`: `offset(of: ContinuousClockReading.now())`, exactly (the
  /// instant is the epoch advanced by the reading, the offset that instant less the origin),
  /// without a resilient instant made and measured against the origin. The audio turn reads
  /// the clock two or three times through this (`AudioReceiveTrack`, `PlayoutSync`).
  package static func now() -> Duration {
    Duration(attoseconds: ContinuousClockReading.attosecondsSinceEpoch() - originSinceEpoch)
  }

  /// `instant` as its offset from `origin`.
  package static func offset(of instant: ContinuousClock.Instant) -> Duration {
    origin.duration(to: instant)
  }

  /// The instant `offset` after `origin`.
  package static func instant(at offset: Duration) -> ContinuousClock.Instant {
    origin.advanced(by: offset)
  }
}
