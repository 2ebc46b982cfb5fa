/// The media part of one outgoing RTP packet, as a payload format produces it: the bytes after the
/// RTP header plus the two header fields the payload format decides. The RTP layer adds SSRC,
/// sequence number and payload type.
public struct PacketizedPayload: Sendable, Equatable {
  /// The RTP payload bytes (payload descriptor + codec data for VP8).
  public var payload: [UInt8]
  /// The RTP marker bit (RFC 3550 §5.1): for video, set on the last packet of a frame (RFC 7741
  /// §4.1); for Opus and G.711, false (RFC 7587 §4.1, RFC 3551 §4.1: set on the first packet after
  /// silence).
  public var marker: Bool
  /// RTP timestamp in the payload format's clock (90 kHz for VP8, 48 kHz for Opus, 8 kHz for G.711).
  public var timestamp: UInt32

  /// A payload from its parts.
  public init(payload: [UInt8], marker: Bool, timestamp: UInt32) {
    self.payload = payload
    self.marker = marker
    self.timestamp = timestamp
  }
}
