/// The receive side of one remote RTP source (one SSRC, plus its RTX repair stream when
/// negotiated): validates packets, keeps RFC 3550 statistics, buffers for jitter, asks for missing
/// packets with generic NACKs (RFC 4585 §6.2.1) and for key frames with PLI (RFC 4585 §6.3.1), and
/// sends receiver reports (RFC 3550 §6.4.2).
///
/// Sans-I/O: the driver calls `receive(_:now:)` for each SRTP-unprotected packet routed to this
/// stream's SSRCs, `handleSenderReport(_:now:)` for the source's SRs, and `poll(now:)` at
/// `nextDeadline`; it sends the returned RTCP and hands the returned packets to the depacketizer.
public struct RTPReceiveStream: Sendable {
  /// The RTX stream repairing this source (RFC 4588 §8: `a=ssrc-group:FID`, `apt`).
  public struct Retransmission: Sendable, Equatable {
    /// SSRC of the RTX stream.
    public var ssrc: UInt32
    /// RTX payload type.
    public var payloadType: UInt8

    /// Creates an RTX description.
    public init(ssrc: UInt32, payloadType: UInt8) {
      self.ssrc = ssrc
      self.payloadType = payloadType
    }
  }

  /// What the stream is and how it behaves.
  public struct Configuration: Sendable, Equatable {
    /// SSRC of the remote media source.
    public var ssrc: UInt32
    /// Our SSRC, the sender SSRC of the RTCP we emit.
    public var localSSRC: UInt32
    /// Media payload type; packets of another type (but RTX) are dropped. nil accepts any.
    public var payloadType: UInt8?
    /// RTP clock rate in Hz (90 000 video, 48 000 Opus).
    public var clockRate: Int
    /// The RTX stream, when negotiated.
    public var retransmission: Retransmission?
    /// Whether to send generic NACKs (`a=rtcp-fb:<pt> nack`).
    public var nackEnabled: Bool
    /// Whether packets wait in the jitter buffer until playout (video). When false they are handed
    /// out on arrival and the consumer schedules playout itself (the audio receiver does).
    public var buffersPackets: Bool
    /// Whether `poll` emits RR packets itself; false when the report block goes into our own SR.
    public var sendsReceiverReports: Bool
    /// Interval between receiver reports (RFC 3550 §6.2 suggests ≥ 5 s for large sessions; WebRTC
    /// uses ~1 s).
    public var reportInterval: Duration
    /// At most one PLI per this interval; further requests wait for it to pass (default 500 ms,
    /// longer than a typical RTT so a key frame already on its way is not asked for twice).
    public var keyFrameRequestInterval: Duration
    /// Extra playout delay per RTT when NACK is on, so a retransmission (and one retry) can arrive.
    public var retransmissionDelayFactor: Double
    /// Jitter buffer tuning.
    public var jitterBuffer: JitterBuffer.Configuration
    /// NACK tuning.
    public var nack: NACKGenerator.Configuration

    /// Creates a configuration.
    public init(
      ssrc: UInt32, localSSRC: UInt32, payloadType: UInt8? = nil, clockRate: Int,
      retransmission: Retransmission? = nil, nackEnabled: Bool = true,
      buffersPackets: Bool = true, sendsReceiverReports: Bool = true,
      reportInterval: Duration = .seconds(1),
      keyFrameRequestInterval: Duration = .milliseconds(500),
      retransmissionDelayFactor: Double = 2,
      jitterBuffer: JitterBuffer.Configuration = JitterBuffer.Configuration(),
      nack: NACKGenerator.Configuration = NACKGenerator.Configuration()
    ) {
      self.ssrc = ssrc
      self.localSSRC = localSSRC
      self.payloadType = payloadType
      self.clockRate = clockRate
      self.retransmission = retransmission
      self.nackEnabled = nackEnabled
      self.buffersPackets = buffersPackets
      self.sendsReceiverReports = sendsReceiverReports
      self.reportInterval = reportInterval
      self.keyFrameRequestInterval = keyFrameRequestInterval
      self.retransmissionDelayFactor = retransmissionDelayFactor
      self.jitterBuffer = jitterBuffer
      self.nack = nack
    }
  }

