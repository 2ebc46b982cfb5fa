/// The send side of one local RTP source (one SSRC, plus an RTX stream when negotiated).
///
/// Numbers packets (random first sequence number and timestamp offset, RFC 3550 §5.1), keeps a
/// history for NACK (RFC 4585 §6.2.1) and answers it by RTX (RFC 4588) or by plain resend, turns
/// PLI/FIR (RFC 4585 §6.3.1, RFC 5104 §4.3.1) into a rate-limited key frame request, sends SR +
/// SDES CNAME compounds (RFC 3550 §6.4.1, §6.5.1), measures the RTT from report blocks (§6.4.1
/// LSR/DLSR), and holds the target bitrate set by congestion control within `min...max`.
///
/// Sans-I/O: the driver calls `send(_:now:)` per packetized payload, `handle(_:now:)` for each
/// RTCP packet about this SSRC, `poll(now:)` at `nextDeadline`, and sends the returned bytes.
public struct RTPSendStream: Sendable {
  /// The RTX stream (SSRC, payload type) this stream retransmits on; the same shape as the
  /// receive side's.
  public typealias Retransmission = RTPRetransmission

  /// What the stream is and how it behaves.
  public struct Configuration: Sendable, Equatable {
    /// Our media SSRC.
    public var ssrc: UInt32
    /// Media payload type.
    public var payloadType: UInt8
    /// RTP clock rate in Hz (90 000 video, 48 000 Opus).
    public var clockRate: Int
    /// The RTX stream (its SSRC and payload type) when negotiated; nil resends the packet as is.
    public var retransmission: Retransmission?
    /// SDES CNAME sent with every SR (RFC 3550 §6.5.1).
    public var cname: String
    /// Lowest bitrate the stream will use, bits per second.
    public var minBitrate: Int
    /// Highest bitrate the stream will use, bits per second.
    public var maxBitrate: Int
    /// Starting bitrate, bits per second (clamped to min...max).
    public var startBitrate: Int
    /// Packets kept for retransmission (rounded up to a power of two).
    public var historyCapacity: Int
    /// Packets older than this are not retransmitted (late for playout anyway).
    public var historyMaxAge: Duration
    /// Interval between sender reports.
    public var reportInterval: Duration
    /// At most one key frame request event per this interval (default 300 ms: PLIs from several
    /// receivers or repeated FIRs within it are served by one key frame). A request inside it
    /// is deferred to its end (`poll`), not dropped: the receiver that asked may have joined
    /// after the key frame the last request brought.
    public var keyFrameRequestInterval: Duration
    /// First sequence number; nil picks a random one (RFC 3550 §5.1).
    public var initialSequenceNumber: UInt16?
    /// Offset added to media timestamps; nil picks a random one (RFC 3550 §5.1).
    public var timestampOffset: UInt32?

    /// Creates a configuration.
    public init(
      ssrc: UInt32, payloadType: UInt8, clockRate: Int,
      retransmission: Retransmission? = nil, cname: String,
      minBitrate: Int = 30_000, maxBitrate: Int = 2_500_000, startBitrate: Int = 1_000_000,
      historyCapacity: Int = 1024, historyMaxAge: Duration = .seconds(2),
      reportInterval: Duration = .seconds(1),
      keyFrameRequestInterval: Duration = .milliseconds(300),
      initialSequenceNumber: UInt16? = nil, timestampOffset: UInt32? = nil
    ) {
      self.ssrc = ssrc
      self.payloadType = payloadType
      self.clockRate = clockRate
      self.retransmission = retransmission
      self.cname = cname
      self.minBitrate = minBitrate
      self.maxBitrate = max(minBitrate, maxBitrate)
      self.startBitrate = startBitrate
      self.historyCapacity = historyCapacity
      self.historyMaxAge = historyMaxAge
      self.reportInterval = reportInterval
      self.keyFrameRequestInterval = keyFrameRequestInterval
      self.initialSequenceNumber = initialSequenceNumber
      self.timestampOffset = timestampOffset
    }
  }

