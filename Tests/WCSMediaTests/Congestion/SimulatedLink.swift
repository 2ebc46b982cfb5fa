/// A one-way bottleneck in memory: capacity (bps) following a schedule, a drop-tail queue
/// limited in time at the current capacity, random loss before the queue, and a fixed
/// propagation delay. Times are microseconds.
struct SimulatedLink {
  struct Delivery {
    var sequenceNumber: UInt16
    var size: Int
    var arrivalTime: Int64
    var queueingDelay: Int64
  }

  /// (from time µs, capacity bps), sorted by time.
  var capacitySchedule: [(from: Int64, bitrate: Double)]
  var propagationDelay: Int64 = 40_000
  var queueLimit: Int64 = 300_000
  var lossProbability: Double = 0
  /// (from time µs, loss probability); overrides `lossProbability` once reached.
  var lossSchedule: [(from: Int64, probability: Double)] = []

  private(set) var randomLosses = 0
  private(set) var queueDrops = 0
  private(set) var delivered = 0
  private var random: SplitMix64
  private var waiting: [(sequenceNumber: UInt16, size: Int, enqueued: Int64)] = []
  private var waitingHead = 0
  private var waitingBytes = 0
  private var busyUntil: Int64 = 0
  private var inFlight: [Delivery] = []
  private var inFlightHead = 0

  init(capacitySchedule: [(from: Int64, bitrate: Double)], seed: UInt64) {
    self.capacitySchedule = capacitySchedule
    random = SplitMix64(seed: seed)
  }

  func capacity(at time: Int64) -> Double {
    var rate = capacitySchedule.first?.bitrate ?? 1
    for step in capacitySchedule where step.from <= time { rate = step.bitrate }
    return rate
  }

  func loss(at time: Int64) -> Double {
    var probability = lossProbability
    for step in lossSchedule where step.from <= time { probability = step.probability }
    return probability
  }

  mutating func send(sequenceNumber: UInt16, size: Int, now: Int64) {
    advance(to: now)
    if Double.random(in: 0..<1, using: &random) < loss(at: now) {
      randomLosses += 1
      return
    }
    let backlog = Double(waitingBytes * 8) * 1_000_000 / capacity(at: now)
    let serializing = max(0, busyUntil - now)
    if Int64(backlog) + serializing > queueLimit {
      queueDrops += 1
      return
    }
    waiting.append((sequenceNumber, size, now))
    waitingBytes += size
    advance(to: now)
  }

  /// Moves packets through the bottleneck and returns those that reached the far end by `now`.
  mutating func deliver(upTo now: Int64) -> [Delivery] {
    advance(to: now)
    var arrived: [Delivery] = []
    while inFlightHead < inFlight.count, inFlight[inFlightHead].arrivalTime <= now {
      arrived.append(inFlight[inFlightHead])
      inFlightHead += 1
    }
    if inFlightHead > 1024 {
      inFlight.removeFirst(inFlightHead)
      inFlightHead = 0
    }
    delivered += arrived.count
    return arrived
  }

  private mutating func advance(to now: Int64) {
    while waitingHead < waiting.count {
      let head = waiting[waitingHead]
      let start = max(busyUntil, head.enqueued)
      guard start <= now else { break }
      let serialization = Int64(Double(head.size * 8) * 1_000_000 / capacity(at: start))
      busyUntil = start + serialization
      inFlight.append(
        Delivery(
          sequenceNumber: head.sequenceNumber, size: head.size,
          arrivalTime: busyUntil + propagationDelay, queueingDelay: start - head.enqueued))
      waitingBytes -= head.size
      waitingHead += 1
    }
    if waitingHead > 1024 {
      waiting.removeFirst(waitingHead)
      waitingHead = 0
    }
  }
}
