/// The publish side of a connection's RTP, Sans-I/O: one send stream for video and one for
/// audio (numbering, SRs, NACK → RTX, PLI/FIR, RFC 3550 and RFC 4585), the pacer that spreads
/// video at 2.5 × the congestion controller's target, transport-wide sequence numbers
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01) and the send-side bandwidth estimator
/// they feed.
///
/// No threads and no clock: the driver hands it a frame's payloads with `send(_:kind:now:
/// captureTime:)`, the RTCP it received with `handle(_:now:)`, calls `poll(now:)` at or after
/// `nextDeadline` (the streams' SRs, a deferred key-frame request) and `releasePaced(now:)` at
/// `nextPacedSendTime`. Each returns an `Output`: RTP to protect and send in order, RTCP
/// compounds and events for the tracks.
public struct RTPPublishSession {
  /// What was negotiated.
  public struct Configuration: Sendable, Equatable {
    /// The video send stream's configuration; nil when no video is published.
    public var video: RTPSendStream.Configuration?
    /// The audio send stream's configuration; nil when no audio is published.
    public var audio: RTPSendStream.Configuration?
    /// The transport-wide sequence number's header extension id; nil: packets are not
    /// numbered and the estimator gets no feedback (REMB and RTT still steer it).
    public var transportWideCCID: UInt8?

    /// Creates a configuration; a kind without a stream is not published.
    public init(
      video: RTPSendStream.Configuration? = nil, audio: RTPSendStream.Configuration? = nil,
      transportWideCCID: UInt8? = nil
    ) {
      self.video = video
      self.audio = audio
      self.transportWideCCID = transportWideCCID
    }
  }

  /// The kind of a payload or of the stream an event is about.
  public typealias MediaKind = RTPPlaySession.MediaKind

  /// What the tracks and the statistics hear of.
  public enum Event: Equatable, Sendable {
    /// The peer asked for a video key frame (PLI or FIR, after the stream's interval).
    case keyFrameRequested
    /// The video target changed (bits per second, within the stream's limits): the encoder's
    /// new bitrate.
    case targetBitrateChanged(Int)
    /// A round-trip time from a reception report (RFC 3550 §6.4.1).
    case roundTripTime(MediaDuration)
    /// A reception report about one of our streams.
    case receptionReport(RTCPReportBlock, kind: MediaKind)
  }

  /// What the driver sends and tells after a call.
  public struct Output: Equatable, Sendable {
    /// Serialized RTP, in the order to protect and send it.
    public var packets: [[UInt8]] = []
    /// RTCP, one compound per entry (without the report a compound starts with, when the
    /// entry is feedback alone).
    public var rtcp: [[RTCPPacket]] = []
    /// What happened, in order, for the tracks and the statistics.
    public var events: [Event] = []

    /// Nothing to send and nothing to tell.
    public init() {}
  }

  /// What the session sent and received, for the statistics.
  public struct Counters: Sendable, Equatable {
    /// Bytes of video RTP handed out (`currentVideoBitrate`).
    public var videoBytesSent: UInt64 = 0
    /// Transport-wide feedback packets given to the estimator.
    public var transportFeedbackReceived = 0
  }

  /// A packet waiting in the pacer, not yet carrying its transport-wide sequence number.
  public struct PacedPacket {
    let packet: RTPPacket
    let kind: MediaKind
  }

  /// Bytes of RTP header the pacer counts per packet besides the payload (fixed header plus
  /// the extensions this session writes).
  static let pacedHeaderOverhead = 24

  /// What was negotiated, as given.
  public let configuration: Configuration
  /// The video send stream (its counters, timestamp offset and target); nil without video.
  public private(set) var videoSend: RTPSendStream?
  /// The audio send stream; nil without audio.
  public private(set) var audioSend: RTPSendStream?
  /// Spreads video and audio packets (`nil` without video).
  public private(set) var pacer: Pacer<PacedPacket>?
  /// The congestion controller steering the video target (`nil` without video).
  public let estimator: SendSideBandwidthEstimator?
  /// What went out and came in so far.
  public private(set) var counters = Counters()
  private var nextTransportSequenceNumber: UInt16 = 0
  /// The target last handed out as `.targetBitrateChanged`.
  private var appliedTargetBitrate: Int?

