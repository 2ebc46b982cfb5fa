import WCSEventLoop
import WCSProtocols

// The clock read of `PlayoutInstant` lives with the engine that reads it (the audio turn and
// the lip sync); the cores only convert instants to offsets and back.
extension PlayoutInstant {
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
}
