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

/// A 16-bit sequence number (RTP, RFC 3550 §A.1; transport-wide, RFC 8888's draft) extended to
/// 64 bits: each number is placed on the side of the highest one so far that is nearer round
/// the 16-bit circle (RFC 1982, as `RTPSequenceNumber.distance`), so a wrap counts a cycle
/// (§A.1's `cycles`) and a packet reordered across it keeps the previous cycle.
///
/// The first number is placed one cycle up (`n + 65 536`): a packet reordered before it is
/// still positive, and older. Every receive-side core that orders packets extends through
/// this type (receive streams, the audio playout, the VP8 frame assembler, transport-wide
/// feedback and the bandwidth estimator, the relay's NACK tracker).
public struct RTPExtendedSequenceNumber: Equatable, Sendable {
  /// Where the first number goes: `n + firstCycle`.
  public static let firstCycle: Int64 = 0x1_0000

  /// The highest extended sequence number seen, or nil before the first number.
  public private(set) var highest: Int64?

  /// Creates a tracker that has seen no number.
  public init() {}

  /// Wraps of the 16-bit number since the first one's cycle.
  public var rolloverCount: Int64 { ((highest ?? Self.firstCycle) >> 16) - 1 }

  /// The extended form `extend` would give `sequenceNumber`, without recording it.
  @inline(__always)
  public func extended(_ sequenceNumber: UInt16) -> Int64 {
    guard let highest else { return Int64(sequenceNumber) + Self.firstCycle }
    return highest
      + Int64(
        RTPSequenceNumber.distance(from: UInt16(truncatingIfNeeded: highest), to: sequenceNumber))
  }

  /// Returns the extended form of `sequenceNumber` and makes it `highest` when it is newer.
  @inline(__always)
  public mutating func extend(_ sequenceNumber: UInt16) -> Int64 {
    let value = extended(sequenceNumber)
    record(value)
    return value
  }

  /// Makes `extended` (a value `extended(_:)` gave) `highest` when it is newer: for a caller
  /// that accepts a number only after looking at it.
  @inline(__always)
  public mutating func record(_ extended: Int64) {
    if highest.map({ extended > $0 }) ?? true { highest = extended }
  }

  /// Makes `extended` the highest number seen (the numbering starts over from it).
  public mutating func restart(at extended: Int64) {
    highest = extended
  }

  /// Forgets every number seen: the next one is placed as a first one.
  public mutating func reset() {
    highest = nil
  }
}
