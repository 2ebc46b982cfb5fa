/// The receive side of one remote video source (one SSRC, plus its RTX repair stream when
/// negotiated): validates packets, keeps RFC 3550 statistics, holds packets in the jitter buffer
/// until playout, asks for missing ones with generic NACKs (RFC 4585 §6.2.1) and for key frames
/// with PLI (RFC 4585 §6.3.1), unwraps RTX (RFC 4588), and sends receiver reports (RFC 3550
/// §6.4.2).
///
/// Sans-I/O: the driver calls `receive(_:now:restored:)` for each SRTP-unprotected packet of
/// the SSRCs, `handleSenderReport(_:now:)` for the source's SRs and `poll(now:)` at
/// `nextDeadline`; it sends the returned RTCP and hands the returned packets to the assembler.
public struct VideoReceiveStream: Sendable {
  /// What the stream is and how it behaves.
  public struct Configuration: Sendable, Equatable {
    /// Identity and reports of the source.
    public var source: RTPReceiveSource.Configuration
    /// The RTX stream, when negotiated.
    public var retransmission: RTPRetransmission?
    /// At most one PLI per this interval (default 500 ms, longer than a typical RTT so a key
    /// frame already on its way is not asked for twice).
    public var keyFrameRequestInterval: Duration
    /// Extra playout delay per RTT, so a retransmission (and one retry) can arrive.
    public var retransmissionDelayFactor: Double
    /// Jitter buffer tuning.
    public var jitterBuffer: JitterBuffer.Configuration
    /// NACK tuning.
    public var nack: NACKGenerator.Configuration

    /// Creates a configuration.
    public init(
      source: RTPReceiveSource.Configuration,
      retransmission: RTPRetransmission? = nil,
      keyFrameRequestInterval: Duration = .milliseconds(500),
      retransmissionDelayFactor: Double = 2,
      jitterBuffer: JitterBuffer.Configuration = JitterBuffer.Configuration(),
      nack: NACKGenerator.Configuration = NACKGenerator.Configuration()
    ) {
      self.source = source
      self.retransmission = retransmission
      self.keyFrameRequestInterval = keyFrameRequestInterval
      self.retransmissionDelayFactor = retransmissionDelayFactor
      self.jitterBuffer = jitterBuffer
      self.nack = nack
    }
  }

  /// The configuration in use.
  public let configuration: Configuration
  /// Identity, statistics, counters and reports.
  public private(set) var source: RTPReceiveSource
  /// The NACK generator (its request, recovery and give-up counts).
  public private(set) var nackGenerator: NACKGenerator
  /// The jitter buffer (its delay, duplicate and late counts).
  public private(set) var jitterBuffer: JitterBuffer
  /// Round-trip time, set by the driver from the SR/RR exchange.
  public var roundTripTime: MediaDuration?

  private var keyFrameRequested = false
  private var lastKeyFrameRequestAt: MediaInstant?
  private let keyFrameRequestInterval: MediaDuration
  /// Empty, with the storage `recycleReleased` handed back.
  private var spareOutputPackets: [ReceivedRTPPacket] = []

  /// Creates the stream at `now` (its first report is due one `reportInterval` later).
  public init(configuration: Configuration, now: MediaInstant) {
    self.configuration = configuration
    source = RTPReceiveSource(configuration: configuration.source, now: now)
    jitterBuffer = JitterBuffer(
      clockRate: configuration.source.clockRate, configuration: configuration.jitterBuffer)
    nackGenerator = NACKGenerator(configuration: configuration.nack)
    keyFrameRequestInterval = MediaDuration(configuration.keyFrameRequestInterval)
  }

  /// Takes one parsed RTP packet (media or RTX) that arrived at `now`: a late packet comes back
  /// at once, the others wait in the jitter buffer for `poll`. `restored`: the driver already
  /// restored this media packet from RTX, so it counts as a retransmission. A packet of another
  /// SSRC or payload type, or a truncated RTX packet, is counted in
  /// `source.counters.malformedPackets` and its error returned.
  public mutating func receive(
    _ packet: consuming RTPPacket, now: MediaInstant, restored: Bool = false
  ) -> Result<RTPReceiveSource.Output, RTPStreamError> {
    source.lastPacketAt = now
    guard let rtx = configuration.retransmission, packet.header.ssrc == rtx.ssrc else {
      if let error = source.rejection(of: packet.header) { return .failure(error) }
      return .success(accept(packet, isRetransmission: restored, now: now))
    }
    guard packet.header.payloadType == rtx.payloadType else {
      source.counters.malformedPackets += 1
      return .failure(.unexpectedPayloadType(packet.header.payloadType))
    }
    do {
      guard
        let media = try RTXPacketFormat.unwrap(
          packet, ssrc: configuration.source.ssrc,
          payloadType: configuration.source.payloadType ?? packet.header.payloadType)
      else { return .success(RTPReceiveSource.Output()) }
      return .success(accept(media, isRetransmission: true, now: now))
    } catch {
      source.counters.malformedPackets += 1
      return .failure(error)
    }
  }

