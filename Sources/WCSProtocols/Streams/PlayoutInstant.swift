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
  package static let origin = ContinuousClock.now
  /// `instant` as its offset from `origin`.
  package static func offset(of instant: ContinuousClock.Instant) -> Duration {
    origin.duration(to: instant)
  }

  /// The instant `offset` after `origin`.
  package static func instant(at offset: Duration) -> ContinuousClock.Instant {
    origin.advanced(by: offset)
  }
}
