/// A whole RTP packet with its payload copied out (RFC 3550 §5.1).
///
/// For the receive hot path prefer `RTPHeader.parse(_:)` on the buffer, which copies nothing.
public struct RTPPacket: Equatable, Sendable {
  /// The decoded header.
  public var header: RTPHeader
  /// The payload, padding removed.
  public var payload: [UInt8]
  /// Octets of padding (0 = none), including the final count octet (RFC 3550 §5.1).
  public var paddingSize: Int

  /// Creates a packet; `paddingSize` 0 means no padding, else 1...255.
  public init(header: RTPHeader, payload: [UInt8], paddingSize: Int = 0) {
    self.header = header
    self.payload = payload
    self.paddingSize = paddingSize
  }

  /// Parses `bytes` as one RTP packet. Throws `RTPParseError`.
  public static func parse(_ bytes: [UInt8]) throws -> RTPPacket {
    try bytes.withUnsafeBytes { raw in try parse(raw) }
  }

  /// Parses the datagram in `raw` as one RTP packet, copying only the payload out (the receive
  /// path calls this on the loop's receive buffer). Throws `RTPParseError`.
  public static func parse(_ raw: UnsafeRawBufferPointer) throws -> RTPPacket {
    let parsed = try RTPHeader.parse(raw)
    let payload = Array(UnsafeRawBufferPointer(rebasing: raw[parsed.payloadRange]))
    let paddingSize = parsed.paddingSize
    // The header moves into the packet instead of being copied.
    return RTPPacket(header: (consume parsed).header, payload: payload, paddingSize: paddingSize)
  }

  /// Octets on the wire: header, payload and padding.
  public var serializedLength: Int { header.serializedLength + payload.count + paddingSize }

  /// Writes the packet into `buffer` and returns its length. Throws `RTPWriteError`.
  public func write(to buffer: UnsafeMutableRawBufferPointer) throws(RTPWriteError) -> Int {
    guard (0...255).contains(paddingSize) else { throw .invalidPadding(paddingSize) }
    let needed = serializedLength
    guard buffer.count >= needed else {
      throw .bufferTooSmall(needed: needed, available: buffer.count)
    }
    var offset = try header.write(to: buffer, padding: paddingSize > 0)
    payload.withUnsafeBytes { source in
      if let base = source.baseAddress, let destination = buffer.baseAddress {
        (destination + offset).copyMemory(from: base, byteCount: source.count)
      }
    }
    offset += payload.count
    if paddingSize > 0 {
      for _ in 1..<paddingSize {
        buffer[offset] = 0
        offset += 1
      }
      buffer[offset] = UInt8(paddingSize)
      offset += 1
    }
    return offset
  }

  /// The packet as a new array. Throws `RTPWriteError`.
  public func serialized() throws(RTPWriteError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: serializedLength)
    let result: Result<Int, RTPWriteError> = bytes.withUnsafeMutableBytes { buffer in
      do throws(RTPWriteError) { return .success(try write(to: buffer)) } catch {
        return .failure(error)
      }
    }
    _ = try result.get()
    return bytes
  }
}