  /// Takes a media packet of this source (restored from RTX when `isRetransmission`).
  private mutating func accept(
    _ media: consuming RTPPacket, isRetransmission: Bool, now: MediaInstant
  ) -> RTPReceiveSource.Output {
    var output = RTPReceiveSource.Output()
    // A retransmission of a packet that arrived after all (the late original crossed its NACK)
    // is a duplicate SRTP's replay window cannot see (RTX has its own SSRC and index).
    if isRetransmission, source.sequenceNumbers.highest != nil,
      nackGenerator.hasArrived(source.sequenceNumbers.extended(media.header.sequenceNumber))
    {
      source.counters.duplicateRetransmissions += 1
      return output
    }
    guard
      let (sequence, restarted) = source.record(
        media.header, isRetransmission: isRetransmission, now: now)
    else { return output }
    if restarted {
      jitterBuffer = JitterBuffer(
        clockRate: configuration.source.clockRate, configuration: configuration.jitterBuffer)
      nackGenerator = NACKGenerator(configuration: configuration.nack)
    }
    nackGenerator.packetArrived(sequence, now: now)
    jitterBuffer.updateTargetDelay(
      jitterSeconds: source.statistics.jitter / Double(configuration.source.clockRate),
      extraDelay: configuration.retransmissionDelayFactor
        * (roundTripTime ?? .milliseconds(100)).seconds)
    // The buffer takes the packet over and puts a late one in the output.
    _ = jitterBuffer.insert(
      media, arrival: now, sequence: sequence, releasingAtOnce: false, into: &output.packets)
    return output
  }

  /// Takes back the packet array of a `poll` output the driver has delivered: its storage holds
  /// the next ones released, unless the consumer still holds it (then an empty array of the same
  /// capacity is made now instead of at the next release).
  package mutating func recycleReleased(_ packets: consuming [ReceivedRTPPacket]) {
    if !packets.isEmpty { packets.removeAll(keepingCapacity: true) }
    spareOutputPackets = packets
  }

  /// Records an SR from the source (`RTPReceiveSource.handleSenderReport`).
  public mutating func handleSenderReport(_ report: RTCPSenderReport, now: MediaInstant) {
    source.handleSenderReport(report, now: now)
  }

  /// Asks for a key frame (the assembler or decoder lost the picture). The PLI goes out from
  /// `poll` no sooner than `keyFrameRequestInterval` after the previous one.
  public mutating func requestKeyFrame() {
    keyFrameRequested = true
  }

  /// Releases due packets and emits due NACK, PLI and RR (the RR first).
  public mutating func poll(now: MediaInstant) -> RTPReceiveSource.Output {
    var output = RTPReceiveSource.Output()
    swap(&output.packets, &spareOutputPackets)
    jitterBuffer.release(now: now, into: &output.packets)
    if let report = source.dueReceiverReport(now: now) { output.rtcp.append(report) }
    if nackGenerator.takeKeyFrameRequest() { keyFrameRequested = true }
    let givenUpBefore = nackGenerator.givenUp
    let due = nackGenerator.due(now: now, roundTripTime: roundTripTime)
    // A packet given up leaves its frame undecodable: ask for a key frame now rather than wait
    // for the assembler to notice the gap a frame later.
    if nackGenerator.givenUp > givenUpBefore { keyFrameRequested = true }
    if !due.isEmpty {
      output.rtcp.append(
        .genericNACK(
          RTCPGenericNACK(
            senderSSRC: configuration.source.localSSRC, mediaSSRC: configuration.source.ssrc,
            lost: due.map { UInt16(truncatingIfNeeded: $0) })))
      source.counters.nacksSent += 1
    }
    if keyFrameRequested,
      lastKeyFrameRequestAt.map({ now - $0 >= keyFrameRequestInterval }) ?? true
    {
      keyFrameRequested = false
      lastKeyFrameRequestAt = now
      source.counters.plisSent += 1
      output.rtcp.append(
        .pictureLossIndication(
          RTCPPictureLossIndication(
            senderSSRC: configuration.source.localSSRC, mediaSSRC: configuration.source.ssrc)))
    }
    return output
  }

  /// The report block on this source for our own SR (starts a new reporting interval).
  public mutating func makeReportBlock(now: MediaInstant) -> RTCPReportBlock? {
    source.makeReportBlock(now: now)
  }

  /// When `poll` must run next.
  public var nextDeadline: MediaInstant {
    var next = source.reportDeadline
    if let due = jitterBuffer.nextDeadline { next = min(next, due) }
    if let due = nackGenerator.nextDeadline(roundTripTime: roundTripTime) { next = min(next, due) }
    if keyFrameRequested {
      next = min(next, (lastKeyFrameRequestAt ?? .distantPast) + keyFrameRequestInterval)
    }
    return next == .distantFuture ? source.nextReportAt : next
  }
}
