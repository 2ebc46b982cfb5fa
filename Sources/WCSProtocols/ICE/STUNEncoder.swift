extension STUNMessage {
  /// Encodes the message (RFC 8489 §5, §14): header, attributes padded to 4 bytes with zeros,
  /// then MESSAGE-INTEGRITY (and/or MESSAGE-INTEGRITY-SHA256) when `key` is given, then
  /// FINGERPRINT when `fingerprint` is true. Throws `STUNError.cryptoFailure` only if OpenSSL
  /// fails.
  public func encode(
    key: STUNIntegrityKey? = nil, algorithms: STUNIntegrityAlgorithms = .sha1,
    fingerprint: Bool = false
  ) throws -> [UInt8] {
    var attributesLength = 0
    for attribute in attributes {
      attributesLength += 4 + (Self.valueLength(attribute) + 3) & ~3
    }
    var integrityLength = 0
    if key != nil {
      for algorithm in algorithms.ordered { integrityLength += 4 + algorithm.size }
    }
    let total = 20 + attributesLength + integrityLength + (fingerprint ? 8 : 0)
    // Written in one pass into exactly sized storage; MACs and CRC are filled in below.
    var out = [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
      guard let base = buffer.baseAddress else { return }
      base.initialize(repeating: 0, count: total)
      var writer = STUNWriter(base: base, capacity: total)
      writer.uint16(type.rawValue)
      writer.uint16(UInt16(truncatingIfNeeded: total - 20))
      writer.uint32(Self.magicCookie)
      writer.uint32(transactionID.high)
      writer.uint64(transactionID.low)
      for attribute in attributes {
        writeAttribute(attribute, to: &writer)
      }
      count = total
    }
    var offset = 20 + attributesLength
    if let key {
      for algorithm in algorithms.ordered {
        out.setLength(offset + 4 + algorithm.size - 20)
        let type =
          algorithm == .sha1
          ? STUNAttributeType.messageIntegrity : STUNAttributeType.messageIntegritySHA256
        out[offset] = UInt8(truncatingIfNeeded: type >> 8)
        out[offset + 1] = UInt8(truncatingIfNeeded: type)
        out[offset + 3] = UInt8(algorithm.size)
        try out.withUnsafeMutableBytes { raw in
          let header = UnsafeRawBufferPointer(rebasing: raw[0..<20])
          let body = UnsafeRawBufferPointer(rebasing: raw[20..<offset])
          let output = UnsafeMutableRawBufferPointer(
            rebasing: raw[(offset + 4)..<(offset + 4 + algorithm.size)])
          try key.mac(algorithm, header: header, body: body, into: output)
        }
        offset += 4 + algorithm.size
      }
    }
    out.setLength(total - 20)
    if fingerprint {
      let crc =
        out.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<offset])) }
        ^ Self.fingerprintXOR
      out[offset] = 0x80
      out[offset + 1] = 0x28
      out[offset + 3] = 4
      for index in 0..<4 {
        out[offset + 4 + index] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * index))
      }
    }
    return out
  }

  private static func valueLength(_ attribute: STUNAttribute) -> Int {
    switch attribute {
    case .mappedAddress(let address), .xorMappedAddress(let address),
      .xorPeerAddress(let address), .xorRelayedAddress(let address):
      return address.ip.isIPv6 ? 20 : 8
    case .username(let text), .realm(let text), .nonce(let text), .software(let text):
      return text.utf8.count
    case .errorCode(_, let reason):
      return 4 + reason.utf8.count
    case .unknownAttributes(let types):
      return 2 * types.count
    case .priority, .lifetime, .channelNumber, .requestedTransport:
      return 4
    case .useCandidate:
      return 0
    case .iceControlling, .iceControlled:
      return 8
    case .data(let bytes), .unknown(_, let bytes):
      return bytes.count
    }
  }

  private func writeAttribute(_ attribute: STUNAttribute, to writer: inout STUNWriter) {
    let length = Self.valueLength(attribute)
    writer.uint16(attribute.type)
    writer.uint16(UInt16(truncatingIfNeeded: length))
    switch attribute {
    case .mappedAddress(let address):
      writeAddress(address, xor: false, to: &writer)
    case .xorMappedAddress(let address), .xorPeerAddress(let address),
      .xorRelayedAddress(let address):
      writeAddress(address, xor: true, to: &writer)
    case .username(let text), .realm(let text), .nonce(let text), .software(let text):
      writer.text(text)
    case .errorCode(let code, let reason):
      writer.uint16(0)
      writer.uint8(UInt8(clamping: code / 100) & 0x07)
      writer.uint8(UInt8(clamping: code % 100))
      writer.text(reason)
    case .unknownAttributes(let types):
      for type in types { writer.uint16(type) }
    case .priority(let value), .lifetime(let value):
      writer.uint32(value)
    case .useCandidate:
      break
    case .iceControlling(let value), .iceControlled(let value):
      writer.uint64(value)
    case .channelNumber(let number):
      writer.uint16(number)
      writer.uint16(0)
    case .data(let bytes), .unknown(_, let bytes):
      writer.bytes(bytes)
    case .requestedTransport(let proto):
      writer.uint32(UInt32(proto) << 24)
    }
    // Padding bytes are already zero.
    writer.skip((4 - length % 4) % 4)
  }

  private func writeAddress(_ address: ICETransportAddress, xor: Bool, to writer: inout STUNWriter)
  {
    let port = xor ? address.port ^ UInt16(Self.magicCookie >> 16) : address.port
    switch address.ip {
    case .v4(let value):
      writer.uint16(0x0001)
      writer.uint16(port)
      writer.uint32(xor ? value ^ Self.magicCookie : value)
    case .v6(let high, let low):
      writer.uint16(0x0002)
      writer.uint16(port)
      let highMask = UInt64(Self.magicCookie) << 32 | UInt64(transactionID.high)
      writer.uint64(xor ? high ^ highMask : high)
      writer.uint64(xor ? low ^ transactionID.low : low)
    }
  }
}

