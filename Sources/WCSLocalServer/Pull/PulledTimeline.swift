/// When a pulled source's media time must be tied again to our clock: at its first packet, and
/// when its packets' times stop following the time they arrive at (a source that restarted its
/// clock, a seek, a long stall), by more than `maxJump`. Between those the relay extrapolates
/// the source's time from the one anchor (`RelaySourceClock`), which keeps audio and video as
/// aligned as their pts however unevenly the packets arrive.
struct PulledTimeline: Sendable {
  /// Largest drift between media time and arrival time that keeps the anchor, microseconds.
  static let maxJump: Int64 = 1_000_000

  /// Media time and arrival time (microseconds, monotonic) of the anchor.
  private(set) var anchor: (media: Int64, arrival: UInt64)?

  /// Takes a packet of media time `media` arriving at `arrival`; true when it becomes the new
  /// anchor (the relay's clock must be set again).
  mutating func observe(_ media: Int64, at arrival: UInt64) -> Bool {
    if let anchor {
      // Times the source chose may lie anywhere in Int64 (a pts `av_rescale_q` could not
      // represent is Int64.min): a difference that overflows is a jump, not a wrapped drift.
      let elapsed = Int64(clamping: arrival &- anchor.arrival)
      let (delta, overflow) = media.subtractingReportingOverflow(anchor.media)
      let (drift, under) = delta.subtractingReportingOverflow(elapsed)
      guard overflow || under || drift.magnitude > Self.maxJump.magnitude else { return false }
    }
    anchor = (media, arrival)
    return true
  }
}
