/// The packets a send stream sent recently, so a NACK can be answered (RFC 4585 §6.2.1).
///
/// A ring indexed by sequence number modulo `capacity` (a power of two dividing 2^16, so the
/// slot of a sequence number survives its wrap). An entry is served only while it is younger than
/// `maxAge` and still in its slot.
struct RTPPacketHistory: Sendable {
  struct Entry: Sendable {
    var packet: RTPPacket
    var sentAt: MediaInstant
    var lastRetransmittedAt: MediaInstant?
    var retransmissions: Int
  }

  let capacity: Int
  let maxAge: MediaDuration
  private var slots: [Entry?]

  /// `capacity` is rounded up to a power of two in 16...32768.
  init(capacity: Int, maxAge: MediaDuration) {
    var size = 16
    while size < min(max(capacity, 16), 32_768) { size <<= 1 }
    self.capacity = size
    self.maxAge = maxAge
    slots = Array(repeating: nil, count: size)
  }

  mutating func store(_ packet: RTPPacket, sentAt: MediaInstant) {
    slots[Int(packet.header.sequenceNumber) & (capacity - 1)] = Entry(
      packet: packet, sentAt: sentAt, lastRetransmittedAt: nil, retransmissions: 0)
  }

  /// The entry for `sequenceNumber` if it is stored and not older than `maxAge` at `now`.
  func entry(_ sequenceNumber: UInt16, now: MediaInstant) -> Entry? {
    guard let entry = slots[Int(sequenceNumber) & (capacity - 1)],
      entry.packet.header.sequenceNumber == sequenceNumber, now - entry.sentAt <= maxAge
    else { return nil }
    return entry
  }

  mutating func markRetransmitted(_ sequenceNumber: UInt16, at now: MediaInstant) {
    let index = Int(sequenceNumber) & (capacity - 1)
    guard var entry = slots[index], entry.packet.header.sequenceNumber == sequenceNumber else {
      return
    }
    entry.lastRetransmittedAt = now
    entry.retransmissions += 1
    slots[index] = entry
  }
}
