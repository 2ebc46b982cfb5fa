/// One RFC 8285 header extension element: a local identifier (negotiated with `a=extmap`) and
/// its value octets.
public struct RTPHeaderExtensionElement: Equatable, Sendable {
  /// Local identifier: 1...14 in the one-byte form, 1...255 in the two-byte form (RFC 8285 §4).
  public var id: UInt8
  /// The element's value, 1...16 octets (one-byte form) or 0...255 octets (two-byte form).
  public var value: [UInt8]

  /// Creates an element with identifier `id` and `value` octets.
  public init(id: UInt8, value: [UInt8]) {
    self.id = id
    self.value = value
  }
}

/// The header extension of an RTP packet (RFC 3550 §5.3.1), with RFC 8285 elements decoded.
public enum RTPHeaderExtension: Equatable, Sendable {
  /// Profile 0xBEDE: elements with a 4-bit ID and 4-bit length (RFC 8285 §4.2).
  case oneByte([RTPHeaderExtensionElement])
  /// Profile 0x100X: elements with an 8-bit ID and 8-bit length; `appBits` is the low nibble
  /// of the profile (RFC 8285 §4.3).
  case twoByte(appBits: UInt8, [RTPHeaderExtensionElement])
  /// Any other profile: the 16-bit profile value and the extension data (a multiple of 4 octets).
  case generic(profile: UInt16, data: [UInt8])

  /// Profile value of the one-byte form (RFC 8285 §4.2).
  public static let oneByteProfile: UInt16 = 0xBEDE
  /// Profile value of the two-byte form with app bits 0 (RFC 8285 §4.3).
  public static let twoByteProfile: UInt16 = 0x1000

  /// The RFC 8285 elements in packet order (empty for `.generic`).
  public var elements: [RTPHeaderExtensionElement] {
    switch self {
    case .oneByte(let elements), .twoByte(_, let elements): return elements
    case .generic: return []
    }
  }

  /// The first element with local identifier `id`, or nil.
  public func element(id: UInt8) -> RTPHeaderExtensionElement? {
    elements.first { $0.id == id }
  }

  /// The 16-bit profile value written in the extension header.
  public var profile: UInt16 {
    switch self {
    case .oneByte: return Self.oneByteProfile
    case .twoByte(let appBits, _): return Self.twoByteProfile | UInt16(appBits & 0x0F)
    case .generic(let profile, _): return profile
    }
  }

  /// Octets of the extension data, before padding to a 32-bit boundary.
  var unpaddedDataLength: Int {
    switch self {
    case .oneByte(let elements): return elements.reduce(0) { $0 + 1 + $1.value.count }
    case .twoByte(_, let elements): return elements.reduce(0) { $0 + 2 + $1.value.count }
    case .generic(_, let data): return data.count
    }
  }

  /// Octets on the wire: 4-octet extension header plus data padded to 32 bits.
  var serializedLength: Int { 4 + (unpaddedDataLength + 3) / 4 * 4 }

  /// Decodes the extension data of `profile` in `reader` (already limited to the data).
  static func parse(profile: UInt16, reader: inout ByteReader) throws -> RTPHeaderExtension {
    if profile == oneByteProfile || profile & 0xFFF0 == twoByteProfile {
      var elements: [RTPHeaderExtensionElement] = []
      let source = reader
      try walkElements(profile: profile, reader: &reader) { id, start, length in
        elements.append(
          RTPHeaderExtensionElement(id: id, value: source.bytes(at: start, count: length) ?? []))
        return false
      }
      return profile == oneByteProfile
        ? .oneByte(elements) : .twoByte(appBits: UInt8(profile & 0x0F), elements)
    }
    return .generic(profile: profile, data: reader.readBytes(reader.remaining) ?? [])
  }

  /// Walks the RFC 8285 elements of `profile` (one- or two-byte form) in `reader`, calling
  /// `visit` with each element's identifier and the offset and length of its value in the
  /// reader's buffer, until `visit` returns true. Throws `RTPParseError.truncatedExtensionElement`
  /// for an element that does not fit (only reached when `visit` never stopped before it). The
  /// one rule set for decoding, checking and searching extensions without allocating.
  static func walkElements(
    profile: UInt16, reader: inout ByteReader,
    _ visit: (_ id: UInt8, _ valueStart: Int, _ valueLength: Int) -> Bool
  ) throws {
    if profile == oneByteProfile {
      while let first = reader.readUInt8() {
        if first == 0 { continue }  // padding octet
        let id = first >> 4
        if id == 15 { break }  // reserved: stop processing (RFC 8285 §4.2)
        let length = Int(first & 0x0F) + 1
        let start = reader.offset
        guard reader.skip(length) else {
          throw RTPParseError.truncatedExtensionElement(
            id: id, declared: length, available: reader.remaining)
        }
        if visit(id, start, length) { return }
      }
    } else if profile & 0xFFF0 == twoByteProfile {
      while let id = reader.readUInt8() {
        if id == 0 { continue }  // padding octet
        guard let length = reader.readUInt8() else {
          throw RTPParseError.truncatedExtensionElement(id: id, declared: 1, available: 0)
        }
        let start = reader.offset
        guard reader.skip(Int(length)) else {
          throw RTPParseError.truncatedExtensionElement(
            id: id, declared: Int(length), available: reader.remaining)
        }
        if visit(id, start, Int(length)) { return }
      }
    }
  }

  /// Checks that every element fits its form before anything is written.
  func validate() throws(RTPWriteError) {
    switch self {
    case .oneByte(let elements):
      for element in elements
      where !(1...14).contains(element.id) || !(1...16).contains(element.value.count) {
        throw .invalidExtensionElement(id: element.id, length: element.value.count)
      }
    case .twoByte(_, let elements):
      for element in elements where element.id == 0 || element.value.count > 255 {
        throw .invalidExtensionElement(id: element.id, length: element.value.count)
      }
    case .generic(_, let data):
      if data.count % 4 != 0 || data.count > 0xFFFF * 4 {
        throw .invalidExtensionData(length: data.count)
      }
    }
    if unpaddedDataLength > 0xFFFF * 4 { throw .invalidExtensionData(length: unpaddedDataLength) }
  }

  /// Writes header and padded data at `offset`; the caller has checked the room.
  func write(to buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
    var position = offset
    let words = (unpaddedDataLength + 3) / 4
    buffer.storeBytes(of: profile.bigEndian, toByteOffset: position, as: UInt16.self)
    buffer.storeBytes(
      of: UInt16(truncatingIfNeeded: words).bigEndian, toByteOffset: position + 2, as: UInt16.self)
    position += 4
    switch self {
    case .oneByte(let elements):
      for element in elements {
        buffer[position] = element.id << 4 | UInt8(element.value.count - 1)
        position += 1
        Self.copy(element.value, to: buffer, at: &position)
      }
    case .twoByte(_, let elements):
      for element in elements {
        buffer[position] = element.id
        buffer[position + 1] = UInt8(element.value.count)
        position += 2
        Self.copy(element.value, to: buffer, at: &position)
      }
    case .generic(_, let data):
      Self.copy(data, to: buffer, at: &position)
    }
    while (position - offset) % 4 != 0 {
      buffer[position] = 0
      position += 1
    }
    return position - offset
  }

  private static func copy(
    _ bytes: [UInt8], to buffer: UnsafeMutableRawBufferPointer, at position: inout Int
  ) {
    bytes.withUnsafeBytes { source in
      if let base = source.baseAddress, let destination = buffer.baseAddress {
        (destination + position).copyMemory(from: base, byteCount: source.count)
      }
    }
    position += bytes.count
  }
}