  /// Something the encoder or the application must act on.
  public enum Event: Equatable, Sendable {
    /// A receiver lost the picture (PLI or FIR): encode the next frame as a key frame.
    case keyFrameRequested
    /// A new RTT measurement from a report block.
    case roundTripTime(MediaDuration)
    /// A receiver's REMB estimate, bits per second (input for congestion control).
    case receiverEstimatedMaxBitrate(UInt64)
    /// A report block about this stream (loss, jitter) for congestion control and statistics.
    case receptionReport(RTCPReportBlock)
  }

  /// Results of one call.
  public struct Output: Sendable, Equatable {
    /// RTP packets to send (retransmissions), serialized.
    public var packets: [[UInt8]] = []
    /// RTCP to send (SR + SDES compound).
    public var rtcp: [RTCPPacket] = []
    /// Events for the encoder / application.
    public var events: [Event] = []

    /// Creates an empty output.
    public init() {}
  }

  /// Counters of the stream.
  public struct Counters: Sendable, Equatable {
    /// Media packets sent (retransmissions excluded): the SR packet count.
    public var packets: UInt32 = 0
    /// Payload octets sent (retransmissions excluded): the SR octet count.
    public var payloadOctets: UInt32 = 0
    /// Packets retransmitted.
    public var retransmissions = 0
    /// NACKed sequence numbers not retransmitted (unknown, too old, within 0.8 × RTT of the
    /// last resend — 100 ms stands in for the RTT before the first measurement — or not
    /// serializable).
    public var retransmissionsSkipped = 0
    /// Key frame request events raised.
    public var keyFrameRequests = 0
    /// PLI/FIR received inside the interval: folded into one deferred request event.
    public var keyFrameRequestsSuppressed = 0
    /// Sender reports sent.
    public var senderReports = 0
  }

  /// The configuration in use.
  public let configuration: Configuration
  /// Counters.
  public private(set) var counters = Counters()
  /// Latest RTT from a report block (RFC 3550 §6.4.1), nil before one arrives.
  public private(set) var roundTripTime: MediaDuration?
  /// The sequence number the next media packet gets.
  public private(set) var nextSequenceNumber: UInt16
  /// Offset between media timestamps and RTP timestamps on the wire.
  public let timestampOffset: UInt32

  /// Bitrate congestion control asks for, bits per second, held within `minBitrate...maxBitrate`.
  public var targetBitrate: Int {
    get { bitrate }
    set { bitrate = min(max(newValue, configuration.minBitrate), configuration.maxBitrate) }
  }

  private var bitrate: Int
  private var history: RTPPacketHistory
  private var nextRTXSequenceNumber: UInt16
  private let origin: MediaInstant
  private let ntpAtOrigin: NTPTimestamp
  private let reportInterval: MediaDuration
  private let keyFrameRequestInterval: MediaDuration
  private var lastMedia: (rtpTimestamp: UInt32, sentAt: MediaInstant)?
  private var nextReportAt: MediaInstant
  private var lastKeyFrameRequestAt: MediaInstant?
  /// A PLI/FIR came inside the interval: `poll` raises the event when the interval ends.
  public private(set) var keyFrameRequestPending = false
  private var lastFIRSequence: UInt8?
  private var sentSenderReports: [UInt32] = []

  /// Creates the stream.
  ///
  /// - Parameters:
  ///   - configuration: SSRC, payload type, clock rate, RTX and bitrate bounds of the stream.
  ///   - now: the stream's clock origin.
  ///   - wallClock: the NTP time at `now` (a driver passes `NTPTimestamp(date: Date())`); SR NTP
  ///     times are `wallClock` plus the elapsed time on the `now` clock, so they never jump.
  public init(
    configuration: Configuration, now: MediaInstant, wallClock: NTPTimestamp
  ) {
    var generator = SystemRandomNumberGenerator()
    self.configuration = configuration
    nextSequenceNumber =
      configuration.initialSequenceNumber ?? UInt16.random(in: 0...0x7FFF, using: &generator)
    nextRTXSequenceNumber = UInt16.random(in: 0...0x7FFF, using: &generator)
    timestampOffset =
      configuration.timestampOffset ?? UInt32.random(in: 0...UInt32.max, using: &generator)
    bitrate = min(
      max(configuration.startBitrate, configuration.minBitrate), configuration.maxBitrate)
    history = RTPPacketHistory(
      capacity: configuration.historyCapacity,
      maxAge: MediaDuration(configuration.historyMaxAge))
    reportInterval = MediaDuration(configuration.reportInterval)
    keyFrameRequestInterval = MediaDuration(configuration.keyFrameRequestInterval)
    origin = now
    nextReportAt = now
    ntpAtOrigin = wallClock
  }

