/// The play side of a connection's RTP, Sans-I/O: routes decrypted RTP packets by SSRC to one
/// video and one audio receive stream (made for the first source of each negotiated payload
/// type), restores RTX (RFC 4588) to its media packet, records transport-wide sequence numbers
/// and emits their feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01), and counts.
///
/// No threads and no clock: the driver passes each packet with the instant it arrived
/// (`receive(_:ssrc:now:)`), calls `poll(now:)` at or after `nextDeadline` and hands SRs to
/// `handleSenderReport(_:now:)`; it gives the outputs' packets to the audio or video track,
/// sends their RTCP, and arms its poll no later than `Reception.pollBy`.
public struct RTPPlaySession: Sendable {
  /// What was negotiated.
  public struct Configuration: Sendable, Equatable {
    /// Our SSRC, the sender SSRC of the RTCP the session emits.
    public var localSSRC: UInt32
    /// Video's payload type; nil when video is not played (its packets are dropped).
    public var videoPayloadType: UInt8?
    /// Audio's (Opus) payload type; nil when audio is not played.
    public var audioPayloadType: UInt8?
    /// The RTX payload type repairing video, nil without RTX.
    public var rtxPayloadType: UInt8?
    /// The transport-wide sequence number's header extension id; nil: no transport feedback.
    public var transportWideCCID: UInt8?
    /// The instant the transport feedback's microsecond clock counts from.
    public var feedbackClockOrigin: MediaInstant

    /// Creates a configuration; a kind without a payload type is not played.
    public init(
      localSSRC: UInt32, videoPayloadType: UInt8? = nil, audioPayloadType: UInt8? = nil,
      rtxPayloadType: UInt8? = nil, transportWideCCID: UInt8? = nil,
      feedbackClockOrigin: MediaInstant
    ) {
      self.localSSRC = localSSRC
      self.videoPayloadType = videoPayloadType
      self.audioPayloadType = audioPayloadType
      self.rtxPayloadType = rtxPayloadType
      self.transportWideCCID = transportWideCCID
      self.feedbackClockOrigin = feedbackClockOrigin
    }
  }

  /// The track a stream feeds.
  public enum MediaKind: Sendable, Equatable {
    case audio, video
  }

  /// What the driver does after `receive`.
  public struct Reception: Sendable {
    /// The track `output.packets` go to; nil when the packet reached no stream.
    public var kind: MediaKind?
    /// Packets for the track (audio at once, video only when late) and RTCP to send.
    public var output = RTPReceiveSource.Output()
    /// A new video source took over: the video track starts over before these packets.
    public var videoSourceChanged = false
    /// The driver polls no later than this; nil when nothing new fell due.
    public var pollBy: MediaInstant?
  }

  /// What the driver does after `poll`.
  public struct PollOutput: Sendable {
    /// Released video packets and the video stream's RTCP.
    public var video = RTPReceiveSource.Output()
    /// The audio stream's RTCP (its packets go out on arrival).
    public var audio = RTPReceiveSource.Output()
    /// Transport feedback packets, each sent as a compound of its own.
    public var transportFeedback: [RTCPPacket] = []
  }

  /// Counters of everything received.
  public struct Counters: Sendable, Equatable {
    /// RTP datagrams of at least a header's 12 octets.
    public var packetsReceived: UInt64 = 0
    /// Their octets.
    public var bytesReceived: UInt64 = 0
    /// Octets of the packets that reached the video stream (RTX included).
    public var videoBytesReceived: UInt64 = 0
    /// Packets that did not parse or reached no stream (a payload type not played, a second
    /// source within `sourceTakeoverSilence`, RTX before any video).
    public var malformedPackets = 0
    /// Transport feedback packets emitted.
    public var transportFeedbackSent = 0
  }

  /// A second source of a kind replaces the current one only after the current one was silent
  /// this long (a sender restart), so stray packets cannot hijack the decoder.
  public static let sourceTakeoverSilence = MediaDuration.seconds(2)

