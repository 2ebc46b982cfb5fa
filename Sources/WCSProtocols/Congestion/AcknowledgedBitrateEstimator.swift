/// Throughput of the packets the receiver acknowledged, over a sliding window of arrival times
/// (what GCC's decrease rule multiplies by β).
public struct AcknowledgedBitrateEstimator: Sendable {
  /// Window length.
  public let window: MediaDuration
  /// Shortest span that yields an estimate before the window has filled.
  public let minimumSpan: MediaDuration

  private var samples: [(arrival: MediaInstant, size: Int)] = []
  private var head = 0
  private var bytesInWindow = 0
  private var firstArrival: MediaInstant?
  private var latestArrival = MediaInstant(nanoseconds: 0)

  /// Creates an estimator (each length at least 1 ms).
  public init(
    window: MediaDuration = .milliseconds(500), minimumSpan: MediaDuration = .milliseconds(150)
  ) {
    self.window = max(.milliseconds(1), window)
    self.minimumSpan = max(.milliseconds(1), minimumSpan)
  }

  /// Records an acknowledged packet: receiver arrival time and size (bytes). Arrival times must
  /// be roughly non-decreasing; older ones than the window are ignored.
  public mutating func onAcknowledged(arrivalTime: MediaInstant, size: Int) {
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
    return Double(bytesInWindow) * 8 * 1_000_000 / span.microsecondsValue
  }
}
