/// Goodbye, packet type 203 (RFC 3550 §6.6).
public struct RTCPBye: Equatable, Sendable {
  /// Sources leaving, at most 31 (may be empty).
  public var sources: [UInt32]
  /// Optional reason for leaving (UTF-8, at most 255 octets).
  public var reason: String?

  /// Creates a BYE packet.
  public init(sources: [UInt32], reason: String? = nil) {
    self.sources = sources
    self.reason = reason
  }

  static func parse(count: UInt8, body: inout ByteReader) throws -> RTCPBye {
    guard body.remaining >= 4 * Int(count) else {
      throw RTCPParseError.invalidLength(
        packetType: RTCPPacketType.bye,
        reason: "source count \(count) in a \(body.remaining)-octet body")
    }
    var sources: [UInt32] = []
    for _ in 0..<count { sources.append(body.readUInt32() ?? 0) }
    var reason: String?
    if let length = body.readUInt8() {
      guard let text = body.readBytes(Int(length)) else { throw RTCPParseError.byeReasonTruncated }
      reason = String(decoding: text, as: UTF8.self)
    }
    return RTCPBye(sources: sources, reason: reason)
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    guard sources.count <= 31 else {
      throw .tooManyItems(packetType: RTCPPacketType.bye, count: sources.count)
    }
    let reasonBytes = reason.map { Array($0.utf8) }
    if let reasonBytes, reasonBytes.count > 255 {
      throw .invalidField("BYE reason longer than 255 octets")
    }
    try bytes.appendRTCPPacket(packetType: RTCPPacketType.bye, count: UInt8(sources.count)) {
      bytes throws(RTCPWriteError) in
      for source in sources { bytes.appendUInt32(source) }
      if let reasonBytes {
        bytes.append(UInt8(reasonBytes.count))
        bytes.append(contentsOf: reasonBytes)
      }
    }
  }
}