  /// Makes the send streams at `now`, their SRs mapping media time to `wallClock`.
  public init(configuration: Configuration, now: MediaInstant, wallClock: NTPTimestamp) {
    self.configuration = configuration
    videoSend = configuration.video.map {
      RTPSendStream(configuration: $0, now: now, wallClock: wallClock)
    }
    audioSend = configuration.audio.map {
      RTPSendStream(configuration: $0, now: now, wallClock: wallClock)
    }
    if let video = configuration.video {
      let estimator = SendSideBandwidthEstimator(
        startBitrate: video.startBitrate, minBitrate: video.minBitrate,
        maxBitrate: video.maxBitrate, probing: false)
      self.estimator = estimator
      appliedTargetBitrate = estimator.targetBitrate
      pacer = Pacer(targetBitrate: video.startBitrate)
    } else {
      estimator = nil
    }
  }

  /// When `poll(now:)` should run next: the streams' next SR or deferred key-frame request.
  public var nextDeadline: MediaInstant? {
    switch (videoSend?.nextDeadline, audioSend?.nextDeadline) {
    case (let video?, let audio?): min(video, audio)
    case (let video, let audio): video ?? audio
    }
  }

  /// When `releasePaced(now:)` should run next; nil when the pacer holds nothing.
  public var nextPacedSendTime: MediaInstant? { pacer?.nextSendTime }

  /// The round-trip time from the peer's reception reports, video's first.
  public var roundTripTime: MediaDuration? { videoSend?.roundTripTime ?? audioSend?.roundTripTime }

  /// A key-frame request waits for the video stream's interval: poll when it ends.
  public var keyFrameRequestPending: Bool { videoSend?.keyFrameRequestPending == true }

  /// Numbers `payloads` (one frame's, of `kind`) on their stream and hands them out, through
  /// the pacer when there is one. `captureTime`: when the frame was captured, for the SR's
  /// clock mapping.
  public mutating func send(
    _ payloads: [PacketizedPayload], kind: MediaKind, now: MediaInstant,
    captureTime: MediaInstant
  ) -> Output {
    var output = Output()
    for payload in payloads {
      // The streams are mutated in place (optional chaining): a copy would share the packet
      // history's storage, and the first write would then copy the whole history (1024
      // packets) for every packet sent.
      let sent =
        kind == .video
        ? videoSend?.send(payload, now: now, captureTime: captureTime)
        : audioSend?.send(payload, now: now, captureTime: captureTime)
      guard let packet = sent else { break }
      if pacer != nil {
        pacer?.enqueue(
          PacedPacket(packet: packet, kind: kind), priority: kind == .video ? .video : .audio,
          size: packet.payload.count + Self.pacedHeaderOverhead, now: now)
      } else {
        stampAndSerialize(packet, kind: kind, now: now, into: &output)
      }
    }
    if pacer != nil { release(now: now, into: &output) }
    return output
  }

  /// Hands out what the pacer releases at `now`.
  public mutating func releasePaced(now: MediaInstant) -> Output {
    var output = Output()
    release(now: now, into: &output)
    return output
  }

  /// Takes the RTCP the peer sent (`now`: when it arrived): transport-wide feedback for the
  /// estimator; NACK, PLI, FIR, RRs and REMB for the streams they name.
  public mutating func handle(_ packets: [RTCPPacket], now: MediaInstant) -> Output {
    var output = Output()
    for packet in packets {
      if case .transportWideFeedback(let feedback) = packet, let estimator {
        counters.transportFeedbackReceived += 1
        estimator.onTransportFeedback(
          TransportWideCC.description(of: feedback).packetFeedbacks(), now: now)
      }
      if let streamOutput = videoSend?.handle(packet, now: now) {
        take(streamOutput, kind: .video, now: now, into: &output)
      }
      if let streamOutput = audioSend?.handle(packet, now: now) {
        take(streamOutput, kind: .audio, now: now, into: &output)
      }
    }
    applyTargetBitrate(into: &output)
    return output
  }

