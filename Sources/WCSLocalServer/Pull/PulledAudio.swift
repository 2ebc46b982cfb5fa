import CFFmpeg
import CFFmpegConvert
import WCSCodecs
import WCSRecording

/// What a pulled source's audio is, and what the relay makes of it.
struct PulledAudioFormat: Equatable, Sendable {
  /// libavcodec's name of the source's codec (`aac`, `mp3`, `pcm_mulaw`, `opus`).
  var codecName: String
  /// The source's sample rate (Hz) and channels as its stream declares them (0: unknown until
  /// the first decoded frame).
  var sampleRate: Int
  var channels: Int
  /// Channels of the Opus the players get: 1, or 2 for a source with two or more.
  var opusChannels: Int
}

/// A pulled source's audio turned into what WebRTC players take: decoded with libavcodec (AAC,
/// MP3, G.711, Opus, whatever the build decodes), resampled to 48 kHz with libswresample (mono,
/// or stereo for a source with two channels or more), and encoded as Opus (RFC 7587) in 20 ms
/// frames stamped with the source's presentation times (`PulledAudioFramer`).
///
/// Every size the source declares is bounded before it is used: channels (`maxChannels`),
/// sample rate (`sampleRates`), samples per decoded frame (`maxFrameSamples`), packet and
/// extradata bytes. Not thread-safe: one reader thread owns it.
final class PulledAudio {
  static let maxChannels = 8
  static let sampleRates = 8000...192_000
  /// Samples per channel in one decoded frame (AAC has 1024 or 2048, MP3 1152; a G.711 or PCM
  /// packet of a second at 16 kHz fits).
  static let maxFrameSamples = 16_384
  /// Bytes of one compressed audio packet, and of the codec's extradata.
  static let maxPacketSize = 64 * 1024
  static let maxExtradataSize = 64 * 1024
  /// Frames one packet may decode to (a decoder that returns more is cut off).
  static let maxFramesPerPacket = 64

  let format: PulledAudioFormat
  /// The source stream's time base (the packets' pts unit).
  let timeBase: AVRational
  private var decoder: UnsafeMutablePointer<AVCodecContext>?
  private var frame: UnsafeMutablePointer<AVFrame>?
  private var resampler: OpaquePointer?
  private var resamplerInput: (rate: Int32, format: Int32, channels: Int32)?
  private var framer: PulledAudioFramer
  private let encoder: OpusEncoder

  /// Opens a decoder for `parameters` (a demuxed audio stream's), whose packets' times are in
  /// `timeBase`.
  /// - Throws: `PullError.wrongFormat` for a codec this libavcodec cannot decode, channels,
  ///   sample rate or extradata out of bounds, or a decoder or Opus encoder that fails to open.
  init(parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational) throws(PullError) {
    let declared = parameters.pointee
    let name = String(cString: avcodec_get_name(declared.codec_id))
    let channels = Int(declared.ch_layout.nb_channels)
    let sampleRate = Int(declared.sample_rate)
    guard (0...Self.maxChannels).contains(channels) else {
      throw .wrongFormat("audio with \(channels) channels")
    }
    guard sampleRate == 0 || Self.sampleRates.contains(sampleRate) else {
      throw .wrongFormat("audio at \(sampleRate) Hz")
    }
    guard (0...Self.maxExtradataSize).contains(Int(declared.extradata_size)) else {
      throw .wrongFormat("audio extradata of \(declared.extradata_size) bytes")
    }
    guard timeBase.num > 0, timeBase.den > 0 else { throw .wrongFormat("audio time base") }
    guard let codec = avcodec_find_decoder(declared.codec_id) else {
      throw .wrongFormat("no decoder for \(name) audio")
    }
    format = PulledAudioFormat(
      codecName: name, sampleRate: sampleRate, channels: channels,
      opusChannels: channels >= 2 ? 2 : 1)
    self.timeBase = timeBase
    framer = PulledAudioFramer(channels: format.opusChannels)
    do {
      encoder = try OpusEncoder(
        configuration: OpusEncoder.Configuration(
          channels: format.opusChannels, bitrate: format.opusChannels == 2 ? 64_000 : 48_000))
    } catch {
      throw .wrongFormat("Opus encoder: \(error)")
    }
    guard let context = avcodec_alloc_context3(codec) else {
      throw .wrongFormat("avcodec_alloc_context3")
    }
    decoder = context
    do throws(FFmpegError) {
      try FFmpegError.check(
        avcodec_parameters_to_context(context, parameters), "avcodec_parameters_to_context")
      context.pointee.pkt_timebase = timeBase
      context.pointee.thread_count = 1
      context.pointee.max_samples = Int64(Self.maxFrameSamples)
      try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2")
    } catch {
      avcodec_free_context(&decoder)
      throw .wrongFormat("\(name) decoder: \(error)")
    }
    frame = av_frame_alloc()
    guard frame != nil else {
      avcodec_free_context(&decoder)
      throw .wrongFormat("av_frame_alloc")
    }
  }

  deinit {
    avcodec_free_context(&decoder)
    av_frame_free(&frame)
    swr_free(&resampler)
  }

