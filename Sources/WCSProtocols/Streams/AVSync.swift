/// Lip sync between one audio and one video stream of the same sender (RFC 3550 §6.4.1: each SR
/// maps its stream's RTP timestamps to the sender's common NTP clock).
///
/// Feed it each stream's latest SR and what was played when; it converts the played RTP
/// timestamps to the sender's capture time and compares the two end-to-end delays. The sender's
/// and our clock offsets cancel, only the relative delay remains.
public struct AVSync: Sendable {
  private struct Mapping: Sendable {
    var ntp: Double
    var rtpTimestamp: UInt32
    var clockRate: Double

    func captureTime(_ timestamp: UInt32) -> Double {
      ntp + Double(Int32(bitPattern: timestamp &- rtpTimestamp)) / clockRate
    }
  }

  private var audioMapping: Mapping?
  private var videoMapping: Mapping?
  private var audioDelay: Double?
  private var videoDelay: Double?

  /// Creates a synchronizer that has seen no SR.
  public init() {}

  /// Records the audio stream's SR (`RTPReceiveSource.lastSenderReport`); `clockRate` in Hz.
  public mutating func updateAudio(
    senderReport ntp: NTPTimestamp, rtpTimestamp: UInt32, clockRate: Int
  ) {
    audioMapping = Mapping(
      ntp: ntp.seconds, rtpTimestamp: rtpTimestamp, clockRate: Double(max(1, clockRate)))
  }

  /// Records the video stream's SR; `clockRate` in Hz (90 000).
  public mutating func updateVideo(
    senderReport ntp: NTPTimestamp, rtpTimestamp: UInt32, clockRate: Int
  ) {
    videoMapping = Mapping(
      ntp: ntp.seconds, rtpTimestamp: rtpTimestamp, clockRate: Double(max(1, clockRate)))
  }

  /// The audio sample with RTP timestamp `rtpTimestamp` was played at `now`.
  public mutating func audioPlayed(rtpTimestamp: UInt32, at now: MediaInstant) {
    guard let audioMapping else { return }
    audioDelay = now.seconds - audioMapping.captureTime(rtpTimestamp)
  }

  /// The video frame with RTP timestamp `rtpTimestamp` was rendered at `now`.
  public mutating func videoRendered(rtpTimestamp: UInt32, at now: MediaInstant) {
    guard let videoMapping else { return }
    videoDelay = now.seconds - videoMapping.captureTime(rtpTimestamp)
  }

  /// How much later video is shown than the audio captured at the same instant, seconds (negative:
  /// video is early). nil until both streams have an SR and a played sample.
  public var offset: Double? {
    guard let audioDelay, let videoDelay else { return nil }
    return videoDelay - audioDelay
  }

  /// Extra playout delay to add to the earlier stream so both play in sync (the other gets 0).
  public var targetExtraDelay: (audio: Duration, video: Duration)? {
    guard let offset else { return nil }
    return offset >= 0 ? (.seconds(offset), .zero) : (.zero, .seconds(-offset))
  }
}
