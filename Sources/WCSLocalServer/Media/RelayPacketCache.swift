/// The last `capacity` RTP packets of one publisher's SSRC, by sequence number, so a player's
/// NACK (RFC 4585 §6.2.1) can be answered without asking the publisher.
///
/// A ring indexed by the low bits of the sequence number: storing a packet evicts the one
/// `capacity` numbers earlier. Value type, one thread. Package-visible for `HardeningBench`.
package struct RelayPacketCache {
  /// Packets kept (a power of two).
  let capacity: Int
  private var slots: [(sequenceNumber: UInt16, packet: [UInt8])?]

  /// A cache of `capacity` packets, rounded up to a power of two (at least 16).
  package init(capacity: Int = 1024) {
    var size = 16
    while size < capacity { size <<= 1 }
    self.capacity = size
    slots = Array(repeating: nil, count: size)
  }

  /// Keeps a copy of `packet` (the whole RTP packet as the publisher sent it).
  package mutating func store(_ packet: [UInt8], sequenceNumber: UInt16) {
    slots[Int(sequenceNumber) & (capacity - 1)] = (sequenceNumber, packet)
  }

  /// The packet with `sequenceNumber`, `nil` when it never arrived or was evicted.
  func packet(_ sequenceNumber: UInt16) -> [UInt8]? {
    guard let slot = slots[Int(sequenceNumber) & (capacity - 1)],
      slot.sequenceNumber == sequenceNumber
    else { return nil }
    return slot.packet
  }
}
