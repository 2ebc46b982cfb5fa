/// One RTCP packet of a compound (RFC 3550 §6.1) or a reduced-size packet (RFC 5506).
public enum RTCPPacket: Equatable, Sendable {
  /// SR, type 200.
  case senderReport(RTCPSenderReport)
  /// RR, type 201.
  case receiverReport(RTCPReceiverReport)
  /// SDES, type 202.
  case sourceDescription(RTCPSourceDescription)
  /// BYE, type 203.
  case bye(RTCPBye)
  /// APP, type 204.
  case applicationDefined(RTCPApplicationDefined)
  /// RTPFB FMT 1.
  case genericNACK(RTCPGenericNACK)
  /// RTPFB FMT 15.
  case transportWideFeedback(RTCPTransportWideFeedback)
  /// PSFB FMT 1.
  case pictureLossIndication(RTCPPictureLossIndication)
  /// PSFB FMT 4.
  case fullIntraRequest(RTCPFullIntraRequest)
  /// PSFB FMT 15 "REMB".
  case receiverEstimatedMaxBitrate(RTCPReceiverEstimatedMaxBitrate)
  /// Any other packet type or feedback format, kept undecoded.
  case raw(RTCPRawPacket)

  /// Parses every packet of the compound (or single reduced-size packet) in `bytes`, walking
  /// packets by their length words.
  ///
  /// Accepts any packet order (RFC 5506 reduced-size RTCP). Throws `RTCPParseError` when a
  /// packet is truncated, has version ≠ 2, bad padding, or a body too short for its header;
  /// empty input is `.truncatedHeader`.
  public static func parseCompound(_ bytes: UnsafeRawBufferPointer) throws -> [RTCPPacket] {
    guard !bytes.isEmpty else { throw RTCPParseError.truncatedHeader(offset: 0, available: 0) }
    var packets: [RTCPPacket] = []
    var offset = 0
    while offset < bytes.count {
      var reader = ByteReader(bytes, from: offset)
      guard let first = reader.readUInt8(), let packetType = reader.readUInt8(),
        let words = reader.readUInt16()
      else {
        throw RTCPParseError.truncatedHeader(offset: offset, available: bytes.count - offset)
      }
      let version = first >> 6
      guard version == 2 else { throw RTCPParseError.invalidVersion(version) }
      let length = (Int(words) + 1) * 4
      guard length <= bytes.count - offset else {
        throw RTCPParseError.truncatedPacket(
          packetType: packetType, declared: length, available: bytes.count - offset)
      }
      var bodyEnd = offset + length
      if first & 0x20 != 0 {
        let count = Int(bytes[bodyEnd - 1])
        guard count >= 1, count <= length - 4 else {
          throw RTCPParseError.invalidPadding(packetType: packetType, count: count)
        }
        bodyEnd -= count
      }
      var body = ByteReader(bytes, from: offset + 4, to: bodyEnd)
      let header = RTCPCommonHeader(
        padding: first & 0x20 != 0, count: first & 0x1F, packetType: packetType)
      packets.append(try parse(header: header, body: &body))
      offset += length
    }
    return packets
  }

  /// Parses the compound in `bytes` (see the raw-buffer overload).
  public static func parseCompound(_ bytes: [UInt8]) throws -> [RTCPPacket] {
    try bytes.withUnsafeBytes { try parseCompound($0) }
  }

  static func parse(header: RTCPCommonHeader, body: inout ByteReader) throws -> RTCPPacket {
    switch header.packetType {
    case RTCPPacketType.senderReport:
      return .senderReport(try RTCPSenderReport.parse(count: header.count, body: &body))
    case RTCPPacketType.receiverReport:
      return .receiverReport(try RTCPReceiverReport.parse(count: header.count, body: &body))
    case RTCPPacketType.sourceDescription:
      return .sourceDescription(try RTCPSourceDescription.parse(count: header.count, body: &body))
    case RTCPPacketType.bye:
      return .bye(try RTCPBye.parse(count: header.count, body: &body))
    case RTCPPacketType.applicationDefined:
      return .applicationDefined(try RTCPApplicationDefined.parse(count: header.count, body: &body))
    case RTCPPacketType.transportFeedback, RTCPPacketType.payloadSpecificFeedback:
      return try parseFeedback(header: header, body: &body)
    default:
      return .raw(
        RTCPRawPacket(
          packetType: header.packetType, count: header.count,
          body: body.readBytes(body.remaining) ?? []))
    }
  }

