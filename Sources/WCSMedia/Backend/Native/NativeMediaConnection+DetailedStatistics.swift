extension NativeMediaConnection {
  /// Counters beyond `MediaConnectionStats`: codec and RTCP activity, for tests and monitoring.
  public struct DetailedStatistics: Sendable, Equatable {
    /// The transport summary.
    public var summary = MediaConnectionStats()
    /// Pictures the VP8 encoder produced.
    public var framesEncoded = 0
    /// Key frames among them.
    public var keyFramesEncoded = 0
    /// Opus frames encoded.
    public var audioFramesEncoded = 0
    /// Pictures decoded and rendered.
    public var framesDecoded = 0
    /// Opus frames decoded (FEC and concealment not included).
    public var audioFramesDecoded = 0
    /// Packets retransmitted after NACK.
    public var retransmissions = 0
    /// Key frame requests (PLI/FIR) served.
    public var keyFrameRequests = 0
    /// NACK packets sent (play).
    public var nacksSent = 0
    /// PLI packets sent (play).
    public var plisSent = 0
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
  }
}
