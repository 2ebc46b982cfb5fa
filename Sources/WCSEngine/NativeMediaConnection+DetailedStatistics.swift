import WCSMediaSeam

extension NativeMediaConnection {
  /// Counters beyond `MediaConnectionStats`: codec and RTCP activity, for tests and monitoring.
  public struct DetailedStatistics: Sendable, Equatable {
    /// The transport summary.
    public var summary = MediaConnectionStats()
    /// The negotiated video codec as `a=rtpmap` names it: `"VP8"` (RFC 7741) or `"H264"`
    /// (RFC 6184).
    public var videoCodec = "VP8"
    /// Pictures the video encoder produced.
    public var framesEncoded = 0
    /// Key frames among them.
    public var keyFramesEncoded = 0
    /// What makes the sent video (publish): `libvpx` (VP8), `OpenH264`, or `passthrough` (a
    /// file's own H.264 sent without decoding, `H264FilePassThrough`), as WebRTC's
    /// `RTCOutboundRtpStreamStats.encoderImplementation` names it; "" without video.
    public var encoderImplementation = ""
    /// Access units of a file sent as they are (pass-through; the encoder did not run for
    /// them, `framesEncoded` does not count them).
    public var framesPassedThrough = 0
    /// IDR access units among them.
    public var keyFramesPassedThrough = 0
    /// Key-frame requests (PLI/FIR) received during pass-through: a file cannot make a key
    /// frame on demand, its next IDR answers them.
    public var keyFrameRequestsAwaitingIDR = 0
    /// Why a file source's video is decoded and encoded rather than passed through (e.g.
    /// "H.264 was not negotiated"); nil for other sources and during pass-through.
    public var passThroughRefusal: String?
    /// Pictures sent: encoded (`framesEncoded`) or passed through (`framesPassedThrough`).
    public var framesSent: Int { framesEncoded + framesPassedThrough }
    /// Opus frames encoded.
    public var audioFramesEncoded = 0
    /// Pictures decoded and rendered.
    public var framesDecoded = 0
    /// Opus frames decoded (FEC and concealment not included).
    public var audioFramesDecoded = 0
    /// Packets retransmitted after NACK.
    public var retransmissions = 0
    /// NACKed sequence numbers not retransmitted (publish): no longer in the history, or
    /// resent less than an RTT ago.
    public var retransmissionsSkipped = 0
    /// Missing packets that arrived after all (play): retransmitted (RTX or plain) or reordered.
    public var packetsRecovered = 0
    /// Missing packets the NACK generator gave up on (play): their frame needs a key frame.
    public var packetsGivenUp = 0
    /// RTP packets that could not be sent: SRTP protection failed (e.g. a resend older than the
    /// replay window), the socket refused them, or the connection was gone.
    public var rtpSendFailures = 0
    /// RTCP compounds that could not be sent (the same reasons).
    public var rtcpSendFailures = 0
    /// Key frame requests (PLI/FIR) served.
    public var keyFrameRequests = 0
    /// NACK packets sent (play).
    public var nacksSent = 0
    /// PLI packets sent (play).
    public var plisSent = 0
    /// Key frames among the decoded pictures (play).
    public var keyFramesDecoded = 0
    /// Sequence numbers asked for in NACKs (RFC 4585 §6.2.1), retries included (play).
    public var nackedPacketsRequested = 0
    /// NACKed packets that arrived after all, by retransmission or late (play): missing ones
    /// that arrived before their NACK was due count in `packetsRecovered` only.
    public var nackedPacketsRecovered = 0
    /// Missing packets given up without arriving (play).
    public var nackedPacketsGivenUp = 0
    /// Packets restored from RTX (RFC 4588) (play).
    public var rtxPacketsReceived = 0
    /// Sequence numbers the receivers NACKed: the retransmitted ones and the skipped ones
    /// (unknown, too old, or resent too recently) (publish).
    public var nackedPacketsReceived = 0
    /// PLI/FIR received (RFC 4585 §6.3.1, RFC 5104 §4.3.1), the ones folded into an earlier
    /// request included (publish).
    public var keyFrameRequestsReceived = 0
    /// Sender reports sent (publish).
    public var senderReports = 0
    /// Receiver reports sent (play).
    public var receiverReports = 0
    /// Round-trip time from RTCP report blocks, seconds; `nil` until measured.
    public var roundTripTime: Double?
    /// Current VP8 encoder target, bits per second (publish).
    public var videoEncoderBitrate = 0
    /// Transport-wide feedback packets received (publish).
    public var transportFeedbackReceived = 0
    /// Transport-wide feedback packets sent (play).
    public var transportFeedbackSent = 0
    /// RTP packets dropped because they were malformed or of an unknown payload type.
    public var malformedPackets = 0
    /// RTCP packets skipped inside a compound because their body was malformed, or compounds
    /// cut short by a header that cannot be framed; the rest of each compound is used.
    public var malformedRTCPPackets = 0
    /// CPU seconds spent inside the codecs (`CLOCK_THREAD_CPUTIME_ID` around each call): VP8
    /// encoding (publish), Opus encoding (publish), VP8 decoding with the copy of the picture
    /// out of libvpx (play), Opus decoding with FEC and concealment (play). The rest of a
    /// pipeline's CPU is the SDK's own (`PipelineBench` compares the two).
    public var videoEncodeCPUTime = 0.0
    /// See `videoEncodeCPUTime`.
    public var audioEncodeCPUTime = 0.0
    /// See `videoEncodeCPUTime`.
    public var videoDecodeCPUTime = 0.0
    /// See `videoEncodeCPUTime`.
    public var audioDecodeCPUTime = 0.0
    /// CPU seconds the virtual camera and microphone spent drawing the pictures and sound they
    /// delivered (publish; they stand in for capture devices, so this is not the SDK's own
    /// work either); 0 with other sources.
    public var sourceCPUTime = 0.0
    /// Video jitter-buffer playout delay now (play), seconds (`JitterBuffer.delay`, moving
    /// towards `videoJitterBufferTargetDelay`); `nil` until a video packet arrived.
    public var videoJitterBufferDelay: Double?
    /// The delay the video jitter buffer moves towards (play), seconds: RFC 3550 §A.8 jitter
    /// × factor + the retransmission allowance, clamped (`JitterBuffer.targetDelay`).
    public var videoJitterBufferTargetDelay: Double?
    /// Audio arrival-to-playout delay now (play), seconds: the receiver's playout delay plus
    /// the lip-sync delay line; `nil` without a played audio track.
    public var audioPlayoutDelay: Double?
    /// The audio playout delay the lip sync asks for (play), seconds.
    public var audioPlayoutTargetDelay: Double?
  }
}
