/// Connection quality as FPWCSApi2 reports it (`CONNECTION_QUALITY` event).
public enum ConnectionQuality: String, Sendable, Equatable {
  /// Measured and expected rates agree (within 20 %).
  case perfect = "PERFECT"
  /// 20–50 % apart.
  case good = "GOOD"
  /// More than 50 % apart (or more than 150 % at very low rates).
  case bad = "BAD"
  /// No usable measurement yet.
  case unknown = "UNKNOWN"
}

/// Compares what the server says it receives or sends (`inboundVideoRate` /
/// `outboundVideoRate` `videoRate`) with the local byte counters, the way the Web SDK's
/// `detectConnectionQuality` does (wcs-protocol.md §4.7): the ratio is smoothed by a scalar
/// Kalman filter, then a difference above 20 % is GOOD, above 50 % BAD; if either rate is
/// below 50 kbps only a difference above 150 % is BAD, anything else PERFECT.
public struct ConnectionQualityEstimator: Sendable {
  /// Rates below this (bps) are "low" and judged leniently.
  public let lowBitrate: Double
  /// Kalman process noise of the ratio (how fast the true ratio may move per sample).
  public let processNoise: Double
  /// Kalman measurement noise of one ratio sample.
  public let measurementNoise: Double

  /// Last classification.
  public private(set) var quality: ConnectionQuality = .unknown
  /// Smoothed measured/expected ratio (`nil` before the first sample).
  public private(set) var smoothedRatio: Double?

  private var covariance: Double = 1

  /// Creates an estimator; `lowBitrate` in bps.
  public init(
    lowBitrate: Double = 50_000, processNoise: Double = 0.01, measurementNoise: Double = 0.05
  ) {
    self.lowBitrate = lowBitrate
    self.processNoise = processNoise
    self.measurementNoise = measurementNoise
  }

  /// Adds one sample: `measured` = the server's `videoRate`, `expected` = the local rate over
  /// the same interval (both bps). Returns the new quality; UNKNOWN while `expected` is 0.
  @discardableResult
  public mutating func update(measured: Double, expected: Double) -> ConnectionQuality {
    guard expected > 0, measured >= 0, measured.isFinite, expected.isFinite else {
      if smoothedRatio == nil { quality = .unknown }
      return quality
    }
    let ratio = measured / expected
    if let previous = smoothedRatio {
      covariance += processNoise
      let gain = covariance / (covariance + measurementNoise)
      smoothedRatio = previous + gain * (ratio - previous)
      covariance *= 1 - gain
    } else {
      smoothedRatio = ratio
      covariance = measurementNoise
    }
    let difference = abs(1 - (smoothedRatio ?? ratio)) * 100
    if measured < lowBitrate || expected < lowBitrate {
      quality = difference > 150 ? .bad : .perfect
    } else if difference > 50 {
      quality = .bad
    } else if difference > 20 {
      quality = .good
    } else {
      quality = .perfect
    }
    return quality
  }
}
