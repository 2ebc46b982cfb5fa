/// What kind of traffic a paced packet carries; lower raw values leave the pacer first.
public enum PacketPriorityClass: Int, Sendable, Comparable, CaseIterable {
  /// Audio: small, latency-critical.
  case audio = 0
  /// Retransmissions (RFC 4588 RTX / NACK answers): late already.
  case retransmission = 1
  /// Video media.
  case video = 2

  /// Orders by priority (audio first).
  public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One item the pacer tells the driver to send now.
public enum PacerRelease<Packet>: CustomStringConvertible {
  /// A queued media packet; `probeClusterID` is set when it counted towards a probe.
  case media(Packet, priority: PacketPriorityClass, size: Int, probeClusterID: Int?)
  /// Send `size` bytes of padding (RTP padding-only or RTX) for probe cluster `probeClusterID`.
  case padding(size: Int, probeClusterID: Int)

  /// Bytes this release puts on the wire.
  public var size: Int {
    switch self {
    case .media(_, _, let size, _): size
    case .padding(let size, _): size
    }
  }

  /// Short form for test output.
  public var description: String {
    switch self {
    case .media(_, let priority, let size, _): "media(\(priority), \(size))"
    case .padding(let size, let id): "padding(\(size), probe \(id))"
    }
  }
}

/// Leaky-bucket pacer (libwebrtc `PacingController` in spirit): releases queued packets at
/// `pacingFactor × target` with a burst allowance, audio and retransmissions before video,
/// and speeds up when the queue holds more than `maxQueueTime` worth of data.
///
/// The allowance is libwebrtc's default send burst interval, 40 ms of the pacing rate (at most
/// 63 kB): an ordinary frame leaves at once, in one wake-up of the sender and of the receiver,
/// while a key frame or an encoder overshoot beyond it is spread out. (An allowance of 5 ms
/// split each 1 Mbit/s frame into three or four bursts, each a timer on the sender and a
/// wake-up on the receiver.) Probe clusters keep a 5 ms allowance, as their spacing is what
/// measures the path.
///
/// Sans-I/O: `enqueue`, then `process(now:)` at or after `nextSendTime`.
public struct Pacer<Packet> {
  /// What to do when the queue exceeds `maxQueueTime` at the pacing rate.
  public enum OverflowPolicy: Sendable, Equatable {
    /// Raise the rate so the queue drains within `maxQueueTime`.
    case drainFaster
    /// Drop the oldest video packets until it fits.
    case dropOldestVideo
  }

  /// Pacing rate multiplier over the target bitrate.
  public let pacingFactor: Double
  /// Burst allowance, as time at the pacing rate.
  public let burstInterval: MediaDuration
  /// Burst allowance while a probe cluster runs, as time at the probe rate.
  public let probeBurstInterval: MediaDuration
  /// Upper bound of a burst, bytes (libwebrtc `kMaxBurstSize`: what a socket send buffer
  /// takes without loss).
  public static var maxBurstBytes: Double { 63_000 }
  /// Queue length limit, as time of data at the pacing rate.
  public let maxQueueTime: MediaDuration
  /// Overflow behaviour.
  public let overflowPolicy: OverflowPolicy
  /// Largest padding packet for probes, bytes.
  public let maxPaddingSize: Int

  /// Current pacing rate, bps (`pacingFactor × target`).
  public private(set) var pacingRate: Double
  /// Bytes waiting.
  public private(set) var queuedBytes = 0
  /// Video packets dropped by `.dropOldestVideo`.
  public private(set) var droppedPackets = 0

  private var queues: [[(packet: Packet, size: Int, enqueued: MediaInstant)]]
  private var heads: [Int]
  private var budget: Double = 0
  private var lastProcess: MediaInstant?
  private var probes: [ProbeCluster] = []
  private var probeBytesSent = 0
  private var probePacketsSent = 0

  /// Creates a pacer for `targetBitrate` (bps).
  public init(
    targetBitrate: Int, pacingFactor: Double = 2.5,
    burstInterval: MediaDuration = .milliseconds(40),
    probeBurstInterval: MediaDuration = .milliseconds(5), maxQueueTime: MediaDuration = .seconds(2),
    overflowPolicy: OverflowPolicy = .drainFaster, maxPaddingSize: Int = 1200
  ) {
    self.pacingFactor = max(pacingFactor, 0.01)
    self.burstInterval = burstInterval
    self.probeBurstInterval = probeBurstInterval
    self.maxQueueTime = maxQueueTime
    self.overflowPolicy = overflowPolicy
    self.maxPaddingSize = max(1, maxPaddingSize)
    pacingRate = max(Double(targetBitrate) * max(pacingFactor, 0.01), 1)
    queues = Array(repeating: [], count: PacketPriorityClass.allCases.count)
    heads = Array(repeating: 0, count: PacketPriorityClass.allCases.count)
  }

  /// Number of packets waiting.
  public var queuedPackets: Int { zip(queues, heads).reduce(0) { $0 + $1.0.count - $1.1 } }

