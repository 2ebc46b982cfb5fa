extension STUNMessage {
  /// `true` when `bytes` looks like STUN (RFC 7983 first byte 0-3 and the magic cookie); a cheap
  /// demultiplexing test, not a validation.
  public static func looksLikeSTUN(_ bytes: [UInt8]) -> Bool {
    bytes.count >= 20 && bytes[0] < 4 && bytes[4] == 0x21 && bytes[5] == 0x12 && bytes[6] == 0xA4
      && bytes[7] == 0x42
  }

  /// Decodes one STUN message that fills the whole datagram (RFC 8489 §6.3).
  ///
  /// Checks the header (top bits, magic cookie, length a multiple of 4 matching the datagram),
  /// every attribute length against the end, the shape of known attributes and FINGERPRINT
  /// (must be last; CRC-32 XOR 0x5354554E must match). Attributes after MESSAGE-INTEGRITY other
  /// than MESSAGE-INTEGRITY-SHA256 and FINGERPRINT are ignored (RFC 8489 §14.5). Unknown
  /// attributes are kept as `.unknown`; comprehension-required ones are also listed in
  /// `unknownComprehensionRequired`. Throws `STUNError` on any violation; never reads past the
  /// buffer.
  public static func decode(_ bytes: [UInt8]) throws -> STUNMessage {
    let reader = STUNByteReader(bytes: bytes)
    guard bytes.count >= 20 else { throw STUNError.truncated(needed: 20, available: bytes.count) }
    let rawType = try reader.uint16(at: 0)
    guard rawType & 0xC000 == 0 else { throw STUNError.notSTUN }
    let length = Int(try reader.uint16(at: 2))
    let cookie = try reader.uint32(at: 4)
    guard cookie == magicCookie else { throw STUNError.badMagicCookie(cookie) }
    guard length % 4 == 0 else {
      throw STUNError.badLength(declared: length, available: bytes.count - 20)
    }
    guard 20 + length <= bytes.count else {
      throw STUNError.truncated(needed: 20 + length, available: bytes.count)
    }
    guard 20 + length == bytes.count else {
      throw STUNError.badLength(declared: length, available: bytes.count - 20)
    }
    let transactionID = STUNTransactionID(
      high: try reader.uint32(at: 8), low: try reader.uint64(at: 12))
    var message = STUNMessage(
      type: STUNMessageType(rawValue: rawType), transactionID: transactionID, attributes: [])
    message.rawBytes = bytes
    message.attributes.reserveCapacity(8)

    var offset = 20
    let end = bytes.count
    while offset < end {
      guard offset + 4 <= end else {
        throw STUNError.attributeOverrun(type: 0, offset: offset, length: 0)
      }
      let type = try reader.uint16(at: offset)
      let valueLength = Int(try reader.uint16(at: offset + 2))
      let paddedLength = (valueLength + 3) & ~3
      guard offset + 4 + paddedLength <= end else {
        throw STUNError.attributeOverrun(type: type, offset: offset, length: valueLength)
      }
      let valueStart = offset + 4
      let value = valueStart..<(valueStart + valueLength)
      if message.hasFingerprint {
        throw STUNError.fingerprintNotLast
      }
      switch type {
      case STUNAttributeType.messageIntegrity:
        guard valueLength == 20 else {
          throw STUNError.malformedAttribute(
            type: type, reason: "MESSAGE-INTEGRITY is not 20 bytes")
        }
        if message.integrityOffset == nil && message.integritySHA256Offset == nil {
          message.integrityOffset = offset
        }
      case STUNAttributeType.messageIntegritySHA256:
        guard valueLength >= 16, valueLength <= 32, valueLength % 4 == 0 else {
          throw STUNError.malformedAttribute(
            type: type, reason: "MESSAGE-INTEGRITY-SHA256 length \(valueLength)")
        }
        if message.integritySHA256Offset == nil {
          message.integritySHA256Offset = offset
        }
      case STUNAttributeType.fingerprint:
        guard valueLength == 4 else {
          throw STUNError.malformedAttribute(type: type, reason: "FINGERPRINT is not 4 bytes")
        }
        // Last, so the header length already ends with it, as the CRC input requires.
        guard offset + 8 == end else { throw STUNError.fingerprintNotLast }
        let found = try reader.uint32(at: valueStart)
        let expected =
          bytes.withUnsafeBytes { raw in
            CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<offset]))
          } ^ fingerprintXOR
        guard expected == found else {
          throw STUNError.fingerprintMismatch(expected: expected, found: found)
        }
        message.hasFingerprint = true
      default:
        // Only MESSAGE-INTEGRITY-SHA256 and FINGERPRINT count after MESSAGE-INTEGRITY.
        if message.integrityOffset == nil && message.integritySHA256Offset == nil {
          let attribute = try decodeAttribute(
            type: type, value: value, reader: reader, transactionID: transactionID)
          if case .unknown = attribute, STUNAttributeType.isComprehensionRequired(type) {
            message.unknownComprehensionRequired.append(type)
          }
          message.attributes.append(attribute)
        }
      }
      offset += 4 + paddedLength
    }
    return message
  }

  /// Verifies MESSAGE-INTEGRITY-SHA256 if present, else MESSAGE-INTEGRITY, with `key`
  /// (RFC 8489 §14.5-14.6: HMAC over the message up to the attribute, with the header length
  /// covering it). Throws `STUNError.integrityMissing` when neither is present,
  /// `.integrityMismatch` when the HMAC differs.
  public func verifyIntegrity(key: STUNIntegrityKey) throws {
    let algorithm: STUNIntegrityAlgorithm
    let offset: Int
    if let sha256Offset = integritySHA256Offset {
      (algorithm, offset) = (.sha256, sha256Offset)
    } else if let sha1Offset = integrityOffset {
      (algorithm, offset) = (.sha1, sha1Offset)
    } else {
      throw STUNError.integrityMissing
    }
    let reader = STUNByteReader(bytes: rawBytes)
    let valueLength = Int(try reader.uint16(at: offset + 2))
    guard offset >= 20, offset + 4 + valueLength <= rawBytes.count else {
      throw STUNError.integrityMissing
    }
    let matches = try rawBytes.withUnsafeBytes { raw in
      try withUnsafeTemporaryAllocation(byteCount: 52, alignment: 8) { scratch in
        // Bytes 0-19: the header with the length ending after the integrity attribute;
        // bytes 20-51: the computed MAC.
        let header = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<20])
        header.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<20]))
        let adjusted = offset + 4 + valueLength - 20
        header[2] = UInt8(truncatingIfNeeded: adjusted >> 8)
        header[3] = UInt8(truncatingIfNeeded: adjusted)
        let computed = UnsafeMutableRawBufferPointer(rebasing: scratch[20..<(20 + algorithm.size)])
        try key.mac(
          algorithm, header: UnsafeRawBufferPointer(header),
          body: UnsafeRawBufferPointer(rebasing: raw[20..<offset]), into: computed)
        // A truncated SHA-256 MAC compares its prefix (RFC 8489 §14.6); constant time.
        var difference: UInt8 = 0
        for index in 0..<min(valueLength, computed.count) {
          difference |= raw[offset + 4 + index] ^ computed[index]
        }
        return difference == 0
      }
    }
    guard matches else { throw STUNError.integrityMismatch }
  }

  private static func decodeAttribute(
    type: UInt16, value: Range<Int>, reader: STUNByteReader, transactionID: STUNTransactionID
  ) throws -> STUNAttribute {
    let length = value.count
    func requireLength(_ expected: Int, _ name: String) throws {
      guard length == expected else {
        throw STUNError.malformedAttribute(
          type: type, reason: "\(name) is \(length) bytes, expected \(expected)")
      }
    }
    switch type {
    case STUNAttributeType.mappedAddress:
      return .mappedAddress(
        try decodeAddress(type: type, value: value, reader: reader, xor: nil))
    case STUNAttributeType.xorMappedAddress:
      return .xorMappedAddress(
        try decodeAddress(type: type, value: value, reader: reader, xor: transactionID))
    case STUNAttributeType.xorPeerAddress:
      return .xorPeerAddress(
        try decodeAddress(type: type, value: value, reader: reader, xor: transactionID))
    case STUNAttributeType.xorRelayedAddress:
      return .xorRelayedAddress(
        try decodeAddress(type: type, value: value, reader: reader, xor: transactionID))
    case STUNAttributeType.username:
      guard length <= 513 else {
        throw STUNError.malformedAttribute(type: type, reason: "USERNAME longer than 513 bytes")
      }
      return .username(reader.string(value))
    case STUNAttributeType.realm:
      return .realm(reader.string(value))
    case STUNAttributeType.nonce:
      return .nonce(reader.string(value))
    case STUNAttributeType.software:
      return .software(reader.string(value))
    case STUNAttributeType.errorCode:
      guard length >= 4 else {
        throw STUNError.malformedAttribute(type: type, reason: "ERROR-CODE shorter than 4 bytes")
      }
      let errorClass = Int(try reader.uint8(at: value.lowerBound + 2) & 0x07)
      let number = Int(try reader.uint8(at: value.lowerBound + 3))
      guard (3...6).contains(errorClass), number < 100 else {
        throw STUNError.malformedAttribute(
          type: type, reason: "ERROR-CODE class \(errorClass) number \(number)")
      }
      return .errorCode(
        code: errorClass * 100 + number,
        reason: reader.string((value.lowerBound + 4)..<value.upperBound))
    case STUNAttributeType.unknownAttributes:
      guard length % 2 == 0 else {
        throw STUNError.malformedAttribute(type: type, reason: "UNKNOWN-ATTRIBUTES odd length")
      }
      var types: [UInt16] = []
      for index in stride(from: value.lowerBound, to: value.upperBound, by: 2) {
        types.append(try reader.uint16(at: index))
      }
      return .unknownAttributes(types)
    case STUNAttributeType.priority:
      try requireLength(4, "PRIORITY")
      return .priority(try reader.uint32(at: value.lowerBound))
    case STUNAttributeType.lifetime:
      try requireLength(4, "LIFETIME")
      return .lifetime(try reader.uint32(at: value.lowerBound))
    case STUNAttributeType.useCandidate:
      try requireLength(0, "USE-CANDIDATE")
      return .useCandidate
    case STUNAttributeType.iceControlling:
      try requireLength(8, "ICE-CONTROLLING")
      return .iceControlling(try reader.uint64(at: value.lowerBound))
    case STUNAttributeType.iceControlled:
      try requireLength(8, "ICE-CONTROLLED")
      return .iceControlled(try reader.uint64(at: value.lowerBound))
    case STUNAttributeType.channelNumber:
      try requireLength(4, "CHANNEL-NUMBER")
      return .channelNumber(try reader.uint16(at: value.lowerBound))
    case STUNAttributeType.requestedTransport:
      try requireLength(4, "REQUESTED-TRANSPORT")
      return .requestedTransport(try reader.uint8(at: value.lowerBound))
    case STUNAttributeType.data:
      return .data(try reader.bytes(value))
    default:
      return .unknown(type: type, value: try reader.bytes(value))
    }
  }

  private static func decodeAddress(
    type: UInt16, value: Range<Int>, reader: STUNByteReader, xor transactionID: STUNTransactionID?
  ) throws -> ICETransportAddress {
    guard value.count >= 4 else {
      throw STUNError.malformedAttribute(type: type, reason: "address shorter than 4 bytes")
    }
    let family = try reader.uint8(at: value.lowerBound + 1)
    var port = try reader.uint16(at: value.lowerBound + 2)
    if transactionID != nil { port ^= UInt16(magicCookie >> 16) }
    switch (family, value.count) {
    case (0x01, 8):
      var ip = try reader.uint32(at: value.lowerBound + 4)
      if transactionID != nil { ip ^= magicCookie }
      return ICETransportAddress(ip: .v4(ip), port: port)
    case (0x02, 20):
      var high = try reader.uint64(at: value.lowerBound + 4)
      var low = try reader.uint64(at: value.lowerBound + 12)
      if let transactionID {
        high ^= UInt64(magicCookie) << 32 | UInt64(transactionID.high)
        low ^= transactionID.low
      }
      return ICETransportAddress(ip: .v6(high, low), port: port)
    default:
      throw STUNError.malformedAttribute(
        type: type, reason: "address family \(family) with \(value.count) bytes")
    }
  }
}

