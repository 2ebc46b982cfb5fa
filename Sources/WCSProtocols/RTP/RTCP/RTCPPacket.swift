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
      let length = try framedLength(bytes, at: offset)
      packets.append(try parseFramed(bytes, at: offset, length: length))
      offset += length
    }
    return packets
  }

  /// Parses the compound in `bytes` leniently: a packet whose length word is sane but whose
  /// body is malformed (bad padding, counts that do not fit, a broken FCI) is skipped and
  /// listed in `RTCPCompound.skipped` with its error, and the packets around it are kept. A
  /// header that is truncated, has version ≠ 2 or a length running past the end cannot be
  /// framed, so the walk stops there (`RTCPCompound.stoppedBy`) with the packets before it
  /// kept. Never throws; empty input gives no packets and `stoppedBy` `.truncatedHeader`.
  /// `parseCompound(_:)` is the strict form (any fault rejects the whole compound).
  public static func parseCompoundLeniently(_ bytes: UnsafeRawBufferPointer) -> RTCPCompound {
    var compound = RTCPCompound()
    guard !bytes.isEmpty else {
      compound.stoppedBy = .truncatedHeader(offset: 0, available: 0)
      return compound
    }
    var offset = 0
    while offset < bytes.count {
      let length: Int
      do {
        length = try framedLength(bytes, at: offset)
      } catch {
        compound.stoppedBy = error
        break
      }
      do {
        compound.packets.append(try parseFramed(bytes, at: offset, length: length))
      } catch {
        compound.skipped.append(
          RTCPSkippedPacket(
            offset: offset, packetType: bytes[offset + 1],
            error: error as? RTCPParseError
              ?? .invalidLength(packetType: bytes[offset + 1], reason: "\(error)")))
      }
      offset += length
    }
    return compound
  }

  /// `parseCompoundLeniently` on an array.
  public static func parseCompoundLeniently(_ bytes: [UInt8]) -> RTCPCompound {
    bytes.withUnsafeBytes { parseCompoundLeniently($0) }
  }

  /// The length in octets of the packet at `offset` from its common header (RFC 3550 §6.4.1),
  /// checked to fit in `bytes`: the framing both parsers trust.
  private static func framedLength(_ bytes: UnsafeRawBufferPointer, at offset: Int)
    throws(RTCPParseError) -> Int
  {
    var reader = ByteReader(bytes, from: offset)
    guard let first = reader.readUInt8(), let packetType = reader.readUInt8(),
      let words = reader.readUInt16()
    else {
      throw .truncatedHeader(offset: offset, available: bytes.count - offset)
    }
    let version = first >> 6
    guard version == 2 else { throw .invalidVersion(version) }
    let length = (Int(words) + 1) * 4
    guard length <= bytes.count - offset else {
      throw .truncatedPacket(
        packetType: packetType, declared: length, available: bytes.count - offset)
    }
    return length
  }

  /// Decodes one framed packet: its padding, then its body by type.
  private static func parseFramed(_ bytes: UnsafeRawBufferPointer, at offset: Int, length: Int)
    throws -> RTCPPacket
  {
    let first = bytes[offset]
    let packetType = bytes[offset + 1]
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
    return try parse(header: header, body: &body)
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

/// The result of `RTCPPacket.parseCompoundLeniently`: what was kept, what was skipped and why,
/// and the framing fault that ended the walk early, if any.
public struct RTCPCompound: Equatable, Sendable {
  /// The packets that decoded, in compound order.
  public var packets: [RTCPPacket] = []
  /// Packets with a sane length but a malformed body, skipped.
  public var skipped: [RTCPSkippedPacket] = []
  /// Why the walk stopped before the end (truncated header, version ≠ 2, length past the
  /// end); `nil` when every octet was framed.
  public var stoppedBy: RTCPParseError?

  /// An empty result.
  public init() {}
}

/// One packet `RTCPPacket.parseCompoundLeniently` skipped.
public struct RTCPSkippedPacket: Equatable, Sendable {
  /// Octet offset of its header in the compound.
  public var offset: Int
  /// Its packet type (RFC 3550 §12.1, RFC 4585 §6.1).
  public var packetType: UInt8
  /// Why its body did not decode.
  public var error: RTCPParseError
}