  /// Blocks the framer refused or that restarted the timeline (for the log).
  var discontinuities: Int { framer.discontinuities }

  /// Decodes one demuxed packet and returns the Opus frames it completes: each payload (RFC 7587
  /// §4.2, one 20 ms frame) with the 48 kHz media time of its first sample on the source's
  /// timeline (the packets' pts rescaled; RTP timestamps add the stream's random offset).
  /// - Throws: `PullError.badFrame` for a packet over `maxPacketSize`, data the decoder
  ///   rejects, or a decoded frame whose rate, channels or size is out of bounds (the packet is
  ///   dropped; the stream goes on).
  func decode(_ packet: UnsafeMutablePointer<AVPacket>) throws(PullError) -> [(
    time: Int64, payload: [UInt8]
  )] {
    guard let decoder, let frame else { return [] }
    guard Int(packet.pointee.size) <= Self.maxPacketSize else {
      throw .badFrame("audio packet of \(packet.pointee.size) bytes")
    }
    let sent = avcodec_send_packet(decoder, packet)
    guard sent >= 0 || sent == wcs_averror_eagain() else {
      throw .badFrame(FFmpegError(operation: "avcodec_send_packet", code: sent).description)
    }
    var output: [(time: Int64, payload: [UInt8])] = []
    for _ in 0..<Self.maxFramesPerPacket {
      let received = avcodec_receive_frame(decoder, frame)
      if received == wcs_averror_eagain() || received == wcs_averror_eof() { break }
      guard received >= 0 else {
        throw .badFrame(FFmpegError(operation: "avcodec_receive_frame", code: received).description)
      }
      defer { av_frame_unref(frame) }
      let samples = try resample(frame)
      let noTimestamp = wcs_av_nopts_value()
      let pts =
        frame.pointee.best_effort_timestamp != noTimestamp
        ? frame.pointee.best_effort_timestamp : frame.pointee.pts
      let time =
        pts == noTimestamp
        ? nil
        : av_rescale_q(pts, timeBase, AVRational(num: 1, den: Int32(PCMAudioFrame.sampleRate)))
      for (start, pcm) in framer.add(samples, time: time) {
        do {
          output.append((start, try encoder.encode(pcm)))
        } catch {
          throw .badFrame("Opus: \(error)")
        }
      }
    }
    return output
  }

  /// `frame` as interleaved 16-bit samples at 48 kHz in `format.opusChannels` channels; the
  /// resampler is set up again when the decoded rate, sample format or channels change (HE-AAC
  /// signals its doubled rate only in the first frames).
  private func resample(_ frame: UnsafeMutablePointer<AVFrame>) throws(PullError) -> [Int16] {
    let decoded = frame.pointee
    let key = (decoded.sample_rate, decoded.format, decoded.ch_layout.nb_channels)
    guard Self.sampleRates.contains(Int(key.0)), (1...Self.maxChannels).contains(Int(key.2)),
      (1...Self.maxFrameSamples).contains(Int(decoded.nb_samples))
    else {
      throw .badFrame(
        "decoded audio: \(key.0) Hz, \(key.2) channels, \(decoded.nb_samples) samples")
    }
    if resampler == nil || resamplerInput.map({ $0 != key }) ?? true {
      swr_free(&resampler)
      resamplerInput = nil
      var inputLayout = AVChannelLayout()
      if decoded.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
        av_channel_layout_default(&inputLayout, key.2)
      } else {
        _ = av_channel_layout_copy(&inputLayout, &frame.pointee.ch_layout)
      }
      defer { av_channel_layout_uninit(&inputLayout) }
      var outputLayout = AVChannelLayout()
      av_channel_layout_default(&outputLayout, Int32(format.opusChannels))
      defer { av_channel_layout_uninit(&outputLayout) }
      let code = swr_alloc_set_opts2(
        &resampler, &outputLayout, AV_SAMPLE_FMT_S16, Int32(PCMAudioFrame.sampleRate),
        &inputLayout, AVSampleFormat(rawValue: key.1), key.0, 0, nil)
      guard code >= 0, let resampler, swr_init(resampler) >= 0 else {
        swr_free(&resampler)
        throw .badFrame("no resampler for \(key.0) Hz, \(key.2) channels, format \(key.1)")
      }
      resamplerInput = key
    }
    guard let resampler else { return [] }
    let capacity = swr_get_out_samples(resampler, decoded.nb_samples)
    guard capacity > 0 else { return [] }
    var samples = [Int16](repeating: 0, count: Int(capacity) * format.opusChannels)
    let inputs = UnsafeMutableRawPointer(decoded.extended_data)?
      .assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
    let produced = samples.withUnsafeMutableBytes { raw -> Int32 in
      var output = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
      return swr_convert(resampler, &output, capacity, inputs, decoded.nb_samples)
    }
    guard produced >= 0 else {
      throw .badFrame(FFmpegError(operation: "swr_convert", code: produced).description)
    }
    samples.removeLast(samples.count - Int(produced) * format.opusChannels)
    return samples
  }
}