  /// Numbers `payload` (media timestamp + offset), stores it for retransmission and returns the
  /// packet to send. `captureTime` is when the payload's first sample was captured (default
  /// `now`): SRs extrapolate the RTP timestamp from it, so they map timestamps to capture time as
  /// RFC 3550 §6.4.1 asks and not to capture time plus the encoding delay, which a receiver's
  /// lip sync would take for network delay.
  public mutating func send(
    _ payload: PacketizedPayload, now: MediaInstant, captureTime: MediaInstant? = nil
  ) -> RTPPacket {
    let timestamp = payload.timestamp &+ timestampOffset
    let packet = RTPPacket(
      header: RTPHeader(
        marker: payload.marker, payloadType: configuration.payloadType,
        sequenceNumber: nextSequenceNumber, timestamp: timestamp, ssrc: configuration.ssrc),
      payload: payload.payload)
    nextSequenceNumber &+= 1
    history.store(packet, sentAt: now)
    counters.packets &+= 1
    counters.payloadOctets &+= UInt32(truncatingIfNeeded: payload.payload.count)
    if lastMedia?.rtpTimestamp != timestamp {
      lastMedia = (timestamp, captureTime ?? now)
    }
    return packet
  }

  /// Handles one RTCP packet from a receiver of this stream; packets about other SSRCs are ignored.
  public mutating func handle(_ packet: RTCPPacket, now: MediaInstant) -> Output {
    var output = Output()
    switch packet {
    case .genericNACK(let nack) where nack.mediaSSRC == configuration.ssrc:
      for sequenceNumber in nack.lostSequenceNumbers {
        if let bytes = retransmit(sequenceNumber, now: now) { output.packets.append(bytes) }
      }
    case .pictureLossIndication(let pli) where pli.mediaSSRC == configuration.ssrc:
      keyFrameRequest(now: now, into: &output)
    case .fullIntraRequest(let fir):
      // A FIR entry with an unchanged command sequence number is a repeat (RFC 5104 §4.3.1.2).
      for entry in fir.entries where entry.ssrc == configuration.ssrc {
        guard entry.sequenceNumber != lastFIRSequence else { continue }
        lastFIRSequence = entry.sequenceNumber
        keyFrameRequest(now: now, into: &output)
      }
    case .receiverReport(let report):
      for block in report.reports where block.ssrc == configuration.ssrc {
        handleReportBlock(block, now: now, into: &output)
      }
    case .senderReport(let report):
      for block in report.reports where block.ssrc == configuration.ssrc {
        handleReportBlock(block, now: now, into: &output)
      }
    case .receiverEstimatedMaxBitrate(let remb)
    where remb.ssrcs.contains(configuration.ssrc) || remb.ssrcs.isEmpty:
      output.events.append(.receiverEstimatedMaxBitrate(remb.bitrate))
    default:
      break
    }
    return output
  }

  /// Emits the SR + SDES compound when due.
  ///
  /// - Parameters:
  ///   - now: the current time on the stream's clock.
  ///   - reportBlocks: reception reports on remote sources to carry in the SR
  ///     (`VideoReceiveStream.makeReportBlock`), so one compound serves both directions.
  public mutating func poll(now: MediaInstant, reportBlocks: [RTCPReportBlock] = []) -> Output {
    var output = Output()
    if keyFrameRequestPending, let last = lastKeyFrameRequestAt,
      now - last >= keyFrameRequestInterval
    {
      keyFrameRequestPending = false
      lastKeyFrameRequestAt = now
      counters.keyFrameRequests += 1
      output.events.append(.keyFrameRequested)
    }
    guard now >= nextReportAt else { return output }
    nextReportAt = now + reportInterval
    guard counters.packets > 0 else { return output }
    output.rtcp = [
      .senderReport(senderReport(now: now, reportBlocks: reportBlocks)),
      .sourceDescription(
        RTCPSourceDescription(chunks: [
          RTCPSourceDescriptionChunk(
            ssrc: configuration.ssrc,
            items: [
              RTCPSourceDescriptionItem(
                type: RTCPSourceDescriptionItem.cname, text: configuration.cname)
            ])
        ])),
    ]
    return output
  }

