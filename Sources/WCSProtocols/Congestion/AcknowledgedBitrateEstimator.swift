/// Throughput of the packets the receiver acknowledged, over a sliding window of arrival times
/// (what GCC's decrease rule multiplies by β).
public struct AcknowledgedBitrateEstimator: Sendable {
  /// Window length, microseconds.
  public let window: Int64
  /// Shortest span that yields an estimate before the window has filled, microseconds.
  public let minimumSpan: Int64

  private var samples: [(arrival: Int64, size: Int)] = []
  private var head = 0
  private var bytesInWindow = 0
  private var firstArrival: Int64?
  private var latestArrival: Int64 = 0

  /// Creates an estimator; `window` and `minimumSpan` in microseconds.
  public init(window: Int64 = 500_000, minimumSpan: Int64 = 150_000) {
    self.window = max(1_000, window)
    self.minimumSpan = max(1_000, minimumSpan)
  }

  /// Records an acknowledged packet: receiver arrival time (µs) and size (bytes). Arrival times
  /// must be roughly non-decreasing; older ones than the window are ignored.
  public mutating func onAcknowledged(arrivalTime: Int64, size: Int) {
    if firstArrival == nil {
      firstArrival = arrivalTime
      latestArrival = arrivalTime
    }
    if arrivalTime < latestArrival - window { return }
    latestArrival = max(latestArrival, arrivalTime)
    samples.append((arrivalTime, size))
    bytesInWindow += size
    let cutoff = latestArrival - window
    while head < samples.count, samples[head].arrival <= cutoff {
      bytesInWindow -= samples[head].size
      head += 1
    }
    if head > 1024 {
      samples.removeFirst(head)
      head = 0
    }
  }

  /// Throughput in bits per second, or `nil` until `minimumSpan` of arrivals has been seen.
  public var bitrate: Double? {
    guard let firstArrival else { return nil }
    let span = min(window, latestArrival - firstArrival)
    guard span >= minimumSpan else { return nil }
    return Double(bytesInWindow) * 8 * 1_000_000 / Double(span)
  }
}
