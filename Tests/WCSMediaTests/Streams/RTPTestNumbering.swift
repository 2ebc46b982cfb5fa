import TestSupport

/// A sender's sequence numbers: mostly the next, with losses, reordering, duplicates, very
/// late packets and now and then a jump (twice in a row: a restart RFC 3550 §A.1 accepts).
struct RTPTestNumbering {
  var next: UInt16
  var sent: [UInt16] = []
  var pendingJump: UInt16?
  /// Now and then a gap of 2,998...3,001 beyond the highest: either side of RFC 3550 §A.1's
  /// MAX_DROPOUT, where the flat path's in-order test must end exactly where `record`'s does.
  var dropoutEdges = false

  mutating func draw(using generator: inout SplitMix64) -> UInt16 {
    if let jump = pendingJump {
      pendingJump = nil
      return record(jump)
    }
    let roll = Double.random(in: 0..<1, using: &generator)
    if dropoutEdges, roll < 0.01, let highest = sent.last {
      let jump = highest &+ UInt16.random(in: 2_998...3_001, using: &generator)
      next = jump &+ 1
      return record(jump)
    }
    if roll < 0.05, !sent.isEmpty {
      // A duplicate or a reordered packet.
      return record(
        sent[sent.count - 1 - Int.random(in: 0..<min(sent.count, 6), using: &generator)])
    }
    if roll < 0.07, sent.count > 40 {
      // Very late.
      return record(sent[Int.random(in: 0..<(sent.count - 30), using: &generator)])
    }
    if roll < 0.075 {
      // A jump beyond MAX_DROPOUT, confirmed by the next packet half the time.
      let jump = next &+ UInt16.random(in: 3_001...60_000, using: &generator)
      if Bool.random(using: &generator) {
        next = jump &+ 2
        pendingJump = jump &+ 1
      }
      return record(jump)
    }
    if roll < 0.12 { next &+= UInt16.random(in: 1...40, using: &generator) }
    if roll > 0.995 { next &+= UInt16.random(in: 400...2_900, using: &generator) }
    defer { next &+= 1 }
    return record(next)
  }

  private mutating func record(_ value: UInt16) -> UInt16 {
    sent.append(value)
    if sent.count > 400 { sent.removeFirst(200) }
    return value
  }
}
