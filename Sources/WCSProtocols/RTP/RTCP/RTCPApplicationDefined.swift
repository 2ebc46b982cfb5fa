/// Application-defined packet, type 204 (RFC 3550 §6.7).
public struct RTCPApplicationDefined: Equatable, Sendable {
  /// Subtype, 0...31 (in the count field).
  public var subtype: UInt8
  /// SSRC of the sender.
  public var ssrc: UInt32
  /// Four ASCII octets naming the application.
  public var name: [UInt8]
  /// Application data, a multiple of 4 octets.
  public var data: [UInt8]

  /// Creates an APP packet; `name` must be 4 octets.
  public init(subtype: UInt8, ssrc: UInt32, name: [UInt8], data: [UInt8]) {
    self.subtype = subtype
    self.ssrc = ssrc
    self.name = name
    self.data = data
  }

  static func parse(count: UInt8, body: inout ByteReader) throws -> RTCPApplicationDefined {
    guard let ssrc = body.readUInt32(), let name = body.readBytes(4) else {
      throw RTCPParseError.invalidLength(
        packetType: RTCPPacketType.applicationDefined, reason: "shorter than SSRC and name")
    }
    return RTCPApplicationDefined(
      subtype: count, ssrc: ssrc, name: name, data: body.readBytes(body.remaining) ?? [])
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    guard name.count == 4 else { throw .invalidField("APP name must be 4 octets") }
    guard subtype < 32 else { throw .invalidField("APP subtype above 31") }
    guard data.count % 4 == 0 else { throw .invalidField("APP data not a multiple of 4 octets") }
    try bytes.appendRTCPPacket(packetType: RTCPPacketType.applicationDefined, count: subtype) {
      bytes throws(RTCPWriteError) in
      bytes.appendUInt32(ssrc)
      bytes.append(contentsOf: name)
      bytes.append(contentsOf: data)
    }
  }
}

/// An RTCP packet this stack does not decode (unknown type or feedback format), kept as is.
public struct RTCPRawPacket: Equatable, Sendable {
  /// Packet type (second octet).
  public var packetType: UInt8
  /// The 5-bit count / FMT field.
  public var count: UInt8
  /// The body after the 4-octet common header, padding removed.
  public var body: [UInt8]

  /// Creates a raw packet.
  public init(packetType: UInt8, count: UInt8, body: [UInt8]) {
    self.packetType = packetType
    self.count = count
    self.body = body
  }

  func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    guard count < 32 else { throw .invalidField("count above 31") }
    try bytes.appendRTCPPacket(packetType: packetType, count: count, paddingBit: true) {
      bytes throws(RTCPWriteError) in
      bytes.append(contentsOf: body)
    }
  }
}