  /// Runs the streams' timers (SRs, a deferred key-frame request) due at `now`.
  public mutating func poll(now: MediaInstant) -> Output {
    var output = Output()
    if let streamOutput = videoSend?.poll(now: now) {
      take(streamOutput, kind: .video, now: now, into: &output)
    }
    if let streamOutput = audioSend?.poll(now: now) {
      take(streamOutput, kind: .audio, now: now, into: &output)
    }
    applyTargetBitrate(into: &output)
    return output
  }

  // MARK: - Private

  private mutating func release(now: MediaInstant, into output: inout Output) {
    // In place: a copy would share the queues' storage and copy it on the first write.
    let releases = pacer?.process(now: now) ?? []
    for release in releases {
      if case .media(let paced, _, _, _) = release {
        stampAndSerialize(paced.packet, kind: paced.kind, now: now, into: &output)
      }
    }
  }

  /// Puts the transport-wide sequence number on `packet` (numbers follow the send order, so
  /// this runs when the packet leaves the pacer), serializes it and tells the estimator.
  private mutating func stampAndSerialize(
    _ packet: RTPPacket, kind: MediaKind, now: MediaInstant, into output: inout Output
  ) {
    var stamped = packet
    let transportSequenceNumber = nextTransportSequenceNumber
    if let id = configuration.transportWideCCID {
      TransportWideCC.stamp(&stamped.header, id: id, sequenceNumber: transportSequenceNumber)
      nextTransportSequenceNumber &+= 1
    }
    guard let bytes = try? stamped.serialized() else { return }
    output.packets.append(bytes)
    if configuration.transportWideCCID != nil {
      estimator?.onPacketSent(
        PacketSent(
          transportSequenceNumber: transportSequenceNumber, sendTime: now, size: bytes.count))
    }
    if kind == .video { counters.videoBytesSent += UInt64(bytes.count) }
  }

  /// A stream's output into the session's: retransmissions go out as they are (they keep no
  /// transport-wide number), RTT and REMB reach the estimator.
  private mutating func take(
    _ streamOutput: RTPSendStream.Output, kind: MediaKind, now: MediaInstant,
    into output: inout Output
  ) {
    output.packets.append(contentsOf: streamOutput.packets)
    if !streamOutput.rtcp.isEmpty { output.rtcp.append(streamOutput.rtcp) }
    for event in streamOutput.events {
      switch event {
      case .keyFrameRequested:
        if kind == .video { output.events.append(.keyFrameRequested) }
      case .roundTripTime(let rtt):
        output.events.append(.roundTripTime(rtt))
        estimator?.onRoundTripTime(rtt)
      case .receiverEstimatedMaxBitrate(let bitrate):
        estimator?.onREMB(REMBUpdate(bitrate: Int(clamping: bitrate)), now: now)
      case .receptionReport(let block):
        output.events.append(.receptionReport(block, kind: kind))
      }
    }
  }

  /// A new estimator target goes to the video stream and the pacer, and out as an event.
  private mutating func applyTargetBitrate(into output: inout Output) {
    guard let estimator, estimator.targetBitrate != appliedTargetBitrate, videoSend != nil
    else { return }
    appliedTargetBitrate = estimator.targetBitrate
    videoSend?.targetBitrate = estimator.targetBitrate  // in place (see `send`)
    guard let target = videoSend?.targetBitrate else { return }
    pacer?.setTargetBitrate(target)
    output.events.append(.targetBitrateChanged(target))
  }
}
