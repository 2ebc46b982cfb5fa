/// Reception statistics of one SSRC, kept as RFC 3550 Appendix A does: sequence validation and the
/// extended highest sequence number (§A.1), expected/lost counts and fraction lost (§A.3), and the
/// interarrival jitter (§A.8). Produces the report block of an SR or RR (§6.4.1).
public struct RTPReceiveStatistics: Sendable {
  /// A jump of more than this many sequence numbers ahead is suspicious (RFC 3550 §A.1 MAX_DROPOUT).
  static let maxDropout: UInt32 = 3000
  /// A packet more than this many behind is from a restarted source (§A.1 MAX_MISORDER).
  static let maxMisorder: UInt32 = 100

  /// SSRC of the source these statistics describe.
  public let ssrc: UInt32
  /// RTP clock rate of the source in Hz (90 000 video, 48 000 Opus).
  public let clockRate: Int

  /// Packets received, duplicates included (RFC 3550 §A.3 counts them; lost may go negative).
  public private(set) var packetsReceived: UInt32 = 0
  /// Interarrival jitter in RTP timestamp units, unrounded (RFC 3550 §A.8 `J`).
  public private(set) var jitter: Double = 0
  /// Times the source restarted its sequence numbering (a confirmed jump, RFC 3550 §A.1).
  public private(set) var restarts = 0
  /// The NTP timestamp of the last SR received from this source, if any.
  public private(set) var lastSenderReportNTP: NTPTimestamp?

  private var baseSequence: UInt32 = 0
  private var maxSequence: UInt16 = 0
  private var cycles: UInt32 = 0
  private var badSequence: UInt32 = 0x1_0001
  private var started = false
  private var lastTransit: Double?
  private var expectedPrior: UInt32 = 0
  private var receivedPrior: UInt32 = 0
  private var lastSenderReportArrival: MediaInstant?

  /// Creates statistics for `ssrc` at `clockRate` Hz.
  public init(ssrc: UInt32, clockRate: Int) {
    self.ssrc = ssrc
    self.clockRate = max(1, clockRate)
  }

  /// Extended highest sequence number received: cycles << 16 | highest (RFC 3550 §A.1).
  public var extendedHighestSequence: UInt32 { cycles | UInt32(maxSequence) }

  /// Packets expected from the first to the highest sequence number (RFC 3550 §A.3).
  public var packetsExpected: UInt32 {
    started ? extendedHighestSequence &- baseSequence &+ 1 : 0
  }

  /// Cumulative packets lost: expected − received (RFC 3550 §A.3), negative with duplicates.
  public var cumulativeLost: Int64 { Int64(packetsExpected) - Int64(packetsReceived) }

  /// Records one packet.
  ///
  /// - Parameters:
  ///   - sequenceNumber: the RTP header's sequence number.
  ///   - timestamp: the RTP header's timestamp (media clock).
  ///   - arrival: arrival time on the receiver's clock.
  ///   - isRetransmission: true for a packet restored from RTX; it counts as received but not in
  ///     the jitter, whose transit time it would distort.
  /// - Returns: false when the packet was rejected as out of sequence (a jump beyond the §A.1
  ///   limits that is not yet confirmed by a second, sequential packet).
  @discardableResult
  public mutating func record(
    sequenceNumber: UInt16, timestamp: UInt32, arrival: MediaInstant, isRetransmission: Bool = false
  ) -> Bool {
    guard started else {
      restart(at: sequenceNumber)
      packetsReceived = 1
      updateJitter(timestamp: timestamp, arrival: arrival, isRetransmission: isRetransmission)
      return true
    }
    let delta = UInt32(sequenceNumber &- maxSequence)
    if delta < Self.maxDropout {
      // In order, with a permissible gap.
      if sequenceNumber < maxSequence { cycles &+= 0x1_0000 }
      maxSequence = sequenceNumber
    } else if delta <= 0x1_0000 - Self.maxMisorder {
      // A very large jump: accept only when the next packet confirms it (source restarted).
      if UInt32(sequenceNumber) == badSequence {
        restart(at: sequenceNumber)
        restarts += 1
        packetsReceived = 0
        lastTransit = nil
      } else {
        badSequence = (UInt32(sequenceNumber) + 1) & 0xFFFF
        return false
      }
    }
    // Otherwise a duplicate or reordered packet: counted, highest unchanged.
    baseSequence = Self.baseSequence(baseSequence, cycles: cycles, afterLate: sequenceNumber)
    packetsReceived &+= 1
    updateJitter(timestamp: timestamp, arrival: arrival, isRetransmission: isRetransmission)
    return true
  }

