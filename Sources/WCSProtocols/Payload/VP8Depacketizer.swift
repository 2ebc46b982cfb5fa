/// One received VP8 RTP payload split into its descriptor and VP8 data (RFC 7741 §4).
public struct VP8PayloadPacket: Sendable, Equatable {
  /// The payload descriptor.
  public var descriptor: VP8PayloadDescriptor
  /// The VP8 bytes after the descriptor (never empty).
  public var data: ArraySlice<UInt8>

  /// True when this packet starts a frame (S=1, PID=0) and its VP8 payload header says key frame
  /// (P bit 0, RFC 7741 §4.3).
  public var startsKeyFrame: Bool {
    guard descriptor.startsFrame, let first = data.first else { return false }
    return first & 0x01 == 0
  }
}

/// Reads VP8 RTP payloads (RFC 7741 §4.2-4.3) with bounds checks on every byte.
public enum VP8Depacketizer: Sendable {
  /// Splits a payload into descriptor and VP8 data.
  /// - Throws: `VP8PayloadError` — `.truncatedDescriptor` when it ends inside the descriptor,
  ///   `.emptyPayload` when no VP8 data follows, `.badPayloadHeader` when the first packet of a
  ///   frame has fewer than 3 bytes of VP8 payload header, or a key frame fewer than 10 bytes or no
  ///   start code 0x9d 0x01 0x2a (RFC 6386 §9.1).
  public static func parse(_ payload: [UInt8]) throws(VP8PayloadError) -> VP8PayloadPacket {
    let (descriptor, length) = try VP8PayloadDescriptor.parse(payload)
    guard length < payload.count else { throw .emptyPayload }
    let data = payload[length...]
    if descriptor.startsFrame {
      guard data.count >= 3 else { throw .badPayloadHeader }
      let start = data.startIndex
      if data[start] & 0x01 == 0 {
        guard data.count >= 10, data[start + 3] == 0x9D, data[start + 4] == 0x01,
          data[start + 5] == 0x2A
        else { throw .badPayloadHeader }
      }
    }
    return VP8PayloadPacket(descriptor: descriptor, data: data)
  }
}
