/// One reception report block of an SR or RR (RFC 3550 §6.4.1), 24 octets.
public struct RTCPReportBlock: Equatable, Sendable {
  /// SSRC of the source this block reports on.
  public var ssrc: UInt32
  /// Fraction of packets lost since the previous report, in 1/256 units.
  public var fractionLost: UInt8
  /// Cumulative packets lost (24-bit signed; negative with duplicates).
  public var packetsLost: Int32
  /// Extended highest sequence number received (cycles << 16 | highest).
  public var highestSequence: UInt32
  /// Interarrival jitter in RTP timestamp units.
  public var jitter: UInt32
  /// Last SR timestamp: middle 32 bits of the NTP timestamp of the last SR (0 = none).
  public var lastSenderReport: UInt32
  /// Delay since last SR, in 1/65536 seconds.
  public var delaySinceLastSenderReport: UInt32

  /// Creates a report block with the given fields.
  public init(
    ssrc: UInt32, fractionLost: UInt8 = 0, packetsLost: Int32 = 0, highestSequence: UInt32,
    jitter: UInt32 = 0, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0
  ) {
    self.ssrc = ssrc
    self.fractionLost = fractionLost
    self.packetsLost = packetsLost
    self.highestSequence = highestSequence
    self.jitter = jitter
    self.lastSenderReport = lastSenderReport
    self.delaySinceLastSenderReport = delaySinceLastSenderReport
  }

  static let length = 24

  /// The round-trip time this block gives for a report arriving at `arrival` (the middle 32
  /// bits of the NTP timestamp of the arrival, RFC 3550 §4): A − LSR − DLSR, in 1/65536 s
  /// (RFC 3550 §6.4.1). Nil when the block names no SR (LSR 0) or the result is negative (clock
  /// skew, a bogus DLSR), which wraps to 2³¹ units or more.
  public func roundTripTime(arrival: UInt32) -> MediaDuration? {
    guard lastSenderReport != 0 else { return nil }
    let units = arrival &- lastSenderReport &- delaySinceLastSenderReport
    guard units < 0x8000_0000 else { return nil }
    return .nanoseconds(Int64(units) * 1_000_000_000 / 65_536)
  }

  static func parse(_ reader: inout ByteReader) -> RTCPReportBlock? {
    guard let ssrc = reader.readUInt32(), let lossWord = reader.readUInt32(),
      let highest = reader.readUInt32(), let jitter = reader.readUInt32(),
      let lsr = reader.readUInt32(), let dlsr = reader.readUInt32()
    else { return nil }
    // Sign-extend the 24-bit cumulative loss.
    let lost = Int32(bitPattern: lossWord << 8) >> 8
    return RTCPReportBlock(
      ssrc: ssrc, fractionLost: UInt8(lossWord >> 24), packetsLost: lost,
      highestSequence: highest, jitter: jitter, lastSenderReport: lsr,
      delaySinceLastSenderReport: dlsr)
  }

  func append(to bytes: inout [UInt8]) {
    bytes.appendUInt32(ssrc)
    let clamped = min(max(packetsLost, -0x80_0000), 0x7F_FFFF)
    bytes.appendUInt32(UInt32(fractionLost) << 24 | UInt32(bitPattern: clamped) & 0xFF_FFFF)
    bytes.appendUInt32(highestSequence)
    bytes.appendUInt32(jitter)
    bytes.appendUInt32(lastSenderReport)
    bytes.appendUInt32(delaySinceLastSenderReport)
  }
}
