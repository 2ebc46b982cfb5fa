/// CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF), the
/// checksum STUN FINGERPRINT uses (RFC 8489 §14.7). Table-driven, slicing by 8: eight 256-entry
/// tables let one step consume eight bytes.
enum CRC32 {
  /// `tables[k * 256 + n]`: the CRC of byte `n` followed by `k` zero bytes.
  static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for index in 0..<256 {
      var value = UInt32(index)
      for _ in 0..<8 {
        value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1
      }
      tables[index] = value
    }
    for slice in 1..<8 {
      for index in 0..<256 {
        let previous = tables[(slice - 1) * 256 + index]
        tables[slice * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
      }
    }
    return tables
  }()

  /// CRC-32 of `bytes`, continuing from `crc` (pass the previous result to chain, 0 to start).
  static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    var value = ~crc
    tables.withUnsafeBufferPointer { table in
      var index = 0
      let count = bytes.count
      while index + 8 <= count {
        let word = UInt64(
          littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
        let low = value ^ UInt32(truncatingIfNeeded: word)
        let high = UInt32(truncatingIfNeeded: word >> 32)
        value =
          table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
          ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
          ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
          ^ table[256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
        index += 8
      }
      while index < count {
        value = table[Int((value ^ UInt32(bytes[index])) & 0xFF)] ^ (value >> 8)
        index += 1
      }
    }
    return ~value
  }

  /// CRC-32 of a byte array.
  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0) }
  }
}
