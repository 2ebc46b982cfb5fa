import WCSCodecs

/// RTP payload format for Opus (RFC 7587): one Opus packet per RTP packet, 48 kHz RTP clock
/// whatever the audio bandwidth, marker bit normally 0.
public enum OpusPayloadFormat: Sendable {
  /// RTP clock rate: always 48 000 Hz (RFC 7587 §4.1).
  public static let clockRate = 48_000

  /// The RTP payload for one encoded Opus packet.
  /// - Parameters:
  ///   - opusPacket: output of `OpusEncoder.encode`.
  ///   - timestamp: 48 kHz RTP timestamp of the packet's first sample.
  public static func packetize(_ opusPacket: [UInt8], timestamp: UInt32) -> PacketizedPayload {
    PacketizedPayload(payload: opusPacket, marker: false, timestamp: timestamp)
  }

  /// The Opus packet in an RTP payload.
  /// - Returns: nil for an empty payload, which RFC 7587 §4.2 does not allow (a lost packet is
  ///   signalled by its absence, and DTX packets are 1-2 bytes).
  public static func depacketize(_ payload: [UInt8]) -> [UInt8]? {
    payload.isEmpty ? nil : payload
  }
}
