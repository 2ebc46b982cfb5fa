/// RTCP packet type numbers (RFC 3550 §12.1, RFC 4585 §6.1).
public enum RTCPPacketType {
  /// Sender report.
  public static let senderReport: UInt8 = 200
  /// Receiver report.
  public static let receiverReport: UInt8 = 201
  /// Source description.
  public static let sourceDescription: UInt8 = 202
  /// Goodbye.
  public static let bye: UInt8 = 203
  /// Application-defined.
  public static let applicationDefined: UInt8 = 204
  /// Transport-layer feedback (RTPFB).
  public static let transportFeedback: UInt8 = 205
  /// Payload-specific feedback (PSFB).
  public static let payloadSpecificFeedback: UInt8 = 206
}

/// The 4-octet RTCP common header (RFC 3550 §6.4.1) and the packet body it frames.
struct RTCPCommonHeader {
  var padding: Bool
  /// RC / SC / FMT / subtype, depending on the packet type.
  var count: UInt8
  var packetType: UInt8
}

extension Array where Element == UInt8 {
  /// Appends an RTCP packet: writes the common header, lets `body` append, pads to 32 bits and
  /// fills in the length word. Padding uses zero octets inside the body unless `paddingBit`,
  /// which marks it with P=1 and a count octet (RFC 3550 §6.4.1).
  mutating func appendRTCPPacket(
    packetType: UInt8, count: UInt8, paddingBit: Bool = false,
    body: (inout [UInt8]) throws(RTCPWriteError) -> Void
  ) throws(RTCPWriteError) {
    let start = self.count
    append(0)
    append(packetType)
    append(0)
    append(0)
    do {
      try body(&self)
    } catch {
      // Leave the caller's array as it was: no half-written packet.
      removeSubrange(start...)
      throw error
    }
    let unaligned = (self.count - start) % 4
    var padded = false
    if unaligned != 0 {
      let padding = 4 - unaligned
      if paddingBit {
        for _ in 1..<padding { append(0) }
        append(UInt8(padding))
        padded = true
      } else {
        for _ in 0..<padding { append(0) }
      }
    }
    let words = (self.count - start) / 4 - 1
    guard words <= 0xFFFF else {
      removeSubrange(start...)
      throw .invalidField("packet type \(packetType) longer than 2^16 words")
    }
    self[start] = 2 << 6 | (padded ? 0x20 : 0) | (count & 0x1F)
    setUInt16(UInt16(words), at: start + 2)
  }
}
