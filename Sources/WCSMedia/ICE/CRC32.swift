/// CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF), the
/// checksum STUN FINGERPRINT uses (RFC 8489 §14.7). Table-driven, one byte per step.
enum CRC32 {
  /// The 256-entry table for the reflected polynomial.
  static let table: [UInt32] = (0..<256).map { index -> UInt32 in
    var value = UInt32(index)
    for _ in 0..<8 {
      value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1
    }
    return value
  }

  /// CRC-32 of `bytes`, continuing from `crc` (pass the previous result to chain, 0 to start).
  static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    var value = ~crc
    table.withUnsafeBufferPointer { table in
      for byte in bytes {
        value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8)
      }
    }
    return ~value
  }

  /// CRC-32 of a byte array.
  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0) }
  }
}
