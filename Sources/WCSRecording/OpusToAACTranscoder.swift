import CFFmpeg
import COpus

/// Why an `OpusToAACTranscoder` could not be created or could not encode.
public enum AudioTranscodeError: Error, Equatable, Sendable, CustomStringConvertible {
  /// libopus refused to create a decoder (its error code, `opus_errorcodes`).
  case opusDecoder(Int32)
  /// libavcodec has no AAC encoder.
  case aacEncoderUnavailable
  /// An FFmpeg call failed.
  case ffmpeg(FFmpegError)

  /// A one-line explanation.
  public var description: String {
    switch self {
    case .opusDecoder(let code): return "opus_decoder_create failed (\(code))"
    case .aacEncoderUnavailable: return "libavcodec has no AAC encoder"
    case .ffmpeg(let error): return "\(error)"
    }
  }
}

/// Opus packets (RFC 7587 RTP payloads) to AAC-LC (ISO/IEC 14496-3) for RTMP/FLV, which has no
/// Opus: decoded with libopus at 48 kHz, encoded with libavcodec's native AAC encoder at the
/// same rate (1024-sample frames, so a FIFO sits between the 20 ms Opus frames and it).
///
/// Timing is the caller's: each Opus packet comes with its position in 48 kHz ticks on the
/// output timeline, and every AAC packet leaves with the position of its first sample there.
/// A packet that starts before the end of what was already decoded (a duplicate, a late
/// packet) is dropped; a gap up to `maxFilledGapTicks` is filled with silence so the AAC stream
/// stays continuous; a longer gap (a paused sender) starts a new run of frames at the new
/// position. Undecodable packets are dropped and counted; nothing else is lost.
///
/// Not thread-safe: use one transcoder from one thread.
public final class OpusToAACTranscoder {
  /// One AAC access unit (raw, no ADTS header) and its place on the timeline, 48 kHz ticks.
  public struct Packet: Equatable, Sendable {
    /// The raw AAC-LC access unit (ISO/IEC 14496-3 raw_data_block, no ADTS header).
    public var bytes: [UInt8]
    /// Presentation time of its first sample, 48 kHz ticks from the timeline's 0.
    public var ticks: Int64
    /// Its length, 48 kHz ticks (`frameSize` samples: 1024 for AAC-LC).
    public var durationTicks: Int64
  }

  /// Counts of what was dropped or made up.
  public struct Statistics: Equatable, Sendable {
    /// Opus packets decoded.
    public var opusPacketsDecoded = 0
    /// Opus packets libopus could not decode.
    public var opusPacketsUndecodable = 0
    /// Opus packets that started before the end of the decoded audio.
    public var opusPacketsLate = 0
    /// Samples (per channel) of silence put into gaps.
    public var silenceSamplesInserted = 0
    /// AAC packets produced.
    public var aacPacketsEncoded = 0
  }

  /// The sample rate of both sides, Hz (Opus RTP is always 48 kHz, RFC 7587 §4.1).
  public static let sampleRate = 48_000
  /// Longest gap filled with silence, ticks (1 s).
  public static let maxFilledGapTicks: Int64 = 48_000
  /// The largest Opus frame, samples per channel (120 ms, RFC 6716 §2.1.4).
  static let maxOpusFrameSamples = 5760

  /// Output channels (1 or 2); Opus is decoded to this many.
  public let channels: Int
  /// AAC bit rate, bits per second.
  public let bitRate: Int
  /// AAC samples per frame per channel (1024 for AAC-LC).
  public let frameSize: Int
  /// The AudioSpecificConfig of the AAC stream (ISO/IEC 14496-3 §1.6.2.1), the FLV sequence
  /// header's payload.
  public let audioSpecificConfig: [UInt8]
  public private(set) var statistics = Statistics()

  private var decoder: OpaquePointer?
  private var encoder: UnsafeMutablePointer<AVCodecContext>?
  private var frame: UnsafeMutablePointer<AVFrame>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  /// Decoded samples not yet encoded, one array per channel, starting at `pendingTicks`.
  private var pending: [[Float]]
  private var pendingTicks: Int64?
  private var decoded: [Float]

