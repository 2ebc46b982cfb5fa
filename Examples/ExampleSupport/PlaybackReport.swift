import FPWCSApi2Swift
import Foundation
import WCSMedia

/// Freezes of a played video: gaps without a new picture longer than `threshold`, measured
/// from the pictures' arrival times, the wait for the first picture and the still picture at
/// the end of the run included.
///
/// A value fed one arrival at a time (`picture(at:)`), so a long run keeps four numbers, not
/// every arrival.
public struct FreezeMeter: Sendable, Equatable {
  /// A gap longer than this is a freeze, seconds: a fixed floor (not a multiple of the frame
  /// interval), so a report compares across frame rates; half a second of a still picture is
  /// plainly visible, and longer than the frame interval of any rate above 2 fps.
  public static let threshold = 0.5

  /// Pictures seen.
  public private(set) var pictures = 0
  /// Arrival of the first picture, seconds.
  public private(set) var first: Double?
  /// Arrival of the latest picture, seconds.
  public private(set) var last: Double?
  private var innerFreezes = 0
  private var longestInnerGap = 0.0

  /// No pictures yet.
  public init() {}

  /// Adds a picture that arrived at `arrival` seconds (any clock, non-decreasing).
  public mutating func picture(at arrival: Double) {
    pictures += 1
    if let last {
      let gap = max(0, arrival - last)
      if gap > Self.threshold { innerFreezes += 1 }
      longestInnerGap = max(longestInnerGap, gap)
    } else {
      first = arrival
    }
    last = max(arrival, last ?? arrival)
  }

  /// The freezes of a run that could show pictures from `start` (PLAYING) to `end` (the end of
  /// playback), on the clock of the arrivals. Without pictures the whole run is one freeze.
  public func report(from start: Double, to end: Double) -> FreezeReport {
    guard let first, let last else {
      let span = max(0, end - start)
      return FreezeReport(count: span > Self.threshold ? 1 : 0, longest: span, pictures: 0)
    }
    var count = innerFreezes
    var longest = longestInnerGap
    for edge in [first - start, end - last] {
      let gap = max(0, edge)
      if gap > Self.threshold { count += 1 }
      longest = max(longest, gap)
    }
    return FreezeReport(count: count, longest: longest, pictures: pictures)
  }
}

/// The outcome of `FreezeMeter.report(from:to:)`.
public struct FreezeReport: Sendable, Equatable {
  /// Gaps longer than `FreezeMeter.threshold`.
  public var count: Int
  /// The longest gap without a new picture, seconds (a freeze when over the threshold).
  public var longest: Double
  /// Pictures played.
  public var pictures: Int

  /// `"2 (longest 1.234 s)"` or `"0 (longest gap 0.067 s)"`.
  public var description: String {
    count > 0
      ? String(format: "%d (longest %.3f s)", count, longest)
      : String(format: "0 (longest gap %.3f s)", longest)
  }
}

/// The share of the frames that played: decoded out of what the sender sent when it is known,
/// else out of what its frame rate makes due over the run.
public struct DecodedShare: Sendable, Equatable {
  /// Frames decoded and played.
  public var decoded: Int
  /// Frames that should have played.
  public var expected: Int
  /// What `expected` is: `"sent"` or `"due at 30 fps"`.
  public var basis: String

  /// Decoded out of `sent` frames (`basis`: which ones, e.g. `"sent since PLAYING"`).
  public static func ofSent(decoded: Int, sent: Int, basis: String = "sent") -> DecodedShare {
    DecodedShare(decoded: decoded, expected: max(0, sent), basis: basis)
  }

  /// Decoded out of the frames `frameRate` makes due in `seconds`.
  public static func ofDue(decoded: Int, seconds: Double, frameRate: Double) -> DecodedShare {
    let due = seconds.isFinite && frameRate.isFinite ? max(0, seconds * frameRate) : 0
    return DecodedShare(
      decoded: decoded, expected: Int(min(1e12, due.rounded())),
      basis: String(
        format: frameRate == frameRate.rounded() ? "due at %.0f fps" : "due at %.2f fps",
        frameRate))
  }

  /// Percent decoded, 0...100 (a receiver that got more than was due counts as 100; nothing
  /// due counts as 100 when nothing was missed, 0 otherwise).
  public var percent: Double {
    guard expected > 0 else { return decoded > 0 ? 100 : 0 }
    return min(100, Double(decoded) * 100 / Double(expected))
  }