  /// The SR for `now`: NTP from the wall clock, the RTP timestamp extrapolated from the last sent
  /// packet's timestamp by the elapsed time × clock rate, and the packet and octet counts.
  public mutating func senderReport(
    now: MediaInstant, reportBlocks: [RTCPReportBlock] = []
  ) -> RTCPSenderReport {
    let ntp = ntpAtOrigin.advanced(by: now - origin)
    var rtpTimestamp = timestampOffset
    if let lastMedia {
      let elapsed = Int64(
        ((now - lastMedia.sentAt).seconds * Double(configuration.clockRate)).rounded())
      rtpTimestamp = lastMedia.rtpTimestamp &+ UInt32(truncatingIfNeeded: elapsed)
    }
    counters.senderReports += 1
    sentSenderReports.append(ntp.middle32)
    if sentSenderReports.count > 16 { sentSenderReports.removeFirst() }
    return RTCPSenderReport(
      ssrc: configuration.ssrc, ntpTimestamp: ntp.value, rtpTimestamp: rtpTimestamp,
      packetCount: counters.packets, octetCount: counters.payloadOctets,
      reports: Array(reportBlocks.prefix(31)))
  }

  /// When `poll` must run next: the next SR, or the end of the key frame request interval
  /// when a request waits for it.
  public var nextDeadline: MediaInstant {
    if keyFrameRequestPending, let last = lastKeyFrameRequestAt {
      return min(nextReportAt, last + keyFrameRequestInterval)
    }
    return nextReportAt
  }

  private mutating func retransmit(_ sequenceNumber: UInt16, now: MediaInstant) -> [UInt8]? {
    guard let entry = history.entry(sequenceNumber, now: now) else {
      counters.retransmissionsSkipped += 1
      return nil
    }
    // Not twice within one RTT: the first resend may still be on its way. 0.8 × RTT, so a receiver
    // that re-asks once per RTT is not refused because the two RTT estimates differ slightly.
    let minimumInterval = (roundTripTime ?? .milliseconds(100)) * 0.8
    if let last = entry.lastRetransmittedAt, now - last < minimumInterval {
      counters.retransmissionsSkipped += 1
      return nil
    }
    history.markRetransmitted(sequenceNumber, at: now)
    var packet = entry.packet
    if let rtx = configuration.retransmission {
      packet = RTXPacketFormat.wrap(
        packet, ssrc: rtx.ssrc, payloadType: rtx.payloadType,
        sequenceNumber: nextRTXSequenceNumber)
      nextRTXSequenceNumber &+= 1
    }
    guard let bytes = try? packet.serialized() else {
      counters.retransmissionsSkipped += 1
      return nil
    }
    counters.retransmissions += 1
    return bytes
  }

  private mutating func keyFrameRequest(now: MediaInstant, into output: inout Output) {
    if let last = lastKeyFrameRequestAt, now - last < keyFrameRequestInterval {
      counters.keyFrameRequestsSuppressed += 1
      keyFrameRequestPending = true
      return
    }
    keyFrameRequestPending = false
    lastKeyFrameRequestAt = now
    counters.keyFrameRequests += 1
    output.events.append(.keyFrameRequested)
  }

  /// The block's RTT (`RTCPReportBlock.roundTripTime`), with the arrival on our NTP clock, for
  /// an SR we sent.
  private mutating func handleReportBlock(
    _ block: RTCPReportBlock, now: MediaInstant, into output: inout Output
  ) {
    output.events.append(.receptionReport(block))
    guard sentSenderReports.contains(block.lastSenderReport),
      let rtt = block.roundTripTime(arrival: ntpAtOrigin.advanced(by: now - origin).middle32)
    else { return }
    roundTripTime = rtt
    output.events.append(.roundTripTime(rtt))
  }
}