/// Writes big-endian fields into storage sized in advance; writes past `capacity` are dropped
/// (the encoder computes the size first, so this never happens).
struct STUNWriter {
  let base: UnsafeMutablePointer<UInt8>
  let capacity: Int
  var offset = 0

  init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
    self.base = base
    self.capacity = capacity
  }

  mutating func uint8(_ value: UInt8) {
    guard offset < capacity else { return }
    base[offset] = value
    offset += 1
  }

  mutating func uint16(_ value: UInt16) {
    guard offset + 2 <= capacity else { return }
    base[offset] = UInt8(truncatingIfNeeded: value >> 8)
    base[offset + 1] = UInt8(truncatingIfNeeded: value)
    offset += 2
  }

  mutating func uint32(_ value: UInt32) {
    uint16(UInt16(truncatingIfNeeded: value >> 16))
    uint16(UInt16(truncatingIfNeeded: value))
  }

  mutating func uint64(_ value: UInt64) {
    uint32(UInt32(truncatingIfNeeded: value >> 32))
    uint32(UInt32(truncatingIfNeeded: value))
  }

  mutating func bytes(_ values: [UInt8]) {
    let count = min(values.count, capacity - offset)
    guard count > 0 else { return }
    values.withUnsafeBufferPointer { source in
      guard let start = source.baseAddress else { return }
      (base + offset).update(from: start, count: count)
    }
    offset += count
  }

  mutating func text(_ value: String) {
    var value = value
    value.withUTF8 { utf8 in
      let count = min(utf8.count, capacity - offset)
      guard count > 0, let start = utf8.baseAddress else { return }
      (base + offset).update(from: start, count: count)
      offset += count
    }
  }

  mutating func skip(_ count: Int) {
    offset = min(capacity, offset + count)
  }
}

extension [UInt8] {
  /// Writes the STUN header length field (bytes 2-3); the array holds at least the header.
  mutating func setLength(_ length: Int) {
    guard count >= 4 else { return }
    self[2] = UInt8(truncatingIfNeeded: length >> 8)
    self[3] = UInt8(truncatingIfNeeded: length)
  }
}
