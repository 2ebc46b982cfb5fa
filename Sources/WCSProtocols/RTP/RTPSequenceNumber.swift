/// Wrap-aware arithmetic on 16-bit RTP sequence numbers (RFC 3550 §A.1, RFC 1982 serial numbers).
public enum RTPSequenceNumber {
  /// True when `a` comes after `b` modulo 2^16 (less than half the space ahead).
  public static func isNewer(_ a: UInt16, than b: UInt16) -> Bool {
    a != b && a &- b < 0x8000
  }

  /// Signed distance from `b` to `a`, in -32768...32767 (positive when `a` is newer).
  public static func distance(from b: UInt16, to a: UInt16) -> Int {
    Int(Int16(bitPattern: a &- b))
  }
}

/// Extends 16-bit sequence numbers to 32 bits by counting wraps (RFC 3550 §A.1 "cycles";
/// the SRTP rollover counter of RFC 3711 §3.3.1).
public struct RTPExtendedSequenceNumber: Equatable, Sendable {
  /// The highest extended sequence number seen, or nil before the first packet.
  public private(set) var highest: UInt32?

  /// Creates a tracker that has seen no packet.
  public init() {}

  /// Wraps of the 16-bit number so far (the high 16 bits of `highest`).
  public var rolloverCount: UInt16 { UInt16(truncatingIfNeeded: (highest ?? 0) >> 16) }

  /// Returns the 32-bit extended form of `sequenceNumber` and advances `highest` when it is newer.
  ///
  /// A packet from just before a wrap (reordered) gets the previous rollover count.
  public mutating func extend(_ sequenceNumber: UInt16) -> UInt32 {
    guard let highest else {
      self.highest = UInt32(sequenceNumber)
      return UInt32(sequenceNumber)
    }
    let delta = RTPSequenceNumber.distance(
      from: UInt16(truncatingIfNeeded: highest), to: sequenceNumber)
    let extended = Int64(highest) + Int64(delta)
    guard extended >= 0 else { return UInt32(sequenceNumber) }
    guard extended <= Int64(UInt32.max) else { return UInt32(truncatingIfNeeded: extended) }
    if extended > Int64(highest) { self.highest = UInt32(extended) }
    return UInt32(extended)
  }
}
