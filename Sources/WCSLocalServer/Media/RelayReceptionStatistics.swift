import WCSProtocols

/// What we received from one publisher SSRC, for the report block of our receiver report
/// (RFC 3550 §6.4.1, algorithms of Appendix A.1, A.3 and A.8). One thread.
struct RelayReceptionStatistics {
  /// The publisher's SSRC.
  let ssrc: UInt32
  /// RTP clock rate of the stream, Hz (jitter is in these units).
  let clockRate: Int
  private var baseSequence: UInt32 = 0
  private var cycles: UInt32 = 0
  private var maxSequence: UInt16 = 0
  private var started = false
  private(set) var received: UInt32 = 0
  private var expectedPrior: UInt32 = 0
  private var receivedPrior: UInt32 = 0
  private var jitter: Double = 0
  private var lastTransit: Double?
  /// Middle 32 bits of the newest SR's NTP timestamp and when (ms) it arrived.
  private var lastSenderReport: (middle: UInt32, arrivedAt: MediaInstant)?

  init(ssrc: UInt32, clockRate: Int) {
    self.ssrc = ssrc
    self.clockRate = clockRate
  }

  /// One packet with `sequenceNumber` and `timestamp` arrived at `now`; a `retransmitted`
  /// one counts as received but its transit time (a NACK round trip late) stays out of the
  /// jitter.
  mutating func record(
    sequenceNumber: UInt16, timestamp: UInt32, now: MediaInstant, retransmitted: Bool = false
  ) {
    if !started {
      started = true
      baseSequence = UInt32(sequenceNumber)
      maxSequence = sequenceNumber
    } else {
      let delta = sequenceNumber &- maxSequence
      if delta < 0x8000 {
        if sequenceNumber < maxSequence { cycles &+= 1 << 16 }
        maxSequence = sequenceNumber
      } else {
        baseSequence = RTPReceiveStatistics.baseSequence(
          baseSequence, cycles: cycles, afterLate: sequenceNumber)
      }
    }
    received &+= 1
    guard !retransmitted else { return }
    // A.8: transit time in RTP units; only differences matter, so any epoch works.
    let arrival = now.seconds * Double(clockRate)
    let transit = arrival - Double(timestamp)
    if let lastTransit {
      var difference = transit - lastTransit
      // Timestamp wrap shows as a jump of ~2^32; ignore such samples.
      if abs(difference) > Double(UInt32.max / 2) { difference = 0 }
      jitter += (abs(difference) - jitter) / 16
    }
    lastTransit = transit
  }

  /// The publisher's SR arrived at `now`: remembered for LSR/DLSR.
  mutating func senderReportReceived(ntpTimestamp: UInt64, now: MediaInstant) {
    lastSenderReport = (UInt32(truncatingIfNeeded: ntpTimestamp >> 16), now)
  }

  /// The report block for our next RR, `nil` before the first packet. Resets the interval
  /// counters behind the fraction lost.
  mutating func reportBlock(now: MediaInstant) -> RTCPReportBlock? {
    guard started else { return nil }
    let extendedMax = cycles &+ UInt32(maxSequence)
    let expected = extendedMax &- baseSequence &+ 1
    let lost = Int64(expected) - Int64(received)
    let expectedInterval = expected &- expectedPrior
    let receivedInterval = received &- receivedPrior
    expectedPrior = expected
    receivedPrior = received
    let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
    let fraction: UInt8 =
      expectedInterval == 0 || lostInterval <= 0
      ? 0 : UInt8(clamping: (lostInterval << 8) / Int64(expectedInterval))
    var lastSR: UInt32 = 0
    var delay: UInt32 = 0
    if let report = lastSenderReport {
      lastSR = report.middle
      // DLSR in 1/65536 s.
      delay = UInt32(clamping: Int64(max(0, (now - report.arrivedAt).seconds) * 65536))
    }
    return RTCPReportBlock(
      ssrc: ssrc, fractionLost: fraction,
      packetsLost: Int32(clamping: min(max(lost, -0x80_0000), 0x7F_FFFF)),
      highestSequence: extendedMax, jitter: UInt32(jitter.rounded()), lastSenderReport: lastSR,
      delaySinceLastSenderReport: delay)
  }
}