  /// Results of one call: packets for the depacketizer (in sequence order, late ones at once) and
  /// RTCP to send (NACK, PLI, RR; the caller bundles them into a compound or sends them
  /// reduced-size, RFC 5506).
  public struct Output: Sendable, Equatable {
    /// Media packets with their arrival times, RTX already unwrapped.
    public var packets: [ReceivedRTPPacket] = []
    /// Feedback and reports to send.
    public var rtcp: [RTCPPacket] = []

    /// Creates an empty output.
    public init() {}
  }

  /// Counters of the stream.
  public struct Counters: Sendable, Equatable {
    /// Packets accepted from the media SSRC.
    public var packets = 0
    /// Packets restored from RTX.
    public var retransmittedPackets = 0
    /// Retransmissions of packets that had already arrived, or were given up (dropped, not
    /// counted received).
    public var duplicateRetransmissions = 0
    /// Packets that did not parse, had a wrong SSRC / payload type, or a truncated RTX payload.
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

  /// The configuration in use.
  public let configuration: Configuration
  /// RFC 3550 reception statistics of the media SSRC.
  public private(set) var statistics: RTPReceiveStatistics
  /// The NACK generator (its request, recovery and give-up counts).
  public private(set) var nackGenerator: NACKGenerator
  /// Counters.
  public private(set) var counters = Counters()
  /// Round-trip time in seconds, set by the driver from the send side's SR/RR exchange
  /// (`RTPSendStream.roundTripTime`) or from `handleSenderReport` report blocks.
  public var roundTripTime: Double?
  /// The source's last SR as (NTP, RTP timestamp): the wall-clock mapping for A/V sync.
  public private(set) var lastSenderReport: (ntp: NTPTimestamp, rtpTimestamp: UInt32)?

  /// The media SSRC's sequence numbers, extended (RFC 3550 §A.1).
  private var sequenceNumbers = RTPExtendedSequenceNumber()
  private var nextReportAt: MediaInstant
  private var keyFrameRequested = false
  private var lastKeyFrameRequestAt: MediaInstant?
  /// `configuration`'s intervals, converted once.
  private let reportInterval: MediaDuration
  private let keyFrameRequestInterval: MediaDuration
  /// When the last packet given to `receive` arrived (`now` at `init` until then: the stream
  /// was made for a packet).
  package private(set) var lastPacketAt: MediaInstant
  /// Empty, with the storage `recycle` handed back.
  private var spareOutputPackets: [ReceivedRTPPacket] = []
  /// The jitter buffer (its delay, duplicate and late counts).
  public private(set) var jitterBuffer: JitterBuffer

  /// Creates the stream at `now` (its first report is due one `reportInterval` later).
  public init(configuration: Configuration, now: MediaInstant) {
    self.configuration = configuration
    statistics = RTPReceiveStatistics(ssrc: configuration.ssrc, clockRate: configuration.clockRate)
    jitterBuffer = JitterBuffer(
      clockRate: configuration.clockRate, configuration: configuration.jitterBuffer)
    nackGenerator = NACKGenerator(configuration: configuration.nack)
    reportInterval = MediaDuration(configuration.reportInterval)
    keyFrameRequestInterval = MediaDuration(configuration.keyFrameRequestInterval)
    nextReportAt = now + reportInterval
    lastPacketAt = now
  }

  /// Takes one RTP packet (media or RTX) that arrived at `now`.
  ///
  /// Never throws: a packet that does not parse, belongs to another SSRC or payload type, or is a
  /// truncated RTX packet is counted in `counters.malformedPackets` and dropped, and the error is
  /// returned in `Result` form for logging.
  @discardableResult
  public mutating func receive(_ bytes: [UInt8], now: MediaInstant) -> Result<
    Output, RTPStreamError
  > {
    let packet: RTPPacket
    do {
      packet = try RTPPacket.parse(bytes)
    } catch let error as RTPParseError {
      counters.malformedPackets += 1
      return .failure(.malformed(error))
    } catch {
      counters.malformedPackets += 1
      return .failure(.malformed(.truncatedFixedHeader(available: bytes.count)))
    }
    return receive(packet, now: now)
  }

