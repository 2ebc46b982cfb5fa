/// Releases a file's samples in real time: given how long publishing has been running on the
/// driver's clock, says which samples are due. Pure logic over a `MediaSampleSource`; the
/// driver owns the clock and the timer (`nextDeadline()` tells it when to come back).
///
/// With `loops`, the source is rewound at its end and the next pass continues the timeline:
/// its timestamps are offset by the length of the passes before (the container duration, or
/// the end of the last sample if that is later), so presentation times keep increasing.
///
/// Not thread-safe: use from the driver's thread.
public final class MediaFilePacer {
  /// Whether the source starts over at its end.
  public let loops: Bool
  /// Times the source was rewound. The pacer looks one sample ahead, so this counts up as
  /// soon as the last sample of a pass is released.
  public private(set) var loopsCompleted = 0
  /// True when the source ended (and does not loop) and every sample was released.
  public private(set) var isFinished = false

  private let source: any MediaSampleSource
  private var lookahead: MediaSample?
  private var loopOffset = 0.0
  private var loopEnd = 0.0
  private var lastVideoSeconds: Double?
  private var lastVideoStep = 0.0
  private var samplesThisPass = 0

  /// Paces `source` from time zero on the driver's clock.
  public init(source: any MediaSampleSource, loops: Bool) {
    self.source = source
    self.loops = loops
  }

  /// The samples whose presentation time is at or before `now` (time since publishing started,
  /// on the driver's clock), in order, with timestamps continuing across loops. Throws what the
  /// source throws.
  public func dueSamples(at now: Duration) throws -> [MediaSample] {
    let nowSeconds = now / .seconds(1)
    var due: [MediaSample] = []
    while let next = try peek(), next.ptsSeconds <= nowSeconds {
      due.append(next)
      lookahead = nil
    }
    return due
  }

  /// When the next sample is due (time since publishing started), or nil when finished.
  /// Throws what the source throws.
  public func nextDeadline() throws -> Duration? {
    guard let next = try peek() else { return nil }
    return .nanoseconds(Int64((next.ptsSeconds * 1e9).rounded()))
  }

  private func peek() throws -> MediaSample? {
    if let lookahead { return lookahead }
    if isFinished { return nil }
    var sample = try source.nextSample()
    if sample == nil && loops && samplesThisPass > 0 {
      try source.rewind()
      loopOffset = max(loopOffset + (source.duration ?? 0), loopEnd)
      loopsCompleted += 1
      samplesThisPass = 0
      lastVideoSeconds = nil
      sample = try source.nextSample()
    }
    guard let sample else {
      isFinished = true
      return nil
    }
    samplesThisPass += 1
    let pts = sample.ptsSeconds
    let end: Double
    switch sample {
    case .audio(let chunk):
      end = pts + chunk.durationSeconds
    case .video:
      if let last = lastVideoSeconds, pts > last { lastVideoStep = pts - last }
      lastVideoSeconds = pts
      end = pts + lastVideoStep
    }
    loopEnd = max(loopEnd, loopOffset + end)
    let paced = sample.withPTS(loopOffset + pts)
    lookahead = paced
    return paced
  }

}
