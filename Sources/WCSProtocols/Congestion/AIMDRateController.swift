import Foundation

/// The delay-based rate controller (draft-ietf-rmcat-gcc-02 §5.5, libwebrtc's AIMD): increases
/// multiplicatively (8 %/s) while the link capacity is unknown, additively (half a packet per
/// response time) once an overuse has measured it, and on overuse drops to β = 0.85 × the
/// acknowledged throughput.
///
/// Steady state on a fixed bottleneck is therefore a sawtooth: β × capacity after each back-off,
/// a slow additive climb, and a peak a few percent above capacity (the queue only grows, and the
/// trendline only sees overuse, once the send rate exceeds the capacity). Its mean over one
/// period is about (β + 1.03) / 2 ≈ 94 % of capacity, whatever the window; shorter windows see
/// the phase of the sawtooth.
public struct AIMDRateController: Sendable {
  /// Controller state (§5.5).
  public enum State: Sendable, Equatable {
    /// Keep the rate (after a decrease, or while queues drain).
    case hold
    /// Grow the rate.
    case increase
    /// Cut the rate.
    case decrease
  }

  /// Decrease factor applied to the acknowledged throughput on overuse.
  public let beta: Double
  /// Multiplicative increase per second.
  public let multiplicativeIncreasePerSecond: Double

  /// Current delay-based rate, bits per second.
  public private(set) var bitrate: Double
  /// Current state.
  public private(set) var state: State = .increase
  /// Lower/upper bounds applied to `bitrate`, bits per second.
  public private(set) var bounds: ClosedRange<Double>

  private var lastChange: MediaInstant?
  private var linkCapacity = LinkCapacityEstimate()

  /// Creates a controller starting at `startBitrate` (bps) within `bounds` (bps).
  public init(
    startBitrate: Double, bounds: ClosedRange<Double>, beta: Double = 0.85,
    multiplicativeIncreasePerSecond: Double = 1.08
  ) {
    self.bounds = bounds
    self.bitrate = min(max(startBitrate, bounds.lowerBound), bounds.upperBound)
    self.beta = beta
    self.multiplicativeIncreasePerSecond = multiplicativeIncreasePerSecond
  }

  /// Whether the link capacity estimate is known (so increases are additive).
  public var isNearConvergence: Bool { linkCapacity.estimate != nil }

  /// The link capacity measured at past overuses (reset when the throughput leaves its ±3σ band).
  public var linkCapacityEstimate: LinkCapacityEstimate { linkCapacity }

  /// Changes the bounds (bps) and clamps the current rate into them.
  public mutating func setBounds(_ bounds: ClosedRange<Double>) {
    self.bounds = bounds
    bitrate = min(max(bitrate, bounds.lowerBound), bounds.upperBound)
  }

  /// Forces the rate (e.g. from a probe result), bps.
  public mutating func setEstimate(_ value: Double, now: MediaInstant) {
    bitrate = min(max(value, bounds.lowerBound), bounds.upperBound)
    lastChange = now
  }

  /// Whether a decrease is allowed now: one RTT (10…200 ms) after the last change of the rate
  /// (a decrease, an increase or a probe result), or at once if the acknowledged rate has fallen
  /// below half the current rate (libwebrtc `TimeToReduceFurther`). Counting from any change
  /// keeps a fresh probe result from being cut against an acknowledged rate that still lags it.
  public func canReduceFurther(now: MediaInstant, rtt: MediaDuration, ackedBitrate: Double?)
    -> Bool
  {
    guard let lastChange else { return true }
    let interval = min(max(rtt, .milliseconds(10)), .milliseconds(200))
    if now - lastChange >= interval { return true }
    if let ackedBitrate, ackedBitrate < bitrate / 2 { return true }
    return false
  }