  /// Takes one parsed RTP packet (media or RTX) that arrived at `now`; see `receive(_:now:)`.
  /// `restored`: the driver already restored this media packet from RTX (RFC 4588), so it
  /// counts as a retransmission, as one unwrapped here does.
  public mutating func receive(
    _ packet: consuming RTPPacket, now: MediaInstant, restored: Bool = false
  ) -> Result<Output, RTPStreamError> {
    lastPacketAt = now
    if let rtx = configuration.retransmission, packet.header.ssrc == rtx.ssrc {
      guard packet.header.payloadType == rtx.payloadType else {
        counters.malformedPackets += 1
        return .failure(.unexpectedPayloadType(packet.header.payloadType))
      }
      do {
        guard
          let restored = try RTXPacketFormat.unwrap(
            packet, ssrc: configuration.ssrc,
            payloadType: configuration.payloadType ?? packet.header.payloadType)
        else { return .success(Output()) }
        return accept(restored, isRetransmission: true, now: now)
      } catch {
        counters.malformedPackets += 1
        return .failure(error)
      }
    } else if packet.header.ssrc != configuration.ssrc {
      counters.malformedPackets += 1
      return .failure(.unknownSSRC(packet.header.ssrc))
    } else if let payloadType = configuration.payloadType, packet.header.payloadType != payloadType
    {
      counters.malformedPackets += 1
      return .failure(.unexpectedPayloadType(packet.header.payloadType))
    }
    return accept(packet, isRetransmission: restored, now: now)
  }

  /// Takes a media packet of this source (restored from RTX when `isRetransmission`); the packet
  /// is passed on as it is, without a working copy.
  private mutating func accept(
    _ media: consuming RTPPacket, isRetransmission: Bool, now: MediaInstant
  ) -> Result<Output, RTPStreamError> {
    let arrival = now.seconds
    // A retransmission of a packet that arrived after all (the late original crossed its NACK)
    // is a duplicate SRTP's replay window cannot see (RTX has its own SSRC and index): counted
    // received, it would push the cumulative loss below zero. Not received twice, nothing else.
    if isRetransmission, configuration.nackEnabled, sequenceNumbers.highest != nil,
      nackGenerator.hasArrived(sequenceNumbers.extended(media.header.sequenceNumber))
    {
      counters.duplicateRetransmissions += 1
      return .success(Output())
    }
    let restartsBefore = statistics.restarts
    guard
      statistics.record(
        sequenceNumber: media.header.sequenceNumber, timestamp: media.header.timestamp,
        arrival: arrival, isRetransmission: isRetransmission)
    else {
      counters.outOfSequencePackets += 1
      return .success(Output())
    }
    if statistics.restarts != restartsBefore {
      // The source renumbered: sequence state from before means nothing now.
      sequenceNumbers.reset()
      jitterBuffer = JitterBuffer(
        clockRate: configuration.clockRate, configuration: configuration.jitterBuffer)
      nackGenerator = NACKGenerator(configuration: configuration.nack)
    }
    if isRetransmission { counters.retransmittedPackets += 1 } else { counters.packets += 1 }
    let sequence = sequenceNumbers.extend(media.header.sequenceNumber)
    if configuration.nackEnabled { nackGenerator.packetArrived(sequence, now: now) }

    var output = Output()
    if configuration.buffersPackets {
      jitterBuffer.updateTargetDelay(
        jitterSeconds: statistics.jitter / Double(configuration.clockRate),
        extraDelay: configuration.nackEnabled
          ? configuration.retransmissionDelayFactor * (roundTripTime ?? 0.1) : 0)
      // The buffer takes the packet over and puts a late one in the output.
      _ = jitterBuffer.insert(
        media, arrival: now, sequence: sequence, releasingAtOnce: false, into: &output.packets)
    } else {
      // The storage of the last output the driver handed back (`recycle`), not a new array for
      // every packet.
      swap(&output.packets, &spareOutputPackets)
      // Reordered packets go out as they come: the consumer orders them.
      let result = jitterBuffer.insert(
        media, arrival: now, sequence: sequence, releasingAtOnce: true, into: &output.packets)
      if result == .buffered { jitterBuffer.release(now: .distantFuture, into: &output.packets) }
    }
    return .success(output)
  }

  /// Takes back the packet array of an output the driver has delivered: emptied, its storage
  /// holds the next packets handed out at once (without a jitter buffer, every packet goes out
  /// on arrival, in an array that would otherwise be allocated for it alone).
  package mutating func recycle(_ packets: consuming [ReceivedRTPPacket]) {
    // One at a time: an output holds one packet or a few, and `removeAll(keepingCapacity:)`
    // goes through the generic `replaceSubrange`.
    while !packets.isEmpty { packets.removeLast() }
    spareOutputPackets = packets
  }