  /// A transcoder to `channels`-channel AAC-LC at `bitRate` bits per second.
  ///
  /// - Throws: `AudioTranscodeError.opusDecoder`, `.aacEncoderUnavailable`, or `.ffmpeg` when
  ///   the encoder does not open.
  public init(channels: Int = 2, bitRate: Int = 128_000) throws(AudioTranscodeError) {
    self.channels = max(1, min(2, channels))
    self.bitRate = bitRate
    var error: Int32 = 0
    guard let decoder = opus_decoder_create(Int32(Self.sampleRate), Int32(self.channels), &error),
      error == OPUS_OK
    else { throw .opusDecoder(error) }
    self.decoder = decoder
    pending = Array(repeating: [], count: self.channels)
    decoded = [Float](repeating: 0, count: Self.maxOpusFrameSamples * self.channels)
    guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC),
      let context = avcodec_alloc_context3(codec)
    else {
      opus_decoder_destroy(decoder)
      throw .aacEncoderUnavailable
    }
    encoder = context
    context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
    context.pointee.sample_rate = Int32(Self.sampleRate)
    av_channel_layout_default(&context.pointee.ch_layout, Int32(self.channels))
    context.pointee.bit_rate = Int64(bitRate)
    context.pointee.time_base = AVRational(num: 1, den: Int32(Self.sampleRate))
    // FLV carries the AudioSpecificConfig once, not an ADTS header per frame.
    context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
    let opened = avcodec_open2(context, codec, nil)
    frame = av_frame_alloc()
    packet = av_packet_alloc()
    frameSize = Int(context.pointee.frame_size > 0 ? context.pointee.frame_size : 1024)
    var config: [UInt8] = []
    if let extradata = context.pointee.extradata, context.pointee.extradata_size > 0 {
      config = Array(
        UnsafeBufferPointer(start: extradata, count: Int(context.pointee.extradata_size)))
    }
    audioSpecificConfig = config
    // A throw from here on runs `deinit`, which frees what was made.
    guard opened >= 0, frame != nil, packet != nil, !config.isEmpty else {
      throw .ffmpeg(
        FFmpegError(
          operation: "avcodec_open2(aac)", code: opened < 0 ? opened : wcs_averror_einval()))
    }
    frame?.pointee.nb_samples = Int32(frameSize)
    frame?.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
    frame?.pointee.sample_rate = Int32(Self.sampleRate)
    if let frame { av_channel_layout_default(&frame.pointee.ch_layout, Int32(self.channels)) }
    let buffered = av_frame_get_buffer(frame, 0)
    guard buffered >= 0 else {
      throw .ffmpeg(FFmpegError(operation: "av_frame_get_buffer", code: buffered))
    }
  }

  deinit { release() }

  /// Decodes one Opus packet placed at `ticks` (48 kHz, on the output timeline) and returns the
  /// AAC packets that are complete now.
  ///
  /// - Throws: `.ffmpeg` when the encoder fails (the transcoder is unusable after that).
  public func add(_ opus: [UInt8], ticks: Int64) throws(AudioTranscodeError) -> [Packet] {
    guard !opus.isEmpty else { return [] }
    guard let decoder else { return [] }
    // The packet's length from its TOC (RFC 6716 §3.1), to tell a late one before decoding it:
    // a duplicate fed to the decoder would put its state out of step.
    let length = opus.withUnsafeBufferPointer { bytes -> Int32 in
      guard let base = bytes.baseAddress else { return -1 }
      return opus_packet_get_nb_samples(base, Int32(bytes.count), Int32(Self.sampleRate))
    }
    guard length > 0, length <= Self.maxOpusFrameSamples else {
      statistics.opusPacketsUndecodable += 1
      return []
    }
    if let start = pendingTicks, ticks < start + Int64(pending[0].count) - Int64(length) / 2 {
      statistics.opusPacketsLate += 1
      return []
    }
    let count = opus.withUnsafeBufferPointer { input in
      decoded.withUnsafeMutableBufferPointer { output -> Int32 in
        guard let samples = output.baseAddress else { return -1 }
        return opus_decode_float(
          decoder, input.baseAddress, Int32(input.count), samples,
          Int32(Self.maxOpusFrameSamples), 0)
      }
    }
    guard count > 0 else {
      statistics.opusPacketsUndecodable += 1
      return []
    }
    var output: [Packet] = []
    if let start = pendingTicks {
      let gap = ticks - (start + Int64(pending[0].count))
      if gap > Self.maxFilledGapTicks {
        // A new run: what is left is padded to a frame and sent, the next frames start here.
        if !pending[0].isEmpty {
          appendSilence(frameSize - pending[0].count)
          output += try encodeFrames()
        }
        pendingTicks = ticks
      } else if gap > 0 {
        appendSilence(Int(gap))
      }
    } else {
      pendingTicks = ticks
    }
    statistics.opusPacketsDecoded += 1
    for index in 0..<Int(count) {
      for channel in 0..<channels {
        pending[channel].append(decoded[index * channels + channel])
      }
    }
    return output + (try encodeFrames())
  }

  /// Encodes what is left (padded with silence to a frame) and drains the encoder.
  public func finish() throws(AudioTranscodeError) -> [Packet] {
    var output: [Packet] = []
    if let pendingCount = pending.first?.count, pendingCount > 0 {
      appendSilence(frameSize - pendingCount)
      output += try encodeFrames()
    }
    guard let encoder else { return output }
    _ = avcodec_send_frame(encoder, nil)
    output += try receivePackets()
    return output
  }

  private func appendSilence(_ samples: Int) {
    guard samples > 0 else { return }
    statistics.silenceSamplesInserted += samples
    for channel in 0..<channels {
      pending[channel] += repeatElement(0, count: samples)
    }
  }

  private func encodeFrames() throws(AudioTranscodeError) -> [Packet] {
    guard let encoder, let frame, var start = pendingTicks else { return [] }
    var output: [Packet] = []
    while pending[0].count >= frameSize {
      let writable = av_frame_make_writable(frame)
      guard writable >= 0 else {
        throw .ffmpeg(FFmpegError(operation: "av_frame_make_writable", code: writable))
      }
      for channel in 0..<channels {
        guard let plane = frame.pointee.extended_data[channel] else { continue }
        plane.withMemoryRebound(to: Float.self, capacity: frameSize) { samples in
          pending[channel].withUnsafeBufferPointer { source in
            guard let from = source.baseAddress else { return }
            samples.update(from: from, count: frameSize)
          }
        }
        pending[channel].removeFirst(frameSize)
      }
      frame.pointee.pts = start
      start += Int64(frameSize)
      let sent = avcodec_send_frame(encoder, frame)
      guard sent >= 0 else {
        throw .ffmpeg(FFmpegError(operation: "avcodec_send_frame", code: sent))
      }
      output += try receivePackets()
    }
    pendingTicks = start
    return output
  }

  private func receivePackets() throws(AudioTranscodeError) -> [Packet] {
    guard let encoder, let packet else { return [] }
    var output: [Packet] = []
    while true {
      let code = avcodec_receive_packet(encoder, packet)
      if code == wcs_averror_eagain() || code == wcs_averror_eof() { break }
      guard code >= 0 else {
        throw .ffmpeg(FFmpegError(operation: "avcodec_receive_packet", code: code))
      }
      defer { av_packet_unref(packet) }
      guard let data = packet.pointee.data, packet.pointee.size > 0 else { continue }
      output.append(
        Packet(
          bytes: Array(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size))),
          ticks: packet.pointee.pts,
          durationTicks: packet.pointee.duration > 0 ? packet.pointee.duration : Int64(frameSize)))
      statistics.aacPacketsEncoded += 1
    }
    return output
  }

  private func release() {
    if let decoder { opus_decoder_destroy(decoder) }
    decoder = nil
    if encoder != nil { avcodec_free_context(&encoder) }
    if frame != nil { av_frame_free(&frame) }
    if packet != nil { av_packet_free(&packet) }
  }
}
