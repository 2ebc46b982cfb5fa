extension STUNMessage {
  /// Encodes the message (RFC 8489 §5, §14): header, attributes padded to 4 bytes with zeros,
  /// then MESSAGE-INTEGRITY (and/or MESSAGE-INTEGRITY-SHA256) when `key` is given, then
  /// FINGERPRINT when `fingerprint` is true. Throws `STUNError.cryptoFailure` only if OpenSSL
  /// fails.
  public func encode(
    key: STUNIntegrityKey? = nil, algorithms: [STUNIntegrityAlgorithm] = [.sha1],
    fingerprint: Bool = false
  ) throws -> [UInt8] {
    var out = [UInt8]()
    out.reserveCapacity(160)
    out.appendUInt16(type.rawValue)
    out.appendUInt16(0)
    out.appendUInt32(Self.magicCookie)
    out.appendUInt32(transactionID.high)
    out.appendUInt64(transactionID.low)
    for attribute in attributes {
      appendAttribute(attribute, to: &out)
    }
    if let key {
      for algorithm in algorithms {
        let offset = out.count
        out.setLength(offset + 4 + algorithm.size - 20)
        out.appendUInt16(
          algorithm == .sha1
            ? STUNAttributeType.messageIntegrity : STUNAttributeType.messageIntegritySHA256)
        out.appendUInt16(UInt16(algorithm.size))
        out.append(contentsOf: repeatElement(0, count: algorithm.size))
        try out.withUnsafeMutableBytes { raw in
          let header = UnsafeRawBufferPointer(rebasing: raw[0..<20])
          let body = UnsafeRawBufferPointer(rebasing: raw[20..<offset])
          let output = UnsafeMutableRawBufferPointer(rebasing: raw[(offset + 4)...])
          try key.mac(algorithm, header: header, body: body, into: output)
        }
      }
    }
    if fingerprint {
      let offset = out.count
      out.setLength(offset + 8 - 20)
      let crc = out.withUnsafeBytes { CRC32.checksum($0) } ^ Self.fingerprintXOR
      out.appendUInt16(STUNAttributeType.fingerprint)
      out.appendUInt16(4)
      out.appendUInt32(crc)
    } else {
      out.setLength(out.count - 20)
    }
    return out
  }

  private func appendAttribute(_ attribute: STUNAttribute, to out: inout [UInt8]) {
    let start = out.count
    out.appendUInt16(attribute.type)
    out.appendUInt16(0)
    switch attribute {
    case .mappedAddress(let address):
      appendAddress(address, xor: false, to: &out)
    case .xorMappedAddress(let address), .xorPeerAddress(let address),
      .xorRelayedAddress(let address):
      appendAddress(address, xor: true, to: &out)
    case .username(let text), .realm(let text), .nonce(let text), .software(let text):
      out.append(contentsOf: text.utf8)
    case .errorCode(let code, let reason):
      out.appendUInt16(0)
      out.append(UInt8(clamping: code / 100) & 0x07)
      out.append(UInt8(clamping: code % 100))
      out.append(contentsOf: reason.utf8)
    case .unknownAttributes(let types):
      for type in types { out.appendUInt16(type) }
    case .priority(let value), .lifetime(let value):
      out.appendUInt32(value)
    case .useCandidate:
      break
    case .iceControlling(let value), .iceControlled(let value):
      out.appendUInt64(value)
    case .channelNumber(let number):
      out.appendUInt16(number)
      out.appendUInt16(0)
    case .data(let bytes), .unknown(_, let bytes):
      out.append(contentsOf: bytes)
    case .requestedTransport(let proto):
      out.append(proto)
      out.append(contentsOf: [0, 0, 0])
    }
    let length = out.count - start - 4
    out[start + 2] = UInt8(truncatingIfNeeded: length >> 8)
    out[start + 3] = UInt8(truncatingIfNeeded: length)
    let padding = (4 - length % 4) % 4
    if padding > 0 { out.append(contentsOf: repeatElement(0, count: padding)) }
  }

  private func appendAddress(_ address: ICETransportAddress, xor: Bool, to out: inout [UInt8]) {
    let port = xor ? address.port ^ UInt16(Self.magicCookie >> 16) : address.port
    switch address.ip {
    case .v4(let value):
      out.append(0)
      out.append(0x01)
      out.appendUInt16(port)
      out.appendUInt32(xor ? value ^ Self.magicCookie : value)
    case .v6(let high, let low):
      out.append(0)
      out.append(0x02)
      out.appendUInt16(port)
      let highMask = UInt64(Self.magicCookie) << 32 | UInt64(transactionID.high)
      out.appendUInt64(xor ? high ^ highMask : high)
      out.appendUInt64(xor ? low ^ transactionID.low : low)
    }
  }
}

extension [UInt8] {
  mutating func appendUInt16(_ value: UInt16) {
    append(UInt8(truncatingIfNeeded: value >> 8))
    append(UInt8(truncatingIfNeeded: value))
  }

  mutating func appendUInt32(_ value: UInt32) {
    appendUInt16(UInt16(truncatingIfNeeded: value >> 16))
    appendUInt16(UInt16(truncatingIfNeeded: value))
  }

  mutating func appendUInt64(_ value: UInt64) {
    appendUInt32(UInt32(truncatingIfNeeded: value >> 32))
    appendUInt32(UInt32(truncatingIfNeeded: value))
  }

  /// Writes the STUN header length field (bytes 2-3); the array holds at least the header.
  mutating func setLength(_ length: Int) {
    self[2] = UInt8(truncatingIfNeeded: length >> 8)
    self[3] = UInt8(truncatingIfNeeded: length)
  }
}
