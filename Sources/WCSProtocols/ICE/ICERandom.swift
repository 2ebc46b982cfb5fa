/// Randomness for an ICE agent: the system CSPRNG, or SplitMix64 from a seed so tests repeat.
package struct ICERandom: RandomNumberGenerator {
  private var state: UInt64?
  private var system = SystemRandomNumberGenerator()

  package init(seed: UInt64?) { state = seed }

  package mutating func next() -> UInt64 {
    guard var value = state else { return system.next() }
    value &+= 0x9E37_79B9_7F4A_7C15
    state = value
    var mixed = value
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }
}
