/// The receive side of one remote audio source (Opus, RFC 7587): validates packets, keeps RFC
/// 3550 statistics, hands every new packet out on arrival (the audio receiver orders and
/// schedules playout itself), drops duplicates, and sends receiver reports (RFC 3550 §6.4.2).
/// Audio is not repaired by retransmission here: no NACK, RTX or PLI (Opus conceals loss).
///
/// Sans-I/O: the driver calls `receive(_:now:)` for each SRTP-unprotected packet of the SSRC,
/// `handleSenderReport(_:now:)` for its SRs and `poll(now:)` at `nextDeadline`, and hands the
/// returned packets back with `recycle` once delivered.
public struct AudioReceiveStream: Sendable {
  /// Identity, statistics, counters and reports.
  public private(set) var source: RTPReceiveSource
  /// Drops duplicates and marks what was handed out (in pass-through: nothing stays held).
  public private(set) var jitterBuffer: JitterBuffer
  /// Empty, with the storage `recycle` handed back.
  private var spareOutputPackets: [ReceivedRTPPacket] = []

  /// Creates the stream at `now` (its first report is due one `reportInterval` later).
  public init(configuration: RTPReceiveSource.Configuration, now: MediaInstant) {
    source = RTPReceiveSource(configuration: configuration, now: now)
    jitterBuffer = JitterBuffer(clockRate: configuration.clockRate)
  }

  /// Takes one parsed RTP packet that arrived at `now`: the packets to hand to the audio track
  /// now (this one, or none for a duplicate or a packet §A.1 validation rejects). A packet of
  /// another SSRC or payload type is counted in `source.counters.malformedPackets` and its
  /// error returned.
  public mutating func receive(_ packet: consuming RTPPacket, now: MediaInstant) -> Result<
    RTPReceiveSource.Output, RTPStreamError
  > {
    source.lastPacketAt = now
    if let error = source.rejection(of: packet.header) { return .failure(error) }
    guard
      let (sequence, restarted) = source.record(packet.header, isRetransmission: false, now: now)
    else { return .success(RTPReceiveSource.Output()) }
    if restarted { jitterBuffer = JitterBuffer(clockRate: source.configuration.clockRate) }
    var output = RTPReceiveSource.Output()
    // The storage of the last output handed back, not a new array for every packet.
    swap(&output.packets, &spareOutputPackets)
    let result = jitterBuffer.insert(
      packet, arrival: now, sequence: sequence, releasingAtOnce: true, into: &output.packets)
    if result == .buffered { jitterBuffer.release(now: .distantFuture, into: &output.packets) }
    return .success(output)
  }

  /// Takes back the packet array of an output the driver has delivered: emptied, its storage
  /// holds the next packets handed out.
  package mutating func recycle(_ packets: consuming [ReceivedRTPPacket]) {
    // One at a time: an output holds one packet or a few, and `removeAll(keepingCapacity:)`
    // goes through the generic `replaceSubrange`.
    while !packets.isEmpty { packets.removeLast() }
    spareOutputPackets = packets
  }

  /// Records an SR from the source (`RTPReceiveSource.handleSenderReport`).
  public mutating func handleSenderReport(_ report: RTCPSenderReport, now: MediaInstant) {
    source.handleSenderReport(report, now: now)
  }

  /// The receiver report due at `now`, if any (no packets: audio is handed out on arrival).
  public mutating func poll(now: MediaInstant) -> RTPReceiveSource.Output {
    var output = RTPReceiveSource.Output()
    if let report = source.dueReceiverReport(now: now) { output.rtcp.append(report) }
    return output
  }

  /// The report block on this source for our own SR (starts a new reporting interval).
  public mutating func makeReportBlock(now: MediaInstant) -> RTCPReportBlock? {
    source.makeReportBlock(now: now)
  }

  /// When `poll` must run next: the next report (with reports in our SR, still that instant,
  /// so a driver polling here keeps a steady beat).
  public var nextDeadline: MediaInstant { source.nextReportAt }
}