/// Bounds-checked big-endian reads from a byte array; every read throws `STUNError.truncated`
/// instead of trapping.
struct STUNByteReader {
  let bytes: [UInt8]

  func uint8(at offset: Int) throws -> UInt8 {
    guard offset >= 0, offset < bytes.count else {
      throw STUNError.truncated(needed: offset + 1, available: bytes.count)
    }
    return bytes[offset]
  }

  func uint16(at offset: Int) throws -> UInt16 {
    guard offset >= 0, offset + 2 <= bytes.count else {
      throw STUNError.truncated(needed: offset + 2, available: bytes.count)
    }
    return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
  }

  func uint32(at offset: Int) throws -> UInt32 {
    UInt32(try uint16(at: offset)) << 16 | UInt32(try uint16(at: offset + 2))
  }

  func uint64(at offset: Int) throws -> UInt64 {
    UInt64(try uint32(at: offset)) << 32 | UInt64(try uint32(at: offset + 4))
  }

  func bytes(_ range: Range<Int>) throws -> [UInt8] {
    guard range.lowerBound >= 0, range.upperBound <= bytes.count else {
      throw STUNError.truncated(needed: range.upperBound, available: bytes.count)
    }
    return Array(bytes[range])
  }

  /// UTF-8 text; invalid sequences become U+FFFD, out-of-range gives "".
  func string(_ range: Range<Int>) -> String {
    guard range.lowerBound >= 0, range.upperBound <= bytes.count,
      range.lowerBound <= range.upperBound
    else { return "" }
    return String(decoding: bytes[range], as: UTF8.self)
  }
}
