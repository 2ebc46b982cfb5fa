/// An in-memory packet link that drops a share of packets and delays the rest by a random number
/// of slots, which reorders them. Seeded, so every run sees the same losses and order.
struct LossyPacketLink<Packet> {
  private var generator: SplitMix64
  private let lossRate: Double
  private let maxDelay: Int
  private var clock = 0
  private var inFlight: [(due: Int, order: Int, packet: Packet)] = []
  private var order = 0
  private(set) var dropped = 0
  private(set) var sent = 0

  init(seed: UInt64, lossRate: Double, maxDelay: Int) {
    generator = SplitMix64(seed: seed)
    self.lossRate = lossRate
    self.maxDelay = maxDelay
  }

  /// Sends one packet and returns what arrives during this slot.
  mutating func send(_ packet: Packet) -> [Packet] {
    sent += 1
    clock += 1
    if Double.random(in: 0..<1, using: &generator) < lossRate {
      dropped += 1
    } else {
      let delay = Int.random(in: 0...maxDelay, using: &generator)
      inFlight.append((clock + delay, order, packet))
      order += 1
    }
    return release(upTo: clock)
  }

  /// Everything still in flight.
  mutating func flush() -> [Packet] { release(upTo: Int.max) }

  private mutating func release(upTo time: Int) -> [Packet] {
    let due = inFlight.filter { $0.due <= time }.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
    inFlight.removeAll { $0.due <= time }
    return due.map(\.packet)
  }
}
