/// One compressed VP8 frame as the encoder produced it (RFC 6386 §9 frame, the input of the RFC
/// 7741 packetizer and of IVF files).
public struct EncodedVideoFrame: Sendable, Equatable {
  /// The VP8 frame bytes, starting with the 3-byte frame tag.
  public var data: [UInt8]
  /// True for a key frame (intra frame: decodable on its own).
  public var isKeyFrame: Bool
  /// 90 kHz RTP timestamp of the picture (RFC 7741 §4.1), as given to the encoder.
  public var timestamp: UInt32

  /// A frame from its parts.
  public init(data: [UInt8], isKeyFrame: Bool, timestamp: UInt32) {
    self.data = data
    self.isKeyFrame = isKeyFrame
    self.timestamp = timestamp
  }

  /// True when the first byte's P bit (bit 0 of the frame tag, RFC 6386 §9.1) says key frame.
  /// - Returns: false for empty data.
  public static func isKeyFrame(_ data: [UInt8]) -> Bool {
    guard let first = data.first else { return false }
    return first & 0x01 == 0
  }
}
