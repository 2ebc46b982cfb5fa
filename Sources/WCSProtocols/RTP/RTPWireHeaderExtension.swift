/// A received header extension kept as its data octets, inline (no allocation per packet), when
/// they fit `capacity`: the elements are decoded only when someone asks for them, and the one the
/// receive path needs (the transport-wide sequence number) is read in place. The data was checked
/// by `RTPHeaderExtension.walkElements` when it was parsed, so decoding it cannot fail.
package struct RTPWireHeaderExtension: Sendable {
  /// Most data octets held inline (a one-byte extension with a few elements, as WebRTC sends).
  static let capacity = 16
  /// The 16-bit profile value of the extension header (RFC 3550 §5.3.1).
  let profile: UInt16
  /// Data octets held (a multiple of 4, at most `capacity`).
  let count: Int
  private var storage: (UInt64, UInt64) = (0, 0)

  /// Holds `data` (the extension data after its 4-octet header); nil when it is longer than
  /// `capacity`.
  init?(profile: UInt16, data: UnsafeRawBufferPointer) {
    guard data.count <= Self.capacity else { return nil }
    self.profile = profile
    count = data.count
    withUnsafeMutableBytes(of: &storage) { destination in
      if let base = destination.baseAddress, let source = data.baseAddress {
        base.copyMemory(from: source, byteCount: data.count)
      }
    }
  }

  private func withReader<R>(_ body: (inout ByteReader) throws -> R) rethrows -> R {
    try withUnsafeBytes(of: storage) { raw in
      var reader = ByteReader(raw, to: count)
      return try body(&reader)
    }
  }

  /// The decoded extension (as `RTPHeaderExtension.parse` gives it).
  var decoded: RTPHeaderExtension {
    let parsed = try? withReader { reader in
      try RTPHeaderExtension.parse(profile: profile, reader: &reader)
    }
    // Unreachable: the data was checked when the packet was parsed.
    return parsed ?? .generic(profile: profile, data: [])
  }

  /// The value of the first RFC 8285 element `id` when that element has 2 octets, else nil (as
  /// a search of `decoded.elements` would find it).
  package func twoOctetValue(id: UInt8) -> UInt16? {
    withReader { reader in
      if profile == RTPHeaderExtension.oneByteProfile {
        // The receive path's case, walked directly (the rules of `walkElements`).
        while let first = reader.readUInt8() {
          if first == 0 { continue }
          let elementID = first >> 4
          if elementID == 15 { return nil }
          let length = Int(first & 0x0F) + 1
          if elementID == id { return length == 2 ? reader.readUInt16() : nil }
          guard reader.skip(length) else { return nil }
        }
        return nil
      }
      let source = reader
      var value: UInt16?
      try? RTPHeaderExtension.walkElements(profile: profile, reader: &reader) {
        elementID, start, length in
        guard elementID == id else { return false }
        if length == 2 { value = source.uint16(at: start) }
        return true
      }
      return value
    }
  }
}