  /// Applies one detector result. `ackedBitrate` in bps (nil until measured). Returns the new
  /// rate in bps.
  @discardableResult
  public mutating func update(
    usage: TrendlineEstimator.BandwidthUsage, ackedBitrate: Double?, rtt: MediaDuration,
    now: MediaInstant
  ) -> Double {
    switch usage {
    case .overusing: state = .decrease
    case .underusing: state = .hold
    case .normal:
      // Growth restarts from now, not from the last change (libwebrtc `ChangeState`).
      if state == .hold {
        state = .increase
        lastChange = now
      }
    }
    let elapsed = lastChange.map { (now - $0).microsecondsValue / 1_000_000 } ?? 0
    switch state {
    case .hold:
      break
    case .increase:
      if let ackedBitrate, let upper = linkCapacity.upperBound, ackedBitrate > upper {
        linkCapacity.reset()
      }
      let step = min(max(elapsed, 0), 1)
      var newRate: Double
      if linkCapacity.estimate != nil {
        newRate = bitrate + nearMaxIncreaseRate(rtt: rtt) * step
      } else {
        let factor = pow(multiplicativeIncreasePerSecond, step)
        newRate = bitrate + max(bitrate * (factor - 1), 1000 * step)
      }
      // Never run far ahead of what the network has been shown to carry.
      if let ackedBitrate {
        let ceiling = 1.5 * ackedBitrate + 10_000
        if newRate > ceiling { newRate = max(bitrate, ceiling) }
      }
      bitrate = newRate
      lastChange = now
    case .decrease:
      let measured = ackedBitrate ?? bitrate
      var decreased = beta * measured
      if decreased > bitrate, let capacity = linkCapacity.estimate { decreased = beta * capacity }
      if decreased < bitrate { bitrate = decreased }
      if let lower = linkCapacity.lowerBound, measured < lower { linkCapacity.reset() }
      linkCapacity.onOveruse(measured)
      state = .hold
      lastChange = now
    }
    // A hold leaves the rate, so it is no change: the back-off interval and the next increase
    // count from the last real change (libwebrtc `time_last_bitrate_change_`).
    bitrate = min(max(bitrate, bounds.lowerBound), bounds.upperBound)
    return bitrate
  }

  /// The additive ("near max") increase rate at the current bitrate, bits per second per second:
  /// half an average packet per response time, response time = RTT + 100 ms (draft §5.5:
  /// α = 0.5 × min(Δt / response time, 1) packets per update; libwebrtc's AimdRateControl doubles
  /// the response time instead). The packet is a 30 fps frame split into ≤ 1200-byte packets.
  /// At least 4 kbit/s per second.
  public func nearMaxIncreaseRate(rtt: MediaDuration) -> Double {
    let bitsPerFrame = bitrate / 30
    let packetsPerFrame = max(1, (bitsPerFrame / (1200 * 8)).rounded(.up))
    let averagePacketBits = bitsPerFrame / packetsPerFrame
    let responseTime = (max(rtt, .zero) + .milliseconds(100)).microsecondsValue / 1_000_000
    return max(4_000, 0.5 * averagePacketBits / responseTime)
  }
}

/// Running estimate of the link capacity: the acknowledged throughput at each overuse, averaged
/// exponentially (α = 0.05) with a variance normalised by the estimate and clamped to
/// 0.4…2.5 kbit/s (draft-ietf-rmcat-gcc-02 §5.5 "average max bitrate", libwebrtc
/// `LinkCapacityEstimator`). While it exists the AIMD increase is additive; a throughput outside
/// estimate ± 3σ means the path changed and the estimate is dropped.
public struct LinkCapacityEstimate: Sendable {
  private var estimateKbps: Double?
  private var deviationKbps: Double = 0.4

  /// Creates an empty estimate (link capacity unknown).
  public init() {}

  /// Estimated capacity, bits per second (`nil` until the first overuse or after a reset).
  public var estimate: Double? { estimateKbps.map { $0 * 1000 } }

  /// Estimate + 3σ, bits per second; σ = √(normalised variance × estimate), in kbit/s.
  public var upperBound: Double? {
    estimateKbps.map { ($0 + 3 * deviation($0)) * 1000 }
  }

  /// Estimate − 3σ (at least 0), bits per second.
  public var lowerBound: Double? {
    estimateKbps.map { max(0, $0 - 3 * deviation($0)) * 1000 }
  }

  /// Forgets the estimate (the path changed).
  public mutating func reset() { estimateKbps = nil }

  /// Folds in the acknowledged throughput (bps) measured at an overuse.
  public mutating func onOveruse(_ bitrate: Double) {
    let sampleKbps = bitrate / 1000
    let alpha = 0.05
    let mean = estimateKbps.map { (1 - alpha) * $0 + alpha * sampleKbps } ?? sampleKbps
    let normalisation = max(mean, 1)
    let error = mean - sampleKbps
    deviationKbps = (1 - alpha) * deviationKbps + alpha * error * error / normalisation
    deviationKbps = min(max(deviationKbps, 0.4), 2.5)
    estimateKbps = mean
  }

  private func deviation(_ estimate: Double) -> Double { (deviationKbps * estimate).squareRoot() }
}
