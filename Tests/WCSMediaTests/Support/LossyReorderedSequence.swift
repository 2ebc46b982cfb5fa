import TestSupport

/// The sequence numbers of a seeded lossy, reordering link (RFC 3550 §A.1 numbering, wrapping at
/// 2^16): on each draw, 10 % of the time an earlier number again (1...`reorderDepth` behind the
/// next: reordered or duplicate), else the next number, with 5 % of those skipping
/// `lossGap` numbers first (a loss). The draws consume the generator in one fixed order, so a
/// seed gives the same stream on every run.
struct LossyReorderedSequence {
  /// The number the next in-order draw gives.
  var next: UInt16
  let reorderDepth: UInt16
  let lossGap: UInt16

  init(startingAt first: UInt16, reorderDepth: UInt16 = 5, lossGap: UInt16 = 2) {
    next = first
    self.reorderDepth = reorderDepth
    self.lossGap = lossGap
  }

  mutating func draw(using generator: inout SplitMix64) -> UInt16 {
    if Double.random(in: 0..<1, using: &generator) < 0.1 {
      return next &- UInt16.random(in: 1...reorderDepth, using: &generator)
    }
    if Double.random(in: 0..<1, using: &generator) < 0.05 { next &+= lossGap }
    defer { next &+= 1 }
    return next
  }
}
