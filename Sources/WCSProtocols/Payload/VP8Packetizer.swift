import WCSCodecs

/// Splits encoded VP8 frames into RTP payloads (RFC 7741 §4): every payload starts with a descriptor
/// carrying a 15-bit PictureID (X=1, I=1, M=1) and, optionally, TL0PICIDX; S=1 on the first packet of
/// the frame, PID=0 throughout (the encoder emits one token partition); the marker bit is set on the
/// last packet; sizes are balanced so no packet is much smaller than the others.
public struct VP8Packetizer: Sendable {
  /// Largest RTP payload produced, in bytes (descriptor included). 1160 leaves room for the RTP
  /// header, header extensions, SRTP tag and IP/UDP headers under a 1280-byte IPv6 minimum MTU.
  public let maxPayloadSize: Int
  /// PictureID of the next frame, 0 ... 32767; increments per frame modulo 2^15.
  public private(set) var nextPictureID: UInt16
  /// TL0PICIDX of the next frame when enabled; increments per frame (every frame is in the base
  /// layer without temporal scalability).
  public private(set) var nextTL0PictureIndex: UInt8?

  /// A packetizer.
  /// - Parameters:
  ///   - maxPayloadSize: bytes per payload, at least 16 (smaller values are raised to 16).
  ///   - initialPictureID: PictureID of the first frame (taken modulo 2^15); senders usually pick it
  ///     at random.
  ///   - tl0PictureIndex: first TL0PICIDX, or nil to leave the field out.
  public init(
    maxPayloadSize: Int = 1160, initialPictureID: UInt16 = 0, tl0PictureIndex: UInt8? = nil
  ) {
    self.maxPayloadSize = max(16, maxPayloadSize)
    nextPictureID = initialPictureID & 0x7FFF
    nextTL0PictureIndex = tl0PictureIndex
  }

  /// The RTP payloads for one frame, in sending order.
  /// - Returns: an empty array for an empty frame.
  public mutating func packetize(_ frame: EncodedVideoFrame) -> [PacketizedPayload] {
    guard !frame.data.isEmpty else { return [] }
    var descriptor = VP8PayloadDescriptor(
      startOfPartition: true, partitionIndex: 0, pictureID: nextPictureID, pictureIDIs15Bit: true,
      tl0PictureIndex: nextTL0PictureIndex)
    nextPictureID = (nextPictureID &+ 1) & 0x7FFF
    if let index = nextTL0PictureIndex { nextTL0PictureIndex = index &+ 1 }
    let room = maxPayloadSize - descriptor.encodedLength
    let count = (frame.data.count + room - 1) / room
    // Balanced split: the first `extra` packets carry one byte more than the rest.
    let base = frame.data.count / count
    let extra = frame.data.count % count
    var out: [PacketizedPayload] = []
    out.reserveCapacity(count)
    var offset = 0
    for index in 0..<count {
      let size = base + (index < extra ? 1 : 0)
      descriptor.startOfPartition = index == 0
      var payload = descriptor.serialized()
      payload += frame.data[offset..<offset + size]
      offset += size
      out.append(
        PacketizedPayload(payload: payload, marker: index == count - 1, timestamp: frame.timestamp))
    }
    return out
  }
}