  /// RTPFB and PSFB share the sender SSRC / media SSRC prefix (RFC 4585 §6.1).
  static func parseFeedback(header: RTCPCommonHeader, body: inout ByteReader) throws
    -> RTCPPacket
  {
    let rawBody = body
    guard let sender = body.readUInt32(), let media = body.readUInt32() else {
      throw RTCPParseError.invalidLength(
        packetType: header.packetType, reason: "feedback body shorter than 8 octets")
    }
    let isTransport = header.packetType == RTCPPacketType.transportFeedback
    switch (isTransport, header.count) {
    case (true, RTCPGenericNACK.format):
      return .genericNACK(
        try RTCPGenericNACK.parse(senderSSRC: sender, mediaSSRC: media, fci: &body))
    case (true, RTCPTransportWideFeedback.format):
      return .transportWideFeedback(
        try RTCPTransportWideFeedback.parse(senderSSRC: sender, mediaSSRC: media, fci: &body))
    case (false, RTCPPictureLossIndication.format):
      return .pictureLossIndication(
        RTCPPictureLossIndication(senderSSRC: sender, mediaSSRC: media))
    case (false, RTCPFullIntraRequest.format):
      return .fullIntraRequest(
        try RTCPFullIntraRequest.parse(senderSSRC: sender, mediaSSRC: media, fci: &body))
    case (false, RTCPReceiverEstimatedMaxBitrate.format):
      var fci = body
      if let remb = try RTCPReceiverEstimatedMaxBitrate.parse(
        senderSSRC: sender, mediaSSRC: media, fci: &fci)
      {
        return .receiverEstimatedMaxBitrate(remb)
      }
    default:
      break
    }
    var whole = rawBody
    return .raw(
      RTCPRawPacket(
        packetType: header.packetType, count: header.count,
        body: whole.readBytes(whole.remaining) ?? []))
  }

  /// Appends this packet's wire form to `bytes`. Throws `RTCPWriteError` when a list or field
  /// does not fit its encoding.
  public func append(to bytes: inout [UInt8]) throws(RTCPWriteError) {
    switch self {
    case .senderReport(let packet): try packet.append(to: &bytes)
    case .receiverReport(let packet): try packet.append(to: &bytes)
    case .sourceDescription(let packet): try packet.append(to: &bytes)
    case .bye(let packet): try packet.append(to: &bytes)
    case .applicationDefined(let packet): try packet.append(to: &bytes)
    case .genericNACK(let packet): try packet.append(to: &bytes)
    case .transportWideFeedback(let packet): try packet.append(to: &bytes)
    case .pictureLossIndication(let packet): try packet.append(to: &bytes)
    case .fullIntraRequest(let packet): try packet.append(to: &bytes)
    case .receiverEstimatedMaxBitrate(let packet): try packet.append(to: &bytes)
    case .raw(let packet): try packet.append(to: &bytes)
    }
  }

  /// The wire form of `packets` as one compound packet (RFC 3550 §6.1), or a reduced-size
  /// packet when there is one feedback packet (RFC 5506). Throws `RTCPWriteError`.
  public static func serializeCompound(_ packets: [RTCPPacket]) throws(RTCPWriteError) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(128)
    for packet in packets { try packet.append(to: &bytes) }
    return bytes
  }

  /// Writes `packets` as a compound into `buffer` and returns the octets written.
  /// Throws `RTCPWriteError.bufferTooSmall` when it does not fit.
  public static func writeCompound(
    _ packets: [RTCPPacket], to buffer: UnsafeMutableRawBufferPointer
  )
    throws(RTCPWriteError) -> Int
  {
    let bytes = try serializeCompound(packets)
    guard bytes.count <= buffer.count else {
      throw .bufferTooSmall(needed: bytes.count, available: buffer.count)
    }
    bytes.withUnsafeBytes { source in
      if let base = source.baseAddress {
        buffer.baseAddress?.copyMemory(from: base, byteCount: source.count)
      }
    }
    return bytes.count
  }
}
