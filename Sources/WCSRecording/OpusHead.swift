import COpus

/// The Opus identification header ("OpusHead", RFC 7845 §5.1) that Matroska/WebM stores as the
/// Opus track's CodecPrivate.
enum OpusHead {
  /// Encoder delay in 48 kHz samples that a libopus encoder reports (`OPUS_GET_LOOKAHEAD`), the
  /// customary pre-skip for streams whose encoder did not tell us its own.
  static let defaultPreSkip: UInt16 = 312

  /// The 19-byte header: magic, version 1, channel count, pre-skip (LE), input sample rate (LE),
  /// output gain 0 (LE), channel mapping family 0 (mono/stereo, no mapping table).
  static func bytes(channels: UInt8, preSkip: UInt16 = defaultPreSkip, inputSampleRate: UInt32)
    -> [UInt8]
  {
    var header: [UInt8] = Array("OpusHead".utf8)
    header.append(1)
    header.append(channels)
    header.append(UInt8(preSkip & 0xFF))
    header.append(UInt8(preSkip >> 8))
    for shift in stride(from: 0, to: 32, by: 8) {
      header.append(UInt8((inputSampleRate >> UInt32(shift)) & 0xFF))
    }
    header.append(contentsOf: [0, 0])
    header.append(0)
    return header
  }

  /// The 48 kHz samples an Opus packet holds (RFC 6716 §3.1 TOC and frame count), or nil
  /// when the packet is malformed.
  static func durationTicks(of packet: [UInt8]) -> Int64? {
    let samples = packet.withUnsafeBufferPointer { buffer -> Int32 in
      guard let base = buffer.baseAddress else { return -1 }
      return opus_packet_get_nb_samples(base, Int32(buffer.count), 48_000)
    }
    return samples > 0 ? Int64(samples) : nil
  }
}
