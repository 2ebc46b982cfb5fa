@testable import WCSProtocols

/// The instant `microseconds` after the origin (0) of the congestion tests' clock: the tests
/// count time in whole microseconds, as the feedback's 250 µs ticks do.
func atMicroseconds(_ microseconds: Int64) -> MediaInstant {
  MediaInstant(nanoseconds: microseconds * 1_000)
}

extension PacketFeedback {
  /// `arrivalTime` in whole microseconds after the origin, as the tests count.
  var arrivalMicroseconds: Int64? { arrivalTime.map { $0.nanoseconds / 1_000 } }
}