  /// The configuration in use.
  public let configuration: Configuration
  /// The counters.
  public private(set) var counters = Counters()
  /// The video source's stream, once its first packet arrived.
  public private(set) var video: VideoReceiveStream?
  /// The audio source's stream, once its first packet arrived.
  public private(set) var audio: AudioReceiveStream?
  // The streams' SSRCs beside them: a packet is routed by one or two compares.
  private var videoSSRC: UInt32?
  private var audioSSRC: UInt32?
  private var rtxSource: (ssrc: UInt32, lastPacketAt: MediaInstant)?
  private var transportFeedback = TransportFeedbackGenerator()

  /// Creates a session without streams.
  public init(configuration: Configuration) {
    self.configuration = configuration
  }

  /// Takes the decrypted RTP datagram `raw` of `ssrc` that arrived at `now`: counts it, records
  /// its transport-wide sequence number, and gives it to its source's stream (made for a new
  /// source of a played payload type).
  public mutating func receive(_ raw: UnsafeRawBufferPointer, ssrc: UInt32, now: MediaInstant)
    -> Reception
  {
    var reception = Reception()
    guard raw.count >= 12 else { return reception }
    counters.packetsReceived += 1
    counters.bytesReceived += UInt64(raw.count)
    guard var packet = try? RTPPacket.parse(raw) else {
      counters.malformedPackets += 1
      return reception
    }
    if let id = configuration.transportWideCCID,
      let sequenceNumber = TransportWideCC.sequenceNumber(in: packet.header, id: id)
    {
      transportFeedback.onPacketReceived(
        transportSequenceNumber: sequenceNumber,
        arrivalTime: (now - configuration.feedbackClockOrigin).microseconds)
      reception.pollBy = feedbackDue
    }
    guard let kind = route(&packet, ssrc: ssrc, now: now, reception: &reception) else {
      counters.malformedPackets += 1
      return reception
    }
    let restored = packet.header.ssrc != ssrc
    if kind == .video { counters.videoBytesReceived += UInt64(raw.count) }
    let result =
      kind == .video
      ? video?.receive(packet, now: now, restored: restored) : audio?.receive(packet, now: now)
    if case .success(let output) = result { reception.output = output }
    let deadline = (kind == .video ? video?.nextDeadline : audio?.nextDeadline) ?? .distantFuture
    reception.kind = kind
    reception.pollBy = min(reception.pollBy ?? deadline, deadline)
    return reception
  }

  /// The stream of a packet: by its SSRC, RTX restored to the video packet, or a new source;
  /// nil when there is none.
  private mutating func route(
    _ packet: inout RTPPacket, ssrc: UInt32, now: MediaInstant, reception: inout Reception
  ) -> MediaKind? {
    var mediaSSRC = ssrc
    if let rtx = configuration.rtxPayloadType, packet.header.payloadType == rtx {
      // A relay's answer may carry no ssrc-group: the repaired stream is the video source, and
      // its RTX stream the first RTX SSRC seen (taken over like a media source).
      if let current = rtxSource, current.ssrc != ssrc,
        now - current.lastPacketAt < Self.sourceTakeoverSilence
      {
        return nil
      }
      rtxSource = (ssrc, now)
      guard let videoSSRC, let payloadType = configuration.videoPayloadType,
        let restored = try? RTXPacketFormat.unwrap(
          packet, ssrc: videoSSRC, payloadType: payloadType)
      else { return nil }
      packet = restored
      mediaSSRC = videoSSRC
    }
    if mediaSSRC == videoSSRC { return .video }
    if mediaSSRC == audioSSRC { return .audio }
    return makeStream(
      ssrc: mediaSSRC, payloadType: packet.header.payloadType, now: now, reception: &reception)
  }

