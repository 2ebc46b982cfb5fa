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

/// RTP payload format for G.711 PCMU/PCMA (RFC 3551 §4.5.14): one byte per 8 kHz sample, 8 kHz RTP
/// clock, 20 ms (160 samples) per packet by default.
public enum G711PayloadFormat: Sendable {
  /// RTP clock rate: 8000 Hz.
  public static let clockRate = G711.sampleRate

  /// Splits 8 kHz mono samples into packets of `samplesPerPacket` (default 160 = 20 ms; the last may
  /// be shorter).
  /// - Parameters:
  ///   - samplesPerPacket: samples per packet (default 160 = 20 ms at 8 kHz).
  ///   - samples: 8 kHz mono 16-bit samples.
  ///   - law: µ-law (PCMU) or A-law (PCMA).
  ///   - timestamp: 8 kHz RTP timestamp of the first sample; each next packet adds its sample count.
  public static func packetize(
    _ samples: [Int16], law: G711.Law, timestamp: UInt32,
    samplesPerPacket: Int = G711.samplesPer20ms
  ) -> [PacketizedPayload] {
    let step = max(1, samplesPerPacket)
    var out: [PacketizedPayload] = []
    var start = 0
    while start < samples.count {
      let end = min(start + step, samples.count)
      out.append(
        PacketizedPayload(
          payload: G711.encode(Array(samples[start..<end]), law: law), marker: false,
          timestamp: timestamp &+ UInt32(truncatingIfNeeded: start)))
      start = end
    }
    return out
  }

  /// Decodes a PCMU/PCMA payload to 8 kHz mono samples (any byte is a valid sample).
  public static func depacketize(_ payload: [UInt8], law: G711.Law) -> [Int16] {
    G711.decode(payload, law: law)
  }
}
