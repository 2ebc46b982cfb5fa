/// What the audio and the video receive stream both keep of one remote RTP source: its
/// identity, RFC 3550 reception statistics (§6.4.1, §A.1), extended sequence numbers, counters,
/// its last SR and the schedule of our receiver reports (§6.4.2). `AudioReceiveStream` and
/// `VideoReceiveStream` each hold one and add what only their kind does.
public struct RTPReceiveSource: Sendable {
  /// Results of one call of a receive stream: packets for the depacketizer (in sequence order,
  /// late ones at once) and RTCP to send (NACK, PLI, RR; the caller bundles them into a compound
  /// or sends them reduced-size, RFC 5506).
  public struct Output: Sendable, Equatable {
    /// Media packets with their arrival times, RTX already unwrapped.
    public var packets: [ReceivedRTPPacket] = []
    /// Feedback and reports to send.
    public var rtcp: [RTCPPacket] = []

    /// Creates an empty output.
    public init() {}
  }

  /// Counters of a receive stream.
  public struct Counters: Sendable, Equatable {
    /// Packets accepted from the media SSRC.
    public var packets = 0
    /// Packets restored from RTX.
    public var retransmittedPackets = 0
    /// Retransmissions of packets that had already arrived, or were given up (dropped, not
    /// counted received).
    public var duplicateRetransmissions = 0
    /// Packets of a wrong SSRC / payload type, or with a truncated RTX payload.
    public var malformedPackets = 0
    /// Packets rejected by RFC 3550 §A.1 sequence validation.
    public var outOfSequencePackets = 0
    /// NACK packets sent.
    public var nacksSent = 0
    /// PLI packets sent.
    public var plisSent = 0
    /// RR packets sent.
    public var receiverReportsSent = 0
  }

  /// Who the source is and how it is reported on.
  public struct Configuration: Sendable, Equatable {
    /// SSRC of the remote media source.
    public var ssrc: UInt32
    /// Our SSRC, the sender SSRC of the RTCP we emit.
    public var localSSRC: UInt32
    /// Media payload type; packets of another type are dropped. nil accepts any.
    public var payloadType: UInt8?
    /// RTP clock rate in Hz (90 000 video, 48 000 Opus).
    public var clockRate: Int
    /// Whether `poll` emits RR packets itself; false when the report block goes into our own SR.
    public var sendsReceiverReports: Bool
    /// Interval between receiver reports (WebRTC uses ~1 s).
    public var reportInterval: Duration

    /// Creates a configuration.
    public init(
      ssrc: UInt32, localSSRC: UInt32, payloadType: UInt8? = nil, clockRate: Int,
      sendsReceiverReports: Bool = true, reportInterval: Duration = .seconds(1)
    ) {
      self.ssrc = ssrc
      self.localSSRC = localSSRC
      self.payloadType = payloadType
      self.clockRate = clockRate
      self.sendsReceiverReports = sendsReceiverReports
      self.reportInterval = reportInterval
    }
  }

  /// The configuration in use.
  public let configuration: Configuration
  /// RFC 3550 reception statistics of the media SSRC.
  public private(set) var statistics: RTPReceiveStatistics
  /// Counters (the stream types update theirs here).
  public internal(set) var counters = Counters()
  /// The source's last SR as (NTP, RTP timestamp): the wall-clock mapping for A/V sync.
  public private(set) var lastSenderReport: (ntp: NTPTimestamp, rtpTimestamp: UInt32)?
  /// When the last packet given to the stream arrived (`now` at `init` until then).
  package internal(set) var lastPacketAt: MediaInstant
  /// The media SSRC's sequence numbers, extended (RFC 3550 §A.1).
  private(set) var sequenceNumbers = RTPExtendedSequenceNumber()
  /// When the next receiver report is due.
  private(set) var nextReportAt: MediaInstant
  private let reportInterval: MediaDuration

  /// Creates the source at `now` (its first report is due one `reportInterval` later).
  init(configuration: Configuration, now: MediaInstant) {
    self.configuration = configuration
    statistics = RTPReceiveStatistics(ssrc: configuration.ssrc, clockRate: configuration.clockRate)
    reportInterval = MediaDuration(configuration.reportInterval)
    nextReportAt = now + reportInterval
    lastPacketAt = now
  }

  /// The error for a media packet of another SSRC or payload type (counted malformed); nil for
  /// one of this source.
  mutating func rejection(of header: RTPHeader) -> RTPStreamError? {
    if header.ssrc != configuration.ssrc {
      counters.malformedPackets += 1
      return .unknownSSRC(header.ssrc)
    }
    if let payloadType = configuration.payloadType, header.payloadType != payloadType {
      counters.malformedPackets += 1
      return .unexpectedPayloadType(header.payloadType)
    }
    return nil
  }

  /// Records a media packet of this source that arrived at `now` in the statistics and the
  /// counters: its extended sequence number, and whether the source renumbered (RFC 3550 §A.1
  /// restart: the stream's sequence state from before means nothing now); nil when §A.1
  /// validation rejects it (counted out of sequence).
  mutating func record(_ header: RTPHeader, isRetransmission: Bool, now: MediaInstant)
    -> (sequence: Int64, restarted: Bool)?
  {
    let restartsBefore = statistics.restarts
    guard
      statistics.record(
        sequenceNumber: header.sequenceNumber, timestamp: header.timestamp,
        arrival: now, isRetransmission: isRetransmission)
    else {
      counters.outOfSequencePackets += 1
      return nil
    }
    let restarted = statistics.restarts != restartsBefore
    if restarted { sequenceNumbers.reset() }
    if isRetransmission { counters.retransmittedPackets += 1 } else { counters.packets += 1 }
    return (sequenceNumbers.extend(header.sequenceNumber), restarted)
  }

  /// Records an SR from the source: LSR/DLSR for our reports, the NTP↔RTP mapping for A/V sync.
  mutating func handleSenderReport(_ report: RTCPSenderReport, now: MediaInstant) {
    guard report.ssrc == configuration.ssrc else { return }
    let ntp = NTPTimestamp(value: report.ntpTimestamp)
    statistics.recordSenderReport(ntp, arrival: now)
    lastSenderReport = (ntp, report.rtpTimestamp)
  }

  /// The RR due at `now` (RFC 3550 §6.4.2), when reports are ours to send, one is due and a
  /// packet arrived; the next one is then due one `reportInterval` later.
  mutating func dueReceiverReport(now: MediaInstant) -> RTCPPacket? {
    guard configuration.sendsReceiverReports, now >= nextReportAt else { return nil }
    nextReportAt = now + reportInterval
    guard statistics.packetsReceived > 0 else { return nil }
    counters.receiverReportsSent += 1
    return .receiverReport(
      RTCPReceiverReport(
        ssrc: configuration.localSSRC, reports: [statistics.makeReportBlock(now: now)]))
  }

  /// The report block on this source for our own SR (starts a new reporting interval); nil
  /// before the first packet.
  mutating func makeReportBlock(now: MediaInstant) -> RTCPReportBlock? {
    guard statistics.packetsReceived > 0 else { return nil }
    return statistics.makeReportBlock(now: now)
  }

  /// When the next RR is due (the distant future when reports go into our SR instead).
  var reportDeadline: MediaInstant {
    configuration.sendsReceiverReports ? nextReportAt : .distantFuture
  }
}