  /// Sets the target bitrate (bps); the pacing rate becomes `pacingFactor ×` it.
  public mutating func setTargetBitrate(_ bitrate: Int) {
    pacingRate = max(Double(bitrate) * pacingFactor, 1)
  }

  /// Queues a probe cluster; it runs after those already queued.
  public mutating func addProbeCluster(_ cluster: ProbeCluster) { probes.append(cluster) }

  /// Queues a packet of `size` bytes at time `now`.
  public mutating func enqueue(
    _ packet: Packet, priority: PacketPriorityClass, size: Int, now: MediaInstant
  ) {
    queues[priority.rawValue].append((packet, max(size, 0), now))
    queuedBytes += max(size, 0)
    if overflowPolicy == .dropOldestVideo { dropOverflow() }
  }

  /// Rate used at `now`, bps: the probe rate while probing; with `.drainFaster`, fast
  /// enough to empty the queue before its oldest packet has waited `maxQueueTime` (at least
  /// 50 ms is left for that, so an overdue queue is not blasted out at once).
  public func effectiveRate(at now: MediaInstant) -> Double {
    if let probe = probes.first { return max(pacingRate, Double(probe.bitrate)) }
    guard overflowPolicy == .drainFaster, let oldest = oldestEnqueueTime else { return pacingRate }
    let timeLeft = max(maxQueueTime - (now - oldest), .milliseconds(50))
    let drainRate = Double(queuedBytes) * 8 * 1_000_000 / timeLeft.microsecondsValue
    return max(pacingRate, drainRate)
  }

  private var oldestEnqueueTime: MediaInstant? {
    var oldest: MediaInstant?
    for (queue, head) in zip(queues, heads) where head < queue.count {
      oldest = min(oldest ?? queue[head].enqueued, queue[head].enqueued)
    }
    return oldest
  }

  /// Releases what may be sent at `now`, in send order.
  public mutating func process(now: MediaInstant) -> [PacerRelease<Packet>] {
    let rate = effectiveRate(at: now)
    let interval = probes.isEmpty ? burstInterval : probeBurstInterval
    let burst = min(rate * interval.microsecondsValue / 8_000_000, Self.maxBurstBytes)
    if let last = lastProcess {
      budget += rate * max(now - last, .zero).microsecondsValue / 8_000_000
    } else {
      budget = burst
    }
    budget = min(budget, burst)
    lastProcess = now
    var released: [PacerRelease<Packet>] = []
    while budget > 0 {
      if let probe = probes.first {
        let id = probe.id
        if let (packet, priority, size) = dequeue() {
          released.append(.media(packet, priority: priority, size: size, probeClusterID: id))
          budget -= Double(size)
          probeBytesSent += size
        } else {
          let size = min(maxPaddingSize, max(probe.minimumBytes - probeBytesSent, 200))
          released.append(.padding(size: size, probeClusterID: id))
          budget -= Double(size)
          probeBytesSent += size
        }
        probePacketsSent += 1
        if probeBytesSent >= probe.minimumBytes, probePacketsSent >= probe.minimumPackets {
          probes.removeFirst()
          probeBytesSent = 0
          probePacketsSent = 0
        }
        continue
      }
      guard let (packet, priority, size) = dequeue() else { break }
      released.append(.media(packet, priority: priority, size: size, probeClusterID: nil))
      budget -= Double(size)
    }
    // An idle pacer must not bank credit for a later burst beyond the allowance.
    if queuedPackets == 0, probes.isEmpty { budget = min(budget, burst) }
    return released
  }

  /// When `process(now:)` should next run (on a whole microsecond after the last run), or `nil`
  /// when nothing is waiting.
  public var nextSendTime: MediaInstant? {
    guard queuedPackets > 0 || !probes.isEmpty, let last = lastProcess else { return nil }
    if budget > 0 { return last }
    let rate = effectiveRate(at: last)
    let wait = (-budget + 1) * 8_000_000 / rate
    return last + .microseconds(Int(wait.rounded(.up)))
  }

  private mutating func dequeue() -> (Packet, PacketPriorityClass, Int)? {
    for priority in PacketPriorityClass.allCases {
      let index = priority.rawValue
      guard heads[index] < queues[index].count else { continue }
      let entry = queues[index][heads[index]]
      heads[index] += 1
      if heads[index] > 256, heads[index] * 2 > queues[index].count {
        queues[index].removeFirst(heads[index])
        heads[index] = 0
      }
      queuedBytes -= entry.size
      return (entry.packet, priority, entry.size)
    }
    return nil
  }

  private mutating func dropOverflow() {
    let limit = pacingRate * maxQueueTime.microsecondsValue / 8_000_000
    let video = PacketPriorityClass.video.rawValue
    while Double(queuedBytes) > limit, heads[video] < queues[video].count {
      queuedBytes -= queues[video][heads[video]].size
      heads[video] += 1
      droppedPackets += 1
    }
  }
}

extension PacerRelease: Sendable where Packet: Sendable {}