  /// `"232 / 240 sent (96.7 %)"`.
  public var description: String {
    String(format: "%d / %d %@ (%.1f %%)", decoded, expected, basis, percent)
  }
}

/// Frame rate of a received video from its RTP timestamps (90 kHz, RFC 3550 §5.1): the time the
/// steps between consecutive pictures span over the frame intervals they hold, each step
/// counted as the whole number of median steps nearest to it, so lost frames (double steps) do
/// not bend it and capture jitter (a late picture, then an early one) averages out.
public struct FrameRateEstimate: Sendable {
  /// Steps counted and summed per bucket of `bucketWidth` ticks.
  private var buckets: [UInt32: (count: Int, sum: Int)] = [:]
  private var previous: UInt32?
  /// Buckets kept; a stream with more (a source without a steady rate) keeps the first ones.
  static let maximumBuckets = 64
  /// 1/3 ms at 90 kHz.
  static let bucketWidth: UInt32 = 30

  /// No pictures yet.
  public init() {}

  /// Adds the RTP timestamp of the next picture.
  public mutating func picture(rtpTimestamp: UInt32) {
    defer { previous = rtpTimestamp }
    guard let previous else { return }
    let step = rtpTimestamp &- previous
    // Reordered or wrapped-backwards steps and steps over 1 s are not frame intervals.
    guard step > 0, step <= 90_000 else { return }
    let bucket = step / Self.bucketWidth
    guard buckets[bucket] != nil || buckets.count < Self.maximumBuckets else { return }
    buckets[bucket, default: (0, 0)].count += 1
    buckets[bucket, default: (0, 0)].sum += Int(step)
  }

  /// Frames per second (to the nearest whole number when within 0.05 % of it), `nil` before
  /// two pictures.
  public var framesPerSecond: Double? {
    let sorted = buckets.sorted { $0.key < $1.key }
    let total = sorted.reduce(0) { $0 + $1.value.count }
    guard total > 0 else { return nil }
    var seen = 0
    var typical = 0.0
    for (_, bucket) in sorted {
      seen += bucket.count
      if seen * 2 >= total {
        typical = Double(bucket.sum) / Double(bucket.count)
        break
      }
    }
    var intervals = 0.0
    var span = 0.0
    for (_, bucket) in buckets {
      let step = Double(bucket.sum) / Double(bucket.count)
      intervals += Double(bucket.count) * max(1, (step / typical).rounded())
      span += Double(bucket.sum)
    }
    let rate = 90_000 * intervals / span
    return abs(rate - rate.rounded()) <= rate * 0.000_5 ? rate.rounded() : rate
  }
}

/// Pass/fail of a played stream: the decoded share and the longest freeze against the limits.
public struct PlaybackLimits: Sendable, Equatable {
  /// Least share of frames decoded, percent.
  public var minDecodedPercent: Double
  /// Longest freeze allowed, seconds.
  public var maxFreeze: Double

  /// - Parameters:
  ///   - minDecodedPercent: 0...100.
  ///   - maxFreeze: seconds, > 0.
  public init(minDecodedPercent: Double = 90, maxFreeze: Double = 2) {
    self.minDecodedPercent = minDecodedPercent
    self.maxFreeze = maxFreeze
  }

  /// The `--min-decoded PCT` and `--max-freeze S` lines of a `--help` text.
  public static let usage = """
        --min-decoded PCT  fail when fewer than this percent of the frames were decoded
                           (default 90)
        --max-freeze S     fail when the played video showed no new picture for longer than
                           this (default 2; the wait for the first picture and the end count)
    """

  /// Reads `--min-decoded` (0...100, default 90) and `--max-freeze` (seconds > 0, default 2).
  /// - Throws: `ExampleError.usage` for a value that is not a number or out of range.
  public init(_ arguments: ExampleArguments) throws(ExampleError) {
    self.init(
      minDecodedPercent: try arguments.double("min-decoded", default: 90),
      maxFreeze: try arguments.double("max-freeze", default: 2))
    guard (0...100).contains(minDecodedPercent) else {
      throw .usage("--min-decoded wants a percent from 0 to 100, got \(minDecodedPercent)")
    }
    guard maxFreeze > 0 else {
      throw .usage("--max-freeze wants a positive number of seconds, got \(maxFreeze)")
    }
  }

