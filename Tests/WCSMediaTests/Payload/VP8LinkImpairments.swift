import TestSupport

extension SplitMix64 {
  /// True with `probability` (one draw in 0..<1).
  mutating func chance(_ probability: Double) -> Bool {
    Double.random(in: 0..<1, using: &self) < probability
  }
}

/// What a simulated link does to a stream's packets: loses some (also in bursts), duplicates,
/// swaps nearby packets and delays a few far. Seeded: the same generator state gives the same
/// delivery, drawing in this order: the stream's loss rate; per packet a burst, a loss, the
/// caller's alteration and a duplicate; the stream's reorder reach and the swaps; the delays.
struct VP8LinkImpairments {
  /// How far a packet swapped with a later one may move.
  enum ReorderReach {
    /// Up to this many places.
    case fixed(Int)
    /// Up to a reach drawn once per stream from this range (0: no swaps).
    case drawn(ClosedRange<Int>)
  }

  /// The range the stream's loss rate is drawn from.
  var lossRates: ClosedRange<Double>
  /// The chance per packet that a burst of losses starts, and its lengths in packets (nil: none).
  var burst: (chance: Double, lengths: ClosedRange<Int>)?
  /// The chance a delivered packet comes twice.
  var duplicateChance: Double
  /// The chance per packet that it swaps with a later one.
  var reorderChance: Double
  var reorderReach: ReorderReach
  /// How many packets are delayed far, and by how many places.
  var delayedPackets: ClosedRange<Int>
  var delayDistances: ClosedRange<Int>

  /// `sent` as the link delivers it; `alter` may change each packet not lost, before it is
  /// (maybe twice) delivered.
  func deliver<Packet>(
    _ sent: [Packet], random: inout SplitMix64,
    alter: (inout Packet, inout SplitMix64) -> Void = { _, _ in }
  ) -> [Packet] {
    let loss = Double.random(in: lossRates, using: &random)
    var delivered: [Packet] = []
    var burstLeft = 0
    for var packet in sent {
      if burstLeft > 0 {
        burstLeft -= 1
        continue
      }
      if let burst, random.chance(burst.chance) {
        burstLeft = Int.random(in: burst.lengths, using: &random)
        continue
      }
      if random.chance(loss) { continue }
      alter(&packet, &random)
      delivered.append(packet)
      if random.chance(duplicateChance) { delivered.append(packet) }
    }
    let reach: Int
    switch reorderReach {
    case .fixed(let places): reach = places
    case .drawn(let places): reach = Int.random(in: places, using: &random)
    }
    if reach > 0 {
      for index in delivered.indices.dropLast() where random.chance(reorderChance) {
        let other = min(delivered.count - 1, index + Int.random(in: 1...reach, using: &random))
        delivered.swapAt(index, other)
      }
    }
    for _ in 0..<Int.random(in: delayedPackets, using: &random) where delivered.count > 2 {
      let from = Int.random(in: 0..<delivered.count / 2, using: &random)
      let packet = delivered.remove(at: from)
      let to = min(delivered.count, from + Int.random(in: delayDistances, using: &random))
      delivered.insert(packet, at: to)
    }
    return delivered
  }
}
