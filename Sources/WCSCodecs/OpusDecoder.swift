import COpus

/// Opus decoder (libopus, RFC 6716) at 48 kHz, mono or stereo output, with packet loss
/// concealment and in-band FEC recovery.
///
/// Not thread-safe: use one decoder from one thread (or behind the caller's lock).
public final class OpusDecoder {
  /// Largest frame a packet may hold, in samples per channel: 120 ms at 48 kHz (RFC 6716 §3.2.5).
  public static let maxFrameSize = 5760

  /// Output channel count: 1 or 2.
  public let channels: Int
  private let decoder: OpaquePointer
  /// Where libopus writes: room for the largest frame, made once. A frame's samples are then
  /// copied into an array of exactly their count, instead of a zero-filled array of the
  /// largest frame per call (11.5 kB for mono) cut down to its prefix in a second array.
  private let output: UnsafeMutablePointer<Int16>

  /// Creates a decoder.
  /// - Parameter channels: 1 or 2; a stereo packet decodes to mono output and vice versa.
  /// - Throws: `OpusError` when `channels` is not 1 or 2 or `opus_decoder_create` fails.
  public init(channels: Int = 1) throws(OpusError) {
    guard channels == 1 || channels == 2 else {
      throw OpusError(invalidInput: "channels must be 1 or 2, got \(channels)")
    }
    var error: Int32 = 0
    guard
      let made = opus_decoder_create(Int32(PCMAudioFrame.sampleRate), Int32(channels), &error),
      error == OPUS_OK
    else {
      throw OpusError(.createDecoder, code: error == OPUS_OK ? OPUS_ALLOC_FAIL : error)
    }
    decoder = made
    self.channels = channels
    output = .allocate(capacity: Self.maxFrameSize * channels)
  }

  deinit {
    opus_decoder_destroy(decoder)
    output.deallocate()
  }

  /// Decodes one packet, or conceals a lost one.
  /// - Parameters:
  ///   - packet: an Opus packet (RTP payload, RFC 7587), or nil when the packet was lost: libopus
  ///     then runs packet loss concealment (PLC) for `lostSamples` samples.
  ///   - timestamp: copied to the output frame (48 kHz RTP timestamp).
  ///   - lostSamples: samples per channel to conceal when `packet` is nil (default 20 ms).
  /// - Returns: the decoded samples, interleaved.
  /// - Throws: `OpusError` when the packet is empty, corrupt (`OPUS_INVALID_PACKET`) or too long.
  public func decode(
    _ packet: [UInt8]?, timestamp: UInt32 = 0, lostSamples: Int = PCMAudioFrame.samplesPer20ms
  ) throws(OpusError) -> PCMAudioFrame {
    if let packet {
      // libopus reads an empty buffer as "lost" and would conceal a whole 120 ms.
      guard !packet.isEmpty else { throw OpusError(invalidInput: "empty packet") }
      return try run(packet, frameSize: Self.maxFrameSize, fec: false, timestamp: timestamp)
    }
    let size = min(max(lostSamples, 120), Self.maxFrameSize)
    return try run(nil, frameSize: size, fec: false, timestamp: timestamp)
  }

  /// Recovers the frame before `nextPacket` from the in-band FEC data (LBRR) `nextPacket` carries
  /// (`opus_decode` with `decode_fec = 1`). Call it when packet N was lost and N+1 arrived, before
  /// decoding N+1 normally. Without FEC data in `nextPacket` libopus conceals (PLC) instead.
  /// - Parameters:
  ///   - nextPacket: the packet that followed the lost one.
  ///   - frameSize: samples per channel of the lost frame (default 20 ms: 960).
  ///   - timestamp: copied to the output frame (48 kHz RTP timestamp of the lost frame).
  /// - Throws: `OpusError` when the packet is empty or corrupt.
  public func decodeFEC(
    from nextPacket: [UInt8], frameSize: Int = PCMAudioFrame.samplesPer20ms, timestamp: UInt32 = 0
  ) throws(OpusError) -> PCMAudioFrame {
    guard !nextPacket.isEmpty else { throw OpusError(invalidInput: "empty packet") }
    let size = min(max(frameSize, 120), Self.maxFrameSize)
    return try run(nextPacket, frameSize: size, fec: true, timestamp: timestamp)
  }

  /// Samples per channel of the last packet decoded (`OPUS_GET_LAST_PACKET_DURATION`).
  /// - Throws: `OpusError` when the ctl fails.
  public func lastPacketDuration() throws(OpusError) -> Int {
    var value: Int32 = 0
    let result = wcs_opus_decoder_get(decoder, OPUS_GET_LAST_PACKET_DURATION_REQUEST, &value)
    guard result == OPUS_OK else { throw OpusError(.control, code: result) }
    return Int(value)
  }

  private func run(_ packet: [UInt8]?, frameSize: Int, fec: Bool, timestamp: UInt32)
    throws(OpusError) -> PCMAudioFrame
  {
    if let packet, packet.count > Int(Int32.max) {
      throw OpusError(invalidInput: "packet too long")
    }
    // `frameSize` is at most `maxFrameSize` (the callers clamp it): `output` holds it.
    let decoded: Int32
    if let packet {
      decoded = packet.withUnsafeBufferPointer { data in
        opus_decode(
          decoder, data.baseAddress, Int32(data.count), output, Int32(frameSize), fec ? 1 : 0)
      }
    } else {
      decoded = opus_decode(decoder, nil, 0, output, Int32(frameSize), 0)
    }
    guard decoded >= 0 else { throw OpusError(.decode, code: decoded) }
    // libopus returns at most `frameSize` samples per channel; the bound is kept anyway.
    let count = min(Int(decoded), frameSize) * channels
    return PCMAudioFrame(
      samples: Array(UnsafeBufferPointer(start: output, count: count)), channels: channels,
      timestamp: timestamp)
  }
}