  /// The reasons `share` and `freezes` fail these limits (empty when they pass); `kind` names
  /// the media (`"frames"`, `"audio frames"`).
  public func failures(share: DecodedShare, freezes: FreezeReport?, kind: String = "frames")
    -> [String]
  {
    var reasons: [String] = []
    if share.percent < minDecodedPercent {
      reasons.append(
        String(
          format: "only %.1f %% of the %@ were decoded (%d / %d %@; at least %g %% needed)",
          share.percent, kind, share.decoded, share.expected, share.basis, minDecodedPercent))
    }
    if let freezes, freezes.longest > maxFreeze {
      reasons.append(
        String(
          format: "the video froze for %.3f s (more than %g s)", freezes.longest, maxFreeze))
    }
    return reasons
  }
}

/// The loss-recovery lines of a summary: NACKs, retransmissions, PLIs and key frames on both
/// sides, from the native engine's detailed statistics (`FPWCSApi2StreamStats.detailed`).
public enum RecoveryReport {
  /// Adds `NACKs (player)`, `NACKs (publisher)`, `PLIs` and `Key frames` (the last two only
  /// with `video`) for whichever side is known; a side without statistics (another engine, or
  /// not in this run) is left out.
  public static func add(
    publisher: NativeMediaConnection.DetailedStatistics?,
    player: NativeMediaConnection.DetailedStatistics?, video: Bool = true,
    to summary: inout ExampleSummary
  ) {
    if let player {
      summary.add(
        "NACKs (player)",
        "\(player.nacksSent) sent for \(player.nackedPacketsRequested) packets; "
          + "\(player.nackedPacketsRecovered) of them arrived after all "
          + "(\(player.rtxPacketsReceived) by RTX), "
          + "\(player.nackedPacketsGivenUp) given up")
      if let delay = playoutDelay(player) { summary.add("Playout delay (player)", delay) }
    }
    if let publisher {
      summary.add(
        "NACKs (publisher)",
        "\(publisher.nackedPacketsReceived) packets asked for; "
          + "\(publisher.retransmissions) retransmitted")
    }
    guard video else { return }
    var plis: [String] = []
    if let player { plis.append("player sent \(player.plisSent)") }
    if let publisher {
      plis.append("publisher received \(publisher.keyFrameRequestsReceived) PLI/FIR")
    }
    if !plis.isEmpty { summary.add("PLIs", plis.joined(separator: "; ")) }
    var keyFrames: [String] = []
    if let publisher {
      keyFrames.append(
        "publisher sent \(publisher.keyFramesEncoded) (\(publisher.keyFrameRequests) on request)")
    }
    if let player { keyFrames.append("player decoded \(player.keyFramesDecoded)") }
    if !keyFrames.isEmpty { summary.add("Key frames", keyFrames.joined(separator: "; ")) }
  }

  /// The player's jitter-buffer and audio playout delays at the end (`"video 42 ms (target
  /// 45 ms), audio 100 ms (target 100 ms)"`), `nil` when it reports none.
  public static func playoutDelay(_ player: NativeMediaConnection.DetailedStatistics) -> String? {
    func ms(_ seconds: Double?) -> String {
      seconds.map { "\(Int(($0 * 1000).rounded())) ms" } ?? "?"
    }
    var parts: [String] = []
    if let video = player.videoJitterBufferDelay {
      parts.append("video \(ms(video)) (target \(ms(player.videoJitterBufferTargetDelay)))")
    }
    if let audio = player.audioPlayoutDelay {
      parts.append("audio \(ms(audio)) (target \(ms(player.audioPlayoutTargetDelay)))")
    }
    return parts.isEmpty ? nil : parts.joined(separator: ", ")
  }

