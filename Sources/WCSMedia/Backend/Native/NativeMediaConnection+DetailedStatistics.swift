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
  }
}