  /// Takes back the packet array of a `poll` output the driver has delivered (a buffered
  /// stream's released packets): its storage holds the next ones released, unless the consumer
  /// still holds it (a decode job queued with it), in which case an empty array of the same
  /// capacity is made now instead of at the next release (no packet is copied).
  package mutating func recycleReleased(_ packets: consuming [ReceivedRTPPacket]) {
    if !packets.isEmpty { packets.removeAll(keepingCapacity: true) }
    spareOutputPackets = packets
  }

  /// Records an SR from the source: LSR/DLSR for our reports, the NTP↔RTP mapping for A/V sync.
  public mutating func handleSenderReport(_ report: RTCPSenderReport, now: MediaInstant) {
    guard report.ssrc == configuration.ssrc else { return }
    let ntp = NTPTimestamp(value: report.ntpTimestamp)
    statistics.recordSenderReport(ntp, arrival: now.seconds)
    lastSenderReport = (ntp, report.rtpTimestamp)
  }

  /// Asks for a key frame (the frame assembler or decoder lost the picture). The PLI goes out from
  /// `poll` no sooner than `keyFrameRequestInterval` after the previous one.
  public mutating func requestKeyFrame() {
    keyFrameRequested = true
  }

  /// Releases due packets and emits due feedback and reports.
  public mutating func poll(now: MediaInstant) -> Output {
    var output = Output()
    if configuration.buffersPackets {
      // The storage of the last output handed back (`recycleReleased`), when there is one.
      swap(&output.packets, &spareOutputPackets)
      jitterBuffer.release(now: now, into: &output.packets)
    }
    if configuration.nackEnabled {
      if nackGenerator.takeKeyFrameRequest() { keyFrameRequested = true }
      let givenUpBefore = nackGenerator.givenUp
      let due = nackGenerator.due(now: now, roundTripTime: roundTripTime)
      // A packet given up leaves its frame undecodable: ask for a key frame now rather than
      // wait for the assembler to notice the gap a frame later.
      if nackGenerator.givenUp > givenUpBefore { keyFrameRequested = true }
      if !due.isEmpty {
        output.rtcp.append(
          .genericNACK(
            RTCPGenericNACK(
              senderSSRC: configuration.localSSRC, mediaSSRC: configuration.ssrc,
              lost: due.map { UInt16(truncatingIfNeeded: $0) })))
        counters.nacksSent += 1
      }
    }
    if keyFrameRequested,
      lastKeyFrameRequestAt.map({ now - $0 >= keyFrameRequestInterval }) ?? true
    {
      keyFrameRequested = false
      lastKeyFrameRequestAt = now
      counters.plisSent += 1
      output.rtcp.append(
        .pictureLossIndication(
          RTCPPictureLossIndication(
            senderSSRC: configuration.localSSRC, mediaSSRC: configuration.ssrc)))
    }
    if configuration.sendsReceiverReports, now >= nextReportAt {
      nextReportAt = now + reportInterval
      if statistics.packetsReceived > 0 {
        counters.receiverReportsSent += 1
        output.rtcp.insert(
          .receiverReport(
            RTCPReceiverReport(
              ssrc: configuration.localSSRC,
              reports: [statistics.makeReportBlock(now: now.seconds)])), at: 0)
      }
    }
    return output
  }

  /// The report block on this source for our own SR (starts a new reporting interval).
  public mutating func makeReportBlock(now: MediaInstant) -> RTCPReportBlock? {
    guard statistics.packetsReceived > 0 else { return nil }
    return statistics.makeReportBlock(now: now.seconds)
  }

  /// When `poll` must run next.
  public var nextDeadline: MediaInstant {
    var next = configuration.sendsReceiverReports ? nextReportAt : MediaInstant.distantFuture
    if configuration.buffersPackets, let due = jitterBuffer.nextDeadline { next = min(next, due) }
    if configuration.nackEnabled, let due = nackGenerator.nextDeadline(roundTripTime: roundTripTime)
    {
      next = min(next, due)
    }
    if keyFrameRequested {
      next = min(next, (lastKeyFrameRequestAt ?? .distantPast) + keyFrameRequestInterval)
    }
    if next == .distantFuture { next = nextReportAt }
    return next
  }

  /// How long before `now` the last packet given to `receive` arrived (see `lastPacketAt`).
  func timeSinceLastPacket(at now: MediaInstant) -> MediaDuration {
    now - lastPacketAt
  }
}
