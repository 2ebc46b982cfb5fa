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

  private let clock: StreamClock
  private var audioMapping: Mapping?
  private var videoMapping: Mapping?
  private var audioDelay: Double?
  private var videoDelay: Double?

  /// Creates a synchronizer; `now` is only an origin for local times.
  public init(now: ContinuousClock.Instant) {
    clock = StreamClock(origin: now)
  }

  /// Records the audio stream's SR (`RTPReceiveStream.lastSenderReport`); `clockRate` in Hz.
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
  public mutating func audioPlayed(rtpTimestamp: UInt32, at now: ContinuousClock.Instant) {
    guard let audioMapping else { return }
    audioDelay = (now - clock.origin).playoutSeconds - audioMapping.captureTime(rtpTimestamp)
  }

  /// The video frame with RTP timestamp `rtpTimestamp` was rendered at `now`.
  public mutating func videoRendered(rtpTimestamp: UInt32, at now: ContinuousClock.Instant) {
    guard let videoMapping else { return }
    videoDelay = (now - clock.origin).playoutSeconds - videoMapping.captureTime(rtpTimestamp)
  }

  /// `audioPlayed(rtpTimestamp:at:)` with `now` given as `(now - origin).playoutSeconds`, the
  /// origin being the `now` this synchronizer was made with (a caller that has it already).
  mutating func audioPlayed(rtpTimestamp: UInt32, atSeconds seconds: Double) {
    guard let audioMapping else { return }
    audioDelay = seconds - audioMapping.captureTime(rtpTimestamp)
  }

  /// `videoRendered(rtpTimestamp:at:)` with `now` as seconds since the origin (see
  /// `audioPlayed(rtpTimestamp:atSeconds:)`).
  mutating func videoRendered(rtpTimestamp: UInt32, atSeconds seconds: Double) {
    guard let videoMapping else { return }
    videoDelay = seconds - videoMapping.captureTime(rtpTimestamp)
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

extension Duration {
  /// `streamSeconds`, the same `Double`, without `components`: that getter divides by 10^18
  /// through the runtime's generic 128-bit multiplies, and the play path converts a few
  /// durations per frame (render statistics, lip sync, the loop's work budget).
  /// Whole seconds and the attoseconds left are the same truncating division, done by one
  /// 128-by-64-bit division of the magnitude (quotient and remainder take the dividend's sign,
  /// as `components` gives them); durations beyond ±2^63 s take `streamSeconds` itself.
  package var playoutSeconds: Double {
    let value = attoseconds
    let magnitude = value.magnitude
    let high = UInt64(truncatingIfNeeded: magnitude >> 64)
    let low = UInt64(truncatingIfNeeded: magnitude)
    let attosecondsPerSecond: UInt64 = 1_000_000_000_000_000_000
    guard high < attosecondsPerSecond else { return streamSeconds }
    let (quotient, remainder) = attosecondsPerSecond.dividingFullWidth((high, low))
    guard quotient <= UInt64(Int64.max) else { return streamSeconds }
    let seconds = value < 0 ? -Int64(quotient) : Int64(quotient)
    let rest = value < 0 ? -Int64(remainder) : Int64(remainder)
    return Double(seconds) + Double(rest) * 1e-18
  }
}
