import Foundation

/// The loss-based half of GCC (draft-ietf-rmcat-gcc-02 §6): below 2 % loss the rate may grow
/// 5 % per second, between 2 % and 10 % it holds, above 10 % it becomes rate × (1 − 0.5 × loss).
///
/// Loss is measured over reports of at least `minimumPackets` packets and `minimumInterval`.
public struct LossBasedController: Sendable {
  /// Loss fraction below which the rate may increase.
  public let lowLossThreshold: Double
  /// Loss fraction above which the rate decreases.
  public let highLossThreshold: Double
  /// Increase factor per second at low loss.
  public let increasePerSecond: Double
  /// Fewest packets in one loss measurement.
  public let minimumPackets: Int
  /// Shortest measurement interval.
  public let minimumInterval: MediaDuration

  /// The loss-based limit, bits per second (`nil` until the first measurement).
  public private(set) var bitrate: Double?
  /// Loss fraction of the last completed measurement (0…1).
  public private(set) var lastLossFraction: Double = 0

  private var expected = 0
  private var lost = 0
  private var windowStart: MediaInstant?
  private var lastUpdate: MediaInstant?
  private var lastDecrease: MediaInstant?

  /// Creates a controller with the draft's thresholds unless overridden.
  public init(
    lowLossThreshold: Double = 0.02, highLossThreshold: Double = 0.1,
    increasePerSecond: Double = 1.05, minimumPackets: Int = 20,
    minimumInterval: MediaDuration = .milliseconds(500)
  ) {
    self.lowLossThreshold = lowLossThreshold
    self.highLossThreshold = highLossThreshold
    self.increasePerSecond = increasePerSecond
    self.minimumPackets = max(1, minimumPackets)
    self.minimumInterval = minimumInterval
  }

  /// Raises the limit to a measured probe result (bps) unless loss is currently high
  /// (libwebrtc: a probe result becomes the send bitrate).
  public mutating func onProbeResult(_ bitrate: Double) {
    guard let current = self.bitrate, lastLossFraction <= highLossThreshold else { return }
    self.bitrate = max(current, bitrate)
  }

  /// Adds the outcome of one feedback (`received` and `lost` packet counts). `currentTarget` is
  /// the estimator's present output (bps). Returns `true` when a
  /// measurement completed and `bitrate` was updated.
  @discardableResult
  public mutating func update(
    received: Int, lost newlyLost: Int, currentTarget: Double, rtt: MediaDuration,
    now: MediaInstant
  ) -> Bool {
    if windowStart == nil { windowStart = now }
    expected += received + newlyLost
    lost += newlyLost
    guard let start = windowStart, expected >= minimumPackets, now - start >= minimumInterval
    else { return false }
    let fraction = Double(lost) / Double(max(expected, 1))
    lastLossFraction = fraction
    expected = 0
    lost = 0
    windowStart = now
    let elapsed = min(max((now - (lastUpdate ?? start)).microsecondsValue / 1_000_000, 0), 1)
    lastUpdate = now
    if fraction < lowLossThreshold {
      bitrate = currentTarget * pow(increasePerSecond, elapsed)
    } else if fraction <= highLossThreshold {
      if bitrate == nil { bitrate = currentTarget }
    } else {
      // At most one cut per 300 ms + RTT, so one loss burst is not punished twice.
      let spacing = .milliseconds(300) + rtt
      if lastDecrease.map({ now - $0 >= spacing }) ?? true {
        bitrate = min(bitrate ?? currentTarget, currentTarget) * (1 - 0.5 * fraction)
        lastDecrease = now
      }
    }
    return true
  }
}
