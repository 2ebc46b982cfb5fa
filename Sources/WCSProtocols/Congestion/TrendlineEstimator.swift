import Foundation

/// Delay-based overuse signal (draft-ietf-rmcat-gcc-02 §5.3–5.4, as libwebrtc's trendline
/// filter): the slope of the smoothed accumulated one-way delay variation over the last
/// `windowSize` packet groups, compared with an adaptive threshold.
public struct TrendlineEstimator: Sendable {
  /// Network usage as the overuse detector sees it (§5.4).
  public enum BandwidthUsage: Sendable, Equatable {
    /// Delay is not trending.
    case normal
    /// Delay grows: the send rate exceeds the path capacity.
    case overusing
    /// Delay shrinks: queues are draining.
    case underusing
  }

  /// Groups in the regression window.
  public let windowSize: Int
  /// Exponential smoothing of the accumulated delay (libwebrtc: 0.9).
  public let smoothingCoefficient: Double
  /// Multiplier applied to the slope before thresholding (libwebrtc: 4).
  public let thresholdGain: Double
  /// Threshold gain when |trend| exceeds the threshold (k_up, per ms; libwebrtc's trendline:
  /// 0.0087).
  public let thresholdIncreaseGain: Double
  /// Threshold gain when |trend| is below the threshold (k_down, per ms; libwebrtc's trendline:
  /// 0.039).
  ///
  /// The draft's K_u = 0.01 / K_d = 0.00018 (§5.4) belong to its Kalman offset estimate; with
  /// this trendline they let one capacity drop or queue drain pump the threshold to ~30 and keep
  /// it there for seconds, so the next overuse builds a 150 ms queue before it is seen. With
  /// libwebrtc's trendline gains the threshold falls back to |trend| (at least 6) within ~100 ms.
  public let thresholdDecreaseGain: Double

  /// Current detector state.
  public private(set) var state: BandwidthUsage = .normal
  /// Current adaptive threshold, milliseconds (clamped to 6…600, starts at 12.5).
  public private(set) var threshold: Double = 12.5
  /// Last modified trend (slope × min(groups, 60) × gain), milliseconds.
  public private(set) var modifiedTrend: Double = 0

  private var deltaCount = 0
  private var firstArrival: MediaInstant?
  private var accumulatedDelay: Double = 0
  private var smoothedDelay: Double = 0
  private var samples: [(x: Double, y: Double)] = []
  private var previousTrend: Double = 0
  private var timeOverUsing: Double = -1
  private var overuseCounter = 0
  private var lastThresholdUpdate: MediaInstant?

  /// Creates an estimator with libwebrtc's trendline constants unless overridden.
  public init(
    windowSize: Int = 20, smoothingCoefficient: Double = 0.9, thresholdGain: Double = 4,
    thresholdIncreaseGain: Double = 0.0087, thresholdDecreaseGain: Double = 0.039
  ) {
    self.windowSize = max(2, windowSize)
    self.smoothingCoefficient = smoothingCoefficient
    self.thresholdGain = thresholdGain
    self.thresholdIncreaseGain = thresholdIncreaseGain
    self.thresholdDecreaseGain = thresholdDecreaseGain
  }

  /// Feeds the deltas of one group pair and returns the updated state.
  @discardableResult
  public mutating func update(_ deltas: InterArrivalGrouper.Deltas) -> BandwidthUsage {
    let sendDeltaMs = deltas.sendDelta.microsecondsValue / 1000
    let delayVariationMs = (deltas.arrivalDelta - deltas.sendDelta).microsecondsValue / 1000
    deltaCount = min(deltaCount + 1, 1000)
    let origin = firstArrival ?? deltas.arrivalTime
    firstArrival = origin
    accumulatedDelay += delayVariationMs
    smoothedDelay =
      smoothingCoefficient * smoothedDelay + (1 - smoothingCoefficient) * accumulatedDelay
    samples.append(((deltas.arrivalTime - origin).microsecondsValue / 1000, smoothedDelay))
    if samples.count > windowSize { samples.removeFirst(samples.count - windowSize) }
    var trend = previousTrend
    if samples.count == windowSize, let slope = linearFitSlope() { trend = slope }
    detect(trend: trend, sendDeltaMs: sendDeltaMs, now: deltas.arrivalTime)
    return state
  }

  private func linearFitSlope() -> Double? {
    let n = Double(samples.count)
    let meanX = samples.reduce(0) { $0 + $1.x } / n
    let meanY = samples.reduce(0) { $0 + $1.y } / n
    var numerator = 0.0
    var denominator = 0.0
    for sample in samples {
      numerator += (sample.x - meanX) * (sample.y - meanY)
      denominator += (sample.x - meanX) * (sample.x - meanX)
    }
    return denominator == 0 ? nil : numerator / denominator
  }

  private mutating func detect(trend: Double, sendDeltaMs: Double, now: MediaInstant) {
    guard deltaCount >= 2 else {
      state = .normal
      return
    }
    modifiedTrend = Double(min(deltaCount, 60)) * trend * thresholdGain
    if modifiedTrend > threshold {
      timeOverUsing = timeOverUsing < 0 ? sendDeltaMs / 2 : timeOverUsing + sendDeltaMs
      overuseCounter += 1
      // Overuse needs to persist (>10 ms, >1 sample) and not be already easing.
      if timeOverUsing > 10, overuseCounter > 1, trend >= previousTrend {
        timeOverUsing = 0
        overuseCounter = 0
        state = .overusing
      }
    } else if modifiedTrend < -threshold {
      timeOverUsing = -1
      overuseCounter = 0
      state = .underusing
    } else {
      timeOverUsing = -1
      overuseCounter = 0
      state = .normal
    }
    previousTrend = trend
    updateThreshold(now: now)
  }

  private mutating func updateThreshold(now: MediaInstant) {
    let magnitude = abs(modifiedTrend)
    let last = lastThresholdUpdate ?? now
    lastThresholdUpdate = now
    // Spikes (e.g. a route change) must not drag the threshold up.
    if magnitude > threshold + 15 { return }
    let gain = magnitude < threshold ? thresholdDecreaseGain : thresholdIncreaseGain
    let elapsedMs = min(max((now - last).microsecondsValue / 1000, 0), 100)
    threshold += gain * (magnitude - threshold) * elapsedMs
    threshold = min(max(threshold, 6), 600)
  }
}
