import COpus

/// Opus encoder (libopus, RFC 6716) for WebRTC audio: 48 kHz, mono or stereo, 20 ms frames,
/// application VOIP.
///
/// Not thread-safe: use one encoder from one thread (or behind the caller's lock).
public final class OpusEncoder {
  /// Settings of an encoder. Every value is applied with an `OPUS_SET_*` ctl.
  public struct Configuration: Sendable, Equatable {
    /// 1 (mono) or 2 (stereo).
    public var channels: Int
    /// Target bitrate in bits per second (libopus accepts 500 ... 512 000).
    public var bitrate: Int
    /// In-band forward error correction (LBRR, RFC 6716 §2.1.7): the next packet carries a
    /// low-bitrate copy of the previous frame. Needs `expectedPacketLossPercent > 0`.
    public var inbandFEC: Bool
    /// Expected packet loss, 0 ... 100 %, which sizes the in-band FEC.
    public var expectedPacketLossPercent: Int
    /// Discontinuous transmission: near-silence is sent as 1-2 byte packets every 400 ms at most.
    public var dtx: Bool
    /// Computational complexity 0 (fastest) ... 10 (best).
    public var complexity: Int

    /// Defaults for a WebRTC voice call: mono, 32 kbps, FEC on with 10 % expected loss, no DTX,
    /// complexity 9.
    public init(
      channels: Int = 1, bitrate: Int = 32_000, inbandFEC: Bool = true,
      expectedPacketLossPercent: Int = 10, dtx: Bool = false, complexity: Int = 9
    ) {
      self.channels = channels
      self.bitrate = bitrate
      self.inbandFEC = inbandFEC
      self.expectedPacketLossPercent = expectedPacketLossPercent
      self.dtx = dtx
      self.complexity = complexity
    }
  }

  /// Samples per channel in every frame given to `encode`: 960 (20 ms at 48 kHz).
  public static let frameSize = PCMAudioFrame.samplesPer20ms

  /// Largest packet `encode` produces, in bytes (RFC 6716 §3.4 bound for one 20 ms frame is 1275).
  public static let maxPacketSize = 1500

  /// The channel count given at creation.
  public let channels: Int
  private let encoder: OpaquePointer

  /// Creates and configures an encoder.
  /// - Throws: `OpusError` when `channels` is not 1 or 2, `opus_encoder_create` fails or a ctl
  ///   rejects a value.
  public init(configuration: Configuration = Configuration()) throws(OpusError) {
    guard configuration.channels == 1 || configuration.channels == 2 else {
      throw OpusError(invalidInput: "channels must be 1 or 2, got \(configuration.channels)")
    }
    var error: Int32 = 0
    guard
      let made = opus_encoder_create(
        Int32(PCMAudioFrame.sampleRate), Int32(configuration.channels), OPUS_APPLICATION_VOIP,
        &error),
      error == OPUS_OK
    else {
      throw OpusError(.createEncoder, code: error == OPUS_OK ? OPUS_ALLOC_FAIL : error)
    }
    encoder = made
    channels = configuration.channels
    do {
      try set(OPUS_SET_BITRATE_REQUEST, configuration.bitrate)
      try set(OPUS_SET_INBAND_FEC_REQUEST, configuration.inbandFEC ? 1 : 0)
      try set(OPUS_SET_PACKET_LOSS_PERC_REQUEST, configuration.expectedPacketLossPercent)
      try set(OPUS_SET_DTX_REQUEST, configuration.dtx ? 1 : 0)
      try set(OPUS_SET_COMPLEXITY_REQUEST, configuration.complexity)
    } catch {
      opus_encoder_destroy(made)
      throw error
    }
  }

  deinit {
    opus_encoder_destroy(encoder)
  }

  /// Encodes one 20 ms frame.
  /// - Parameter frame: exactly `960 * channels` interleaved samples at 48 kHz.
  /// - Returns: one Opus packet (RFC 6716 §3), the RTP payload of RFC 7587. With DTX on, 1-2 bytes
  ///   mean "nothing to transmit".
  /// - Throws: `OpusError` for a wrong sample or channel count, or when `opus_encode` fails.
  public func encode(_ frame: PCMAudioFrame) throws(OpusError) -> [UInt8] {
    guard frame.channels == channels else {
      throw OpusError(invalidInput: "frame has \(frame.channels) channels, encoder \(channels)")
    }
    guard frame.samples.count == Self.frameSize * channels else {
      throw OpusError(
        invalidInput: "frame has \(frame.samples.count) samples, need \(Self.frameSize * channels)")
    }
    var packet = [UInt8](repeating: 0, count: Self.maxPacketSize)
    let written = frame.samples.withUnsafeBufferPointer { pcm -> Int32 in
      packet.withUnsafeMutableBufferPointer { out -> Int32 in
        guard let input = pcm.baseAddress, let output = out.baseAddress else { return OPUS_BAD_ARG }
        return opus_encode(encoder, input, Int32(Self.frameSize), output, Int32(out.count))
      }
    }
    guard written >= 0 else { throw OpusError(.encode, code: written) }
    return Array(packet.prefix(Int(written)))
  }

  /// Changes the target bitrate (bits per second) between frames.
  /// - Throws: `OpusError` when libopus rejects the value.
  public func setBitrate(_ bitsPerSecond: Int) throws(OpusError) {
    try set(OPUS_SET_BITRATE_REQUEST, bitsPerSecond)
  }

  /// Changes the expected packet loss (0 ... 100 %) that sizes in-band FEC.
  /// - Throws: `OpusError` when libopus rejects the value.
  public func setExpectedPacketLoss(percent: Int) throws(OpusError) {
    try set(OPUS_SET_PACKET_LOSS_PERC_REQUEST, percent)
  }

  /// The settings libopus reports now (`OPUS_GET_*` ctls).
  /// - Throws: `OpusError` when a get ctl fails.
  public func currentConfiguration() throws(OpusError) -> Configuration {
    Configuration(
      channels: channels,
      bitrate: try get(OPUS_GET_BITRATE_REQUEST),
      inbandFEC: try get(OPUS_GET_INBAND_FEC_REQUEST) != 0,
      expectedPacketLossPercent: try get(OPUS_GET_PACKET_LOSS_PERC_REQUEST),
      dtx: try get(OPUS_GET_DTX_REQUEST) != 0,
      complexity: try get(OPUS_GET_COMPLEXITY_REQUEST))
  }

  private func set(_ request: Int32, _ value: Int) throws(OpusError) {
    let clamped = Int32(clamping: value)
    let result = wcs_opus_encoder_set(encoder, request, clamped)
    guard result == OPUS_OK else { throw OpusError(.control, code: result) }
  }

  private func get(_ request: Int32) throws(OpusError) -> Int {
    var value: Int32 = 0
    let result = wcs_opus_encoder_get(encoder, request, &value)
    guard result == OPUS_OK else { throw OpusError(.control, code: result) }
    return Int(value)
  }
}
