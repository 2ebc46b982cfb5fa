/// A one-dimensional Kalman filter with a constant-value model: smooths a noisy bitrate series.
/// `processNoise`/`measurementNoise` set how fast it follows (steady-state gain ≈ 0.27 with the
/// defaults); only their ratio matters for the estimate.
struct ScalarKalmanFilter: Sendable {
  var processNoise = 0.1
  var measurementNoise = 1.0
  private(set) var estimate: Double?
  private var errorCovariance = 1.0

  /// Feeds one measurement and returns the new estimate (the first measurement is taken as is).
  mutating func update(_ measurement: Double) -> Double {
    guard let previous = estimate else {
      estimate = measurement
      return measurement
    }
    let prior = errorCovariance + processNoise
    let gain = prior / (prior + measurementNoise)
    let next = previous + gain * (measurement - previous)
    errorCovariance = (1 - gain) * prior
    estimate = next
    return next
  }
}

/// Connection quality from the client's and the server's view of a stream's video bitrate
/// (wcs-protocol.md §4.7, the Web SDK's classification): both series are smoothed, then their
/// relative difference classifies the link. Sans-I/O: the owner feeds both rates.
struct ConnectionQualityEstimator: Sendable {
  /// Below this rate (bits per second) on either side the relative difference is noisy, so only
  /// a large gap counts.
  static let lowBitrate = 50_000.0
  private var client = ScalarKalmanFilter()
  private var server = ScalarKalmanFilter()

  /// Feeds one pair of rates in bits per second: `clientBitrate` from local RTP statistics,
  /// `serverBitrate` from `inboundVideoRate`/`outboundVideoRate`. Returns the class and the two
  /// smoothed rates.
  mutating func update(clientBitrate: Double, serverBitrate: Double) -> (
    quality: kFPWCSConnectionQuality, clientFiltered: Double, serverFiltered: Double
  ) {
    let c = client.update(max(clientBitrate, 0))
    let s = server.update(max(serverBitrate, 0))
    return (Self.classify(clientFiltered: c, serverFiltered: s), c, s)
  }

  /// The class of two smoothed rates: Unknown without data; when either is below `lowBitrate`,
  /// Bad above 150 % difference else Perfect; otherwise Bad above 50 %, Good above 20 %,
  /// Perfect below. The difference is relative to the smaller of the two rates.
  static func classify(clientFiltered: Double, serverFiltered: Double) -> kFPWCSConnectionQuality {
    guard clientFiltered > 0 || serverFiltered > 0 else { return .fpwcsConnectionQualityUnknown }
    let reference = max(min(clientFiltered, serverFiltered), 1)
    let difference = abs(clientFiltered - serverFiltered) / reference * 100
    if clientFiltered < lowBitrate || serverFiltered < lowBitrate {
      return difference > 150 ? .fpwcsConnectionQualityBad : .fpwcsConnectionQualityPerfect
    }
    if difference > 50 { return .fpwcsConnectionQualityBad }
    if difference > 20 { return .fpwcsConnectionQualityGood }
    return .fpwcsConnectionQualityPerfect
  }
}
