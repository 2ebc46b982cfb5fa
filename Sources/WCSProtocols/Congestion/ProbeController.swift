/// A request to the pacer: send at `bitrate` until at least `minimumBytes` in `minimumPackets`
/// packets went out, tagging them with `id` (libwebrtc probe clusters).
public struct ProbeCluster: Sendable, Equatable {
  /// Identifier carried back in `PacketSent.probeClusterID`.
  public var id: Int
  /// Probing rate, bits per second.
  public var bitrate: Int
  /// Bytes the cluster must contain.
  public var minimumBytes: Int
  /// Packets the cluster must contain.
  public var minimumPackets: Int

  /// Creates a cluster; `bitrate` in bps, sizes in bytes.
  public init(id: Int, bitrate: Int, minimumBytes: Int, minimumPackets: Int) {
    self.id = id
    self.bitrate = bitrate
    self.minimumBytes = minimumBytes
    self.minimumPackets = minimumPackets
  }
}

/// Start-up probing (how libwebrtc's GoogCC finds the capacity in seconds instead of waiting for
/// 8 %/s growth): probe at 3× and 6× the start rate, then keep doubling the measured rate while
/// each probe delivers more than 70 % of what it asked for.
public struct ProbeController: Sendable {
  /// Probe duration used to size clusters.
  public let probeDuration: MediaDuration
  /// Fraction of the probed rate a result must reach to probe further.
  public let continuationRatio: Double

  private var nextID = 1
  private var pending: [ProbeCluster] = []
  private var awaited: ProbeCluster?
  private var started = false

  /// Creates a controller.
  public init(probeDuration: MediaDuration = .milliseconds(30), continuationRatio: Double = 0.7) {
    self.probeDuration = probeDuration
    self.continuationRatio = continuationRatio
  }

  /// Schedules the initial probes once; rates in bps.
  public mutating func start(startBitrate: Int, maxBitrate: Int) {
    guard !started else { return }
    started = true
    let first = min(3 * startBitrate, maxBitrate)
    enqueue(bitrate: first)
    let second = min(6 * startBitrate, maxBitrate)
    if second > first { enqueue(bitrate: second) }
  }

  /// Takes the result of cluster `id` (bps; `nil` = the probe could not be measured) and may
  /// schedule the next, doubled probe.
  public mutating func onProbeResult(id: Int, bitrate: Double?, maxBitrate: Int) {
    guard let awaitedCluster = awaited, awaitedCluster.id == id else { return }
    awaited = nil
    guard let bitrate, bitrate > continuationRatio * Double(awaitedCluster.bitrate) else { return }
    let next = min(Int(2 * bitrate), maxBitrate)
    if Double(next) > bitrate * 1.1 { enqueue(bitrate: next) }
  }

  /// Returns and forgets the clusters the pacer should run.
  public mutating func takeClusters() -> [ProbeCluster] {
    defer { pending.removeAll() }
    return pending
  }

  private mutating func enqueue(bitrate: Int) {
    let bytes = Int(Int64(bitrate) * probeDuration.microseconds / 8_000_000)
    let cluster = ProbeCluster(
      id: nextID, bitrate: bitrate, minimumBytes: max(bytes, 1), minimumPackets: 5)
    nextID += 1
    pending.append(cluster)
    awaited = cluster
  }
}

/// Measures what one probe cluster achieved from its send and arrival times (libwebrtc
/// `ProbeBitrateEstimator`): min(send rate, receive rate), or 95 % of the receive rate when
/// the receiver got less than 90 % of the send rate (the link was saturated).
struct ProbeClusterMeasurement: Sendable {
  private(set) var sentPackets = 0
  private(set) var reportedPackets = 0
  private var received: [(send: MediaInstant, arrival: MediaInstant, size: Int)] = []

  mutating func onSent() { sentPackets += 1 }

  mutating func onReported(send: MediaInstant, arrival: MediaInstant?, size: Int) {
    reportedPackets += 1
    if let arrival { received.append((send, arrival, size)) }
  }

  var isComplete: Bool { reportedPackets >= sentPackets }

  /// Result in bps, or nil if too few packets arrived to measure.
  func result() -> Double? {
    guard received.count >= 4 else { return nil }
    let bySend = received.sorted { $0.send < $1.send }
    let byArrival = received.sorted { $0.arrival < $1.arrival }
    guard let firstSent = bySend.first, let lastSent = bySend.last,
      let firstArrived = byArrival.first, let lastArrived = byArrival.last
    else { return nil }
    let total = received.reduce(0) { $0 + $1.size }
    let sendInterval = lastSent.send - firstSent.send
    let receiveInterval = lastArrived.arrival - firstArrived.arrival
    guard sendInterval > .zero, receiveInterval > .zero else { return nil }
    let sendRate = Double(total - lastSent.size) * 8 * 1_000_000 / sendInterval.microsecondsValue
    let receiveRate =
      Double(total - firstArrived.size) * 8 * 1_000_000 / receiveInterval.microsecondsValue
    if receiveRate < 0.9 * sendRate { return 0.95 * receiveRate }
    return min(sendRate, receiveRate)
  }
}
