/// Lip sync decisions for one played audio and one played video stream of the same sender: how
/// much extra playout delay each stream gets so that sound and picture captured at the same
/// instant come out together (RFC 3550 §6.4.1; the role libwebrtc's `RtpStreamsSynchronizer`
/// plays).
///
/// Sans-I/O: the driver feeds each stream's SRs and, for every audio frame played and video frame
/// rendered, its RTP timestamp, the local time and the extra delay that frame actually got; it
/// reads `audioExtraDelay`/`videoExtraDelay` and holds the earlier stream back by that much.
/// Because each event carries the delay already applied, the estimate of the streams' own delay
/// difference does not depend on what was applied (no feedback loop): the target is that
/// difference, given to the stream that is ahead, capped at `maxExtraDelay`. The delays follow
/// the target at most `maxChangePerSecond`, except the first time, when they move at once
/// (`alignsAtStart`): nothing has played long enough for a jump to be heard.
public struct PlayoutSynchronizer: Sendable {
  /// Tuning.
  public struct Configuration: Sendable, Equatable {
    /// Largest extra delay either stream gets (default 1 s).
    public var maxExtraDelay: Duration
    /// Fastest change of an extra delay, per second of time (default 20 ms/s).
    public var maxChangePerSecond: Duration
    /// How often the target is recomputed (default 100 ms).
    public var updateInterval: Duration
    /// Whether the first target is applied at once instead of slewed (default true).
    public var alignsAtStart: Bool
    /// A delay difference beyond this is taken for a bogus SR and ignored (default 5 s).
    public var maxRelativeDelay: Duration
    /// Weight of a new measurement in the running average of the delay difference, 0...1
    /// (default 0.1: a time constant of about a second at the default `updateInterval`).
    public var smoothing: Double
    /// SRs of each stream needed before acting (default 1; `RTPSendStream` and the local
    /// server's relay send none before their first packet, so the first one already maps a
    /// captured timestamp).
    public var minimumSenderReports: Int

    /// Creates a configuration; see the properties for the defaults.
    public init(
      maxExtraDelay: Duration = .seconds(1), maxChangePerSecond: Duration = .milliseconds(20),
      updateInterval: Duration = .milliseconds(100), alignsAtStart: Bool = true,
      maxRelativeDelay: Duration = .seconds(5), smoothing: Double = 0.1,
      minimumSenderReports: Int = 1
    ) {
      self.minimumSenderReports = max(1, minimumSenderReports)
      self.maxExtraDelay = maxExtraDelay
      self.maxChangePerSecond = maxChangePerSecond
      self.updateInterval = updateInterval
      self.alignsAtStart = alignsAtStart
      self.maxRelativeDelay = maxRelativeDelay
      self.smoothing = min(1, max(0.01, smoothing))
    }
  }

  /// Which stream an SR belongs to.
  public enum Media: Sendable, Equatable {
    /// The audio stream (Opus, 48 kHz RTP clock).
    case audio
    /// The video stream (VP8, 90 kHz RTP clock).
    case video
  }

  /// The configuration in use.
  public let configuration: Configuration
  /// Extra playout delay the audio should get now (zero when audio is not ahead).
  public private(set) var audioExtraDelay: MediaDuration = .zero
  /// Extra playout delay the video should get now (zero when video is not ahead).
  public private(set) var videoExtraDelay: MediaDuration = .zero
  /// The streams' own delay difference, seconds, averaged: how much later video comes out than
  /// audio without any extra delay (negative: video first). nil until both streams have an SR
  /// and a played frame.
  public private(set) var relativeDelay: Double?

  private var sync = AVSync()
  private var audioApplied = 0.0
  private var videoApplied = 0.0
  private var lastUpdate: Double?
  private var aligned = false
  private var audioReports = 0
  private var videoReports = 0
  /// `configuration.updateInterval` in seconds, converted once.
  private let updateIntervalSeconds: Double

  /// Creates a synchronizer.
  public init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
    updateIntervalSeconds = MediaDuration(configuration.updateInterval).seconds
  }

  /// How much later video is shown than audio captured at the same instant, as played now
  /// (extra delays included), seconds; nil until both streams are measured.
  public var playedOffset: Double? { sync.offset }

  /// Records `media`'s SR: NTP time and RTP timestamp (`RTPReceiveSource.lastSenderReport`),
  /// `clockRate` in Hz.
  public mutating func senderReport(
    _ media: Media, ntp: NTPTimestamp, rtpTimestamp: UInt32, clockRate: Int
  ) {
    switch media {
    case .audio:
      audioReports += 1
      sync.updateAudio(senderReport: ntp, rtpTimestamp: rtpTimestamp, clockRate: clockRate)
    case .video:
      videoReports += 1
      sync.updateVideo(senderReport: ntp, rtpTimestamp: rtpTimestamp, clockRate: clockRate)
    }
  }

  /// The audio frame with RTP timestamp `rtpTimestamp` (48 kHz) was played at `now`, after
  /// `appliedExtraDelay` of the extra delay.
  public mutating func audioPlayed(
    rtpTimestamp: UInt32, appliedExtraDelay: MediaDuration, at now: MediaInstant
  ) {
    sync.audioPlayed(rtpTimestamp: rtpTimestamp, at: now)
    audioApplied = appliedExtraDelay.seconds
    update(seconds: now.seconds)
  }

  /// The video frame with RTP timestamp `rtpTimestamp` (90 kHz) was rendered at `now`, after
  /// being held `appliedExtraDelay`.
  public mutating func videoRendered(
    rtpTimestamp: UInt32, appliedExtraDelay: MediaDuration, at now: MediaInstant
  ) {
    sync.videoRendered(rtpTimestamp: rtpTimestamp, at: now)
    videoApplied = appliedExtraDelay.seconds
    update(seconds: now.seconds)
  }

  /// Recomputes the extra delays when `updateInterval` has passed since the last time.
  public mutating func update(now: MediaInstant) {
    update(seconds: now.seconds)
  }

  /// `update(now:)` with `now` as `MediaInstant.seconds`.
  private mutating func update(seconds: Double) {
    let elapsed = lastUpdate.map { seconds - $0 }
    if let elapsed, elapsed < updateIntervalSeconds { return }
    guard let offset = sync.offset,
      min(audioReports, videoReports) >= configuration.minimumSenderReports
    else { return }
    // What the difference would be without the delays those frames got.
    let base = offset - videoApplied + audioApplied
    guard abs(base) <= MediaDuration(configuration.maxRelativeDelay).seconds else { return }
    lastUpdate = seconds
    let average = relativeDelay.map { $0 + configuration.smoothing * (base - $0) } ?? base
    relativeDelay = average
    let cap = MediaDuration(configuration.maxExtraDelay).seconds
    let audioTarget = min(max(average, 0), cap)
    let videoTarget = min(max(-average, 0), cap)
    if !aligned && configuration.alignsAtStart {
      audioExtraDelay = .seconds(audioTarget)
      videoExtraDelay = .seconds(videoTarget)
    } else {
      let step = MediaDuration(configuration.maxChangePerSecond).seconds * min(elapsed ?? 0, 1)
      audioExtraDelay = .seconds(
        Self.move(audioExtraDelay.seconds, to: audioTarget, by: step))
      videoExtraDelay = .seconds(
        Self.move(videoExtraDelay.seconds, to: videoTarget, by: step))
    }
    aligned = true
  }

  private static func move(_ value: Double, to target: Double, by step: Double) -> Double {
    value + min(max(target - value, -step), step)
  }
}
