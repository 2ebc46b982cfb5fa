import WCSEngine

/// The playout delays of a played stream (`FPWCSApi2StreamStats.playoutDelay`, a Linux
/// addition), in milliseconds: what the jitter buffer holds now and the delay it moves towards.
///
/// Video: the jitter buffer's delay above the lowest transit seen, following
/// `factor × jitter (RFC 3550 §A.8) + 2 × RTT` (room for a NACKed packet's retransmission,
/// RFC 4585 §6.2.1), clamped to 10...1000 ms and moving a tenth of the way per packet. Audio:
/// the Opus receiver's arrival-to-playout delay plus the lip-sync delay line (now, and what
/// the sync asks for).
public struct FPWCSApi2PlayoutDelay: Sendable, Equatable {
  /// Video jitter-buffer delay now, ms; `nil` until a video packet arrived.
  public var videoJitterBuffer: Double?
  /// The delay the video jitter buffer moves towards, ms.
  public var videoJitterBufferTarget: Double?
  /// Audio arrival-to-playout delay now, ms; `nil` without a played audio track.
  public var audio: Double?
  /// The audio delay the lip sync asks for, ms.
  public var audioTarget: Double?

  /// Delays in milliseconds.
  public init(
    videoJitterBuffer: Double?, videoJitterBufferTarget: Double?, audio: Double?,
    audioTarget: Double?
  ) {
    self.videoJitterBuffer = videoJitterBuffer
    self.videoJitterBufferTarget = videoJitterBufferTarget
    self.audio = audio
    self.audioTarget = audioTarget
  }

  /// The delays of `statistics` in milliseconds; `nil` when it has none (a published stream).
  init?(_ statistics: NativeMediaConnection.DetailedStatistics) {
    guard statistics.videoJitterBufferDelay != nil || statistics.audioPlayoutDelay != nil else {
      return nil
    }
    func milliseconds(_ seconds: Double?) -> Double? { seconds.map { $0 * 1000 } }
    self.init(
      videoJitterBuffer: milliseconds(statistics.videoJitterBufferDelay),
      videoJitterBufferTarget: milliseconds(statistics.videoJitterBufferTargetDelay),
      audio: milliseconds(statistics.audioPlayoutDelay),
      audioTarget: milliseconds(statistics.audioPlayoutTargetDelay))
  }
}