  /// A stream for the new source `ssrc`, replacing a silent one of its kind.
  private mutating func makeStream(
    ssrc: UInt32, payloadType: UInt8, now: MediaInstant, reception: inout Reception
  ) -> MediaKind? {
    let isVideo = payloadType == configuration.videoPayloadType
    guard isVideo || payloadType == configuration.audioPayloadType else { return nil }
    let kind: MediaKind = isVideo ? .video : .audio
    let current = isVideo ? video?.source.lastPacketAt : audio?.source.lastPacketAt
    if let current {
      guard now - current >= Self.sourceTakeoverSilence else { return nil }
      // The track and its assembler stay: without starting over, a new numbering that lands
      // up to 2,048 behind the old one's last frame would be dropped as late until it passed.
      reception.videoSourceChanged = isVideo
    }
    let source = RTPReceiveSource.Configuration(
      ssrc: ssrc, localSSRC: configuration.localSSRC, payloadType: payloadType,
      clockRate: isVideo ? 90_000 : 48_000)
    if isVideo {
      video = VideoReceiveStream(configuration: .init(source: source), now: now)
      videoSSRC = ssrc
    } else {
      audio = AudioReceiveStream(configuration: source, now: now)
      audioSSRC = ssrc
    }
    return kind
  }

  /// Releases the video packets due at `now` and emits the streams' due NACK, PLI and RR and
  /// the transport feedback due.
  public mutating func poll(now: MediaInstant) -> PollOutput {
    var output = PollOutput()
    if let polled = video?.poll(now: now) { output.video = polled }
    if let polled = audio?.poll(now: now) { output.audio = polled }
    guard configuration.transportWideCCID != nil else { return output }
    let micros = (now - configuration.feedbackClockOrigin).microseconds
    for description in transportFeedback.poll(now: micros) {
      counters.transportFeedbackSent += 1
      // libwebrtc names the lowest media SSRC received from; 0 before any.
      let media = min(videoSSRC ?? .max, audioSSRC ?? .max)
      output.transportFeedback.append(
        .transportWideFeedback(
          TransportWideCC.feedback(
            description, senderSSRC: configuration.localSSRC,
            mediaSSRC: media == .max ? 0 : media)))
    }
    return output
  }

  /// When `poll` must run next: the streams' and the transport feedback's earliest deadline.
  public var nextDeadline: MediaInstant {
    let future = MediaInstant.distantFuture
    return min(video?.nextDeadline ?? future, audio?.nextDeadline ?? future, feedbackDue ?? future)
  }

  /// When the transport feedback is due: the generator's microsecond deadline itself, which
  /// stays put from one packet to the next (`now + (due - arrival)` moved with the
  /// sub-microsecond part of `now` and re-armed the driver's poll).
  private var feedbackDue: MediaInstant? {
    transportFeedback.nextDeadline.map {
      configuration.feedbackClockOrigin + .microseconds(Int($0))
    }
  }

  /// Takes back a delivered reception's audio packets: their storage holds the next ones.
  public mutating func recycle(_ reception: consuming Reception) {
    guard reception.kind == .audio else { return }
    audio?.recycle((consume reception).output.packets)
  }

  /// Takes back a delivered poll's video packets: their storage holds the next release.
  public mutating func recycle(_ output: consuming PollOutput) {
    guard output.video.packets.capacity > 0 else { return }
    video?.recycleReleased((consume output).video.packets)
  }

  /// Records an SR in the stream of its SSRC (LSR/DLSR, the NTP↔RTP mapping).
  public mutating func handleSenderReport(_ report: RTCPSenderReport, now: MediaInstant) {
    video?.handleSenderReport(report, now: now)
    audio?.handleSenderReport(report, now: now)
  }

  /// The stream source of `ssrc` and its kind, nil when none.
  public func source(of ssrc: UInt32) -> (kind: MediaKind, source: RTPReceiveSource)? {
    if ssrc == videoSSRC, let video { return (.video, video.source) }
    if ssrc == audioSSRC, let audio { return (.audio, audio.source) }
    return nil
  }

  /// Asks the video source for a key frame (PLI at the next poll that may send one); the video
  /// stream's next deadline, nil without video.
  public mutating func requestKeyFrame() -> MediaInstant? {
    video?.requestKeyFrame()
    return video?.nextDeadline
  }

  /// The round-trip time (from our SR/RR exchange), for the video stream's delay.
  public mutating func setRoundTripTime(_ roundTripTime: MediaDuration) {
    video?.roundTripTime = roundTripTime
  }

  /// Drops the streams (their packets and statistics); the counters stay.
  public mutating func removeStreams() {
    video = nil
    audio = nil
    videoSSRC = nil
    audioSSRC = nil
  }
}