  /// The base sequence number (RFC 3550 §A.1 `base_seq`) once `sequenceNumber` arrived behind
  /// the highest: moved back to it when it was sent before the first packet to arrive (a
  /// reordered start, fewer than 100 (MAX_MISORDER) before it, no wrap yet), so it counts as expected
  /// and not as an extra packet that makes the cumulative loss negative; else `base`.
  /// `base` and `cycles` are extended values (`cycles` a multiple of 2^16).
  public static func baseSequence(_ base: UInt32, cycles: UInt32, afterLate sequenceNumber: UInt16)
    -> UInt32
  {
    guard cycles == 0 else { return base }
    let before = UInt32(UInt16(truncatingIfNeeded: base) &- sequenceNumber)
    guard before > 0, before < maxMisorder, before <= base else { return base }
    return base - before
  }

  private mutating func restart(at sequenceNumber: UInt16) {
    started = true
    baseSequence = UInt32(sequenceNumber)
    maxSequence = sequenceNumber
    badSequence = 0x1_0001
    cycles = 0
    expectedPrior = 0
    receivedPrior = 0
  }

  /// RFC 3550 §A.8: D = difference of relative transit times, J += (|D| − J) / 16.
  private mutating func updateJitter(
    timestamp: UInt32, arrival: MediaInstant, isRetransmission: Bool
  ) {
    guard !isRetransmission else { return }
    // Transit in timestamp units; the arrival clock is scaled to the media clock. Only differences
    // of transit matter, so the 32-bit timestamp is reduced modulo 2^32 consistently.
    let arrivalUnits = arrival.seconds * Double(clockRate)
    let transit = arrivalUnits - Double(timestamp)
    if let lastTransit {
      var d = transit - lastTransit
      // A timestamp wrap between the two packets shows up as a jump of about 2^32.
      if d > 2_147_483_648 { d -= 4_294_967_296 } else if d < -2_147_483_648 { d += 4_294_967_296 }
      jitter += (abs(d) - jitter) / 16
    }
    lastTransit = transit
  }

  /// Records an SR from this source for the LSR/DLSR fields (RFC 3550 §6.4.1).
  public mutating func recordSenderReport(_ ntp: NTPTimestamp, arrival: MediaInstant) {
    lastSenderReportNTP = ntp
    lastSenderReportArrival = arrival
  }

  /// Builds the report block for this source and starts a new reporting interval.
  ///
  /// fraction lost = 256 × lost in interval / expected in interval (0 when none lost or duplicates
  /// outnumber losses, §A.3); jitter truncated to an integer; DLSR in 1/65536 s since the last SR.
  public mutating func makeReportBlock(now: MediaInstant) -> RTCPReportBlock {
    let expected = packetsExpected
    let expectedInterval = Int64(expected) - Int64(expectedPrior)
    let receivedInterval = Int64(packetsReceived) - Int64(receivedPrior)
    expectedPrior = expected
    receivedPrior = packetsReceived
    let lostInterval = expectedInterval - receivedInterval
    let fraction: UInt8 =
      expectedInterval == 0 || lostInterval <= 0
      ? 0 : UInt8(min(255, (lostInterval << 8) / expectedInterval))
    let lost = Int32(min(max(cumulativeLost, -0x80_0000), 0x7F_FFFF))
    var dlsr: UInt32 = 0
    if let lastSenderReportArrival {
      dlsr = UInt32(
        min(max(0, (now - lastSenderReportArrival).seconds * 65_536), Double(UInt32.max)))
    }
    return RTCPReportBlock(
      ssrc: ssrc, fractionLost: fraction, packetsLost: lost,
      highestSequence: extendedHighestSequence, jitter: UInt32(min(jitter, Double(UInt32.max))),
      lastSenderReport: lastSenderReportNTP?.middle32 ?? 0, delaySinceLastSenderReport: dlsr)
  }
}
