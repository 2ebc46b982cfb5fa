/// Little-endian reads with bounds checks over a byte array: every read returns nil past the end.
struct MediaFileByteReader {
  let bytes: [UInt8]
  var offset: Int

  init(_ bytes: [UInt8], offset: Int = 0) {
    self.bytes = bytes
    self.offset = offset
  }

  var remaining: Int { bytes.count - offset }

  mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
    guard count >= 0, offset <= bytes.count, count <= bytes.count - offset else { return nil }
    defer { offset += count }
    return bytes[offset..<offset + count]
  }

  mutating func uint16() -> UInt16? {
    guard let b = take(2) else { return nil }
    return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8
  }

  mutating func uint32() -> UInt32? {
    guard let b = take(4) else { return nil }
    var value: UInt32 = 0
    for (shift, byte) in b.enumerated() { value |= UInt32(byte) << (8 * UInt32(shift)) }
    return value
  }

  mutating func uint64() -> UInt64? {
    guard let low = uint32(), let high = uint32() else { return nil }
    return UInt64(high) << 32 | UInt64(low)
  }
}

/// Little-endian serialisation helpers for the file headers.
enum MediaFileLittleEndian {
  static func bytes(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

  static func bytes(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
  }

  static func bytes(_ value: UInt64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
  }
}
