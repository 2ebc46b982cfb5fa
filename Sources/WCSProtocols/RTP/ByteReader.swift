/// Bounds-checked big-endian reader over bytes that came from the network.
///
/// Every read returns `nil` instead of trapping when fewer bytes remain than asked for, so the
/// parsers above it turn short input into typed errors.
struct ByteReader {
  private let bytes: UnsafeRawBufferPointer
  private(set) var offset: Int
  let end: Int

  init(_ bytes: UnsafeRawBufferPointer, from start: Int = 0, to end: Int? = nil) {
    self.bytes = bytes
    let limit = min(end ?? bytes.count, bytes.count)
    self.end = max(limit, 0)
    self.offset = min(max(start, 0), self.end)
  }

  var remaining: Int { end - offset }

  mutating func readUInt8() -> UInt8? {
    guard remaining >= 1 else { return nil }
    defer { offset += 1 }
    return bytes[offset]
  }

  mutating func readUInt16() -> UInt16? {
    guard remaining >= 2 else { return nil }
    defer { offset += 2 }
    return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
  }

  mutating func readUInt24() -> UInt32? {
    guard remaining >= 3 else { return nil }
    defer { offset += 3 }
    return UInt32(bytes[offset]) << 16 | UInt32(bytes[offset + 1]) << 8
      | UInt32(bytes[offset + 2])
  }

  mutating func readUInt32() -> UInt32? {
    guard remaining >= 4 else { return nil }
    defer { offset += 4 }
    return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
      | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
  }

  mutating func readUInt64() -> UInt64? {
    guard let high = readUInt32(), let low = readUInt32() else { return nil }
    return UInt64(high) << 32 | UInt64(low)
  }

  mutating func readBytes(_ count: Int) -> [UInt8]? {
    guard count >= 0, remaining >= count else { return nil }
    defer { offset += count }
    return Array(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
  }

  /// The `count` octets at buffer offset `start`, or nil unless they lie before `end`.
  func bytes(at start: Int, count: Int) -> [UInt8]? {
    guard start >= 0, count >= 0, start <= end - count else { return nil }
    return Array(UnsafeRawBufferPointer(rebasing: bytes[start..<start + count]))
  }

  /// The big-endian 16-bit value at buffer offset `start`, or nil unless it lies before `end`.
  func uint16(at start: Int) -> UInt16? {
    guard start >= 0, start <= end - 2 else { return nil }
    return UInt16(bytes[start]) << 8 | UInt16(bytes[start + 1])
  }

  mutating func skip(_ count: Int) -> Bool {
    guard count >= 0, remaining >= count else { return false }
    offset += count
    return true
  }
}

extension Array where Element == UInt8 {
  mutating func appendUInt16(_ value: UInt16) {
    append(UInt8(truncatingIfNeeded: value >> 8))
    append(UInt8(truncatingIfNeeded: value))
  }

  mutating func appendUInt24(_ value: UInt32) {
    append(UInt8(truncatingIfNeeded: value >> 16))
    append(UInt8(truncatingIfNeeded: value >> 8))
    append(UInt8(truncatingIfNeeded: value))
  }

  mutating func appendUInt32(_ value: UInt32) {
    append(UInt8(truncatingIfNeeded: value >> 24))
    append(UInt8(truncatingIfNeeded: value >> 16))
    append(UInt8(truncatingIfNeeded: value >> 8))
    append(UInt8(truncatingIfNeeded: value))
  }

  mutating func appendUInt64(_ value: UInt64) {
    appendUInt32(UInt32(truncatingIfNeeded: value >> 32))
    appendUInt32(UInt32(truncatingIfNeeded: value))
  }

  mutating func setUInt16(_ value: UInt16, at index: Int) {
    self[index] = UInt8(truncatingIfNeeded: value >> 8)
    self[index + 1] = UInt8(truncatingIfNeeded: value)
  }
}