  /// Adds the played video's `Frames decoded` share and its `Freezes` (see `FreezeMeter`),
  /// and returns them for a pass/fail decision.
  /// - Parameters:
  ///   - played: the player's renderer.
  ///   - sent: frames the publisher sent when known (its `framesSent`) and what they are
  ///     (`"sent"`), else `nil`: the share is then taken against the frame rate (`frameRate`,
  ///     else the one the RTP timestamps show).
  ///   - start: PLAYING, seconds on the log's clock; `end`: the end of playback.
  @discardableResult
  public static func addVideo(
    played: VideoFileRenderer, sent: (count: Int, basis: String)?, frameRate: Double? = nil,
    start: Double, end: Double,
    to summary: inout ExampleSummary
  ) -> (share: DecodedShare, freezes: FreezeReport) {
    let freezes = played.freezes(from: start, to: end)
    let share: DecodedShare
    if let sent {
      share = .ofSent(decoded: played.frameCount, sent: sent.count, basis: sent.basis)
    } else {
      share = .ofDue(
        decoded: played.frameCount, seconds: end - start,
        frameRate: frameRate ?? played.estimatedFrameRate ?? 30)
    }
    summary.add("Frames decoded", share.description)
    summary.add("Freezes (no new picture > 0.5 s)", freezes.description)
    return (share, freezes)
  }
}

/// The counters of a publisher and a player read together at the end of playback, before the
/// streams stop (a stopped stream has no connection to read).
public struct PlaybackStats: Sendable {
  /// The publisher's detailed statistics, `nil` when it is not in this run or has none.
  public var publisher: NativeMediaConnection.DetailedStatistics?
  /// The publisher's statistics when the player reached PLAYING: what it sent before then
  /// could never reach the player, so it is not counted as sent to it.
  public var publisherAtPlaying: NativeMediaConnection.DetailedStatistics?
  /// The player's detailed statistics.
  public var player: NativeMediaConnection.DetailedStatistics?
  /// The player's transport counters.
  public var playerConnection: MediaConnectionStats?
  /// When they were read: the end of playback, seconds on the log's clock.
  public var end: Double

  /// Reads both streams now (each read waits up to 2 s); `atPlaying` is what
  /// `publisherNow(_:)` read when the player reached PLAYING.
  public static func read(
    publisher: FPWCSApi2Stream?, player: FPWCSApi2Stream?,
    atPlaying: NativeMediaConnection.DetailedStatistics? = nil, log: ExampleLog
  ) -> PlaybackStats {
    let end = log.elapsed
    let played = ExampleStats.read(player)
    return PlaybackStats(
      publisher: ExampleStats.read(publisher)?.detailed, publisherAtPlaying: atPlaying,
      player: played?.detailed, playerConnection: played?.connection, end: end)
  }

  /// The publisher's detailed statistics now (read at PLAYING for `read(atPlaying:)`).
  public static func publisherNow(_ publisher: FPWCSApi2Stream?)
    -> NativeMediaConnection.DetailedStatistics?
  {
    ExampleStats.read(publisher)?.detailed
  }

  /// Video frames the publisher sent to the player (since PLAYING when known), `nil` when
  /// unknown.
  public var framesSent: Int? { sent(\.framesSent) }

  /// Opus frames the publisher sent to the player (since PLAYING when known), `nil` when
  /// unknown.
  public var audioFramesSent: Int? { sent(\.audioFramesEncoded) }

  /// What `basis` a share against `framesSent` / `audioFramesSent` has.
  public var sentBasis: String { publisherAtPlaying == nil ? "sent" : "sent since PLAYING" }

  private func sent(_ counter: KeyPath<NativeMediaConnection.DetailedStatistics, Int>) -> Int? {
    guard let publisher, publisher[keyPath: counter] > 0 else { return nil }
    return max(0, publisher[keyPath: counter] - (publisherAtPlaying?[keyPath: counter] ?? 0))
  }

  /// Adds the played video's share and freezes (from PLAYING at `start` to `end`; nothing when
  /// it never played) and the recovery lines (`RecoveryReport.add`); returns the failures of
  /// `limits` when given.
  @discardableResult
  public func addVideo(
    played: VideoFileRenderer, start: Double?, frameRate: Double? = nil,
    limits: PlaybackLimits? = nil, to summary: inout ExampleSummary
  ) -> [String] {
    var failures: [String] = []
    if let start {
      let (share, freezes) = RecoveryReport.addVideo(
        played: played, sent: framesSent.map { ($0, sentBasis) }, frameRate: frameRate,
        start: start, end: end, to: &summary)
      if let limits { failures = limits.failures(share: share, freezes: freezes) }
    }
    RecoveryReport.add(publisher: publisher, player: player, to: &summary)
    return failures
  }
}
