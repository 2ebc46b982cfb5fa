/// Raises NOT_ENOUGH_BANDWIDTH (`notEnoughBandwidth` stream event, wcs-protocol.md §4.6) when the
/// estimate stays below the stream's minimum bitrate for `holdTime`, and clears it once the
/// estimate is back at or above the minimum.
public struct InsufficientBandwidthDetector: Sendable {
  /// Change of condition reported by `update`.
  public enum Event: Sendable, Equatable {
    /// Estimate below `required` (both bps) for `holdTime`.
    case notEnoughBandwidth(required: Int, estimate: Int)
    /// Estimate back at or above the minimum.
    case recovered
  }

  /// How long the estimate must stay low, microseconds.
  public let holdTime: Int64
  /// Whether the condition is currently raised.
  public private(set) var isRaised = false

  private var belowSince: Int64?

  /// Creates a detector; `holdTime` in microseconds (default 3 s).
  public init(holdTime: Int64 = 3_000_000) { self.holdTime = holdTime }

  /// Feeds the current estimate and minimum (bps) at `now` (µs); returns an event on change.
  public mutating func update(estimate: Int, minBitrate: Int, now: Int64) -> Event? {
    guard estimate < minBitrate else {
      belowSince = nil
      if isRaised {
        isRaised = false
        return .recovered
      }
      return nil
    }
    let since = belowSince ?? now
    belowSince = since
    if !isRaised, now - since >= holdTime {
      isRaised = true
      return .notEnoughBandwidth(required: minBitrate, estimate: estimate)
    }
    return nil
  }

  /// The legacy `info` text for an event: "<remoteBitrate>/<networkBandwidth>" (bps).
  public static func info(required: Int, estimate: Int) -> String { "\(required)/\(estimate)" }
}
