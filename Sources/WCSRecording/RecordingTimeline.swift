/// Turns one track's 32-bit RTP timestamps into a 64-bit timeline that starts at 0.
///
/// RTP timestamps start at a random value and wrap at 2^32 (RFC 3550 §5.1); consecutive packets
/// are assumed to be less than 2^31 ticks apart, so the signed 32-bit difference to the previous
/// timestamp is the true step (negative for a packet that arrived late).
public struct RecordingTimeline: Sendable {
  private var last: UInt32?
  private var extended: Int64 = 0

  /// A timeline whose 0 is the first timestamp given.
  public init() {}

  /// The position of `timestamp` in clock ticks since the first timestamp given (which is 0).
  /// Earlier timestamps than the previous one give smaller, possibly negative, values.
  public mutating func ticks(for timestamp: UInt32) -> Int64 {
    guard let last else {
      self.last = timestamp
      return 0
    }
    let step = Int64(Int32(bitPattern: timestamp &- last))
    extended += step
    self.last = timestamp
    return extended
  }
}
