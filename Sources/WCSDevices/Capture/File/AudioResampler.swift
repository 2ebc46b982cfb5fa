import CFFmpeg
import CFFmpegConvert
import WCSRecording

/// Converts decoded audio of any sample format, rate and layout to 48 kHz interleaved Int16 mono
/// or stereo with libswresample.
final class AudioResampler {
  /// Output channel count (1 or 2).
  let channels: Int
  private var context: OpaquePointer?
  private var input: (rate: Int32, format: Int32, channels: Int32)?

  init(channels: Int) {
    self.channels = channels
  }

  deinit { swr_free(&context) }

  /// The converted samples of `frame` (interleaved; may lag the input by the filter delay).
  func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws(MediaFileReaderError) -> [Int16] {
    let context = try configure(for: frame)
    let inputs = UnsafeMutableRawPointer(frame.pointee.extended_data)?
      .assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
    return try run(context, inputs: inputs, count: frame.pointee.nb_samples)
  }

  /// The samples still held in the resampler's filter, at the end of the file.
  func drain() throws(MediaFileReaderError) -> [Int16] {
    guard let context else { return [] }
    return try run(context, inputs: nil, count: 0)
  }

  /// Forgets the filter state (after a seek).
  func reset() {
    swr_free(&context)
    input = nil
  }

  private func configure(for frame: UnsafeMutablePointer<AVFrame>) throws(MediaFileReaderError)
    -> OpaquePointer
  {
    let key = (frame.pointee.sample_rate, frame.pointee.format, frame.pointee.ch_layout.nb_channels)
    if let context, let input, input == key { return context }
    swr_free(&context)
    guard key.0 > 0, key.2 > 0 else {
      throw .ffmpeg(FFmpegError(operation: "decoded audio format", code: wcs_averror_invaliddata()))
    }
    var inputLayout = AVChannelLayout()
    if frame.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
      av_channel_layout_default(&inputLayout, key.2)
    } else {
      _ = av_channel_layout_copy(&inputLayout, &frame.pointee.ch_layout)
    }
    defer { av_channel_layout_uninit(&inputLayout) }
    var outputLayout = AVChannelLayout()
    av_channel_layout_default(&outputLayout, Int32(channels))
    defer { av_channel_layout_uninit(&outputLayout) }
    var created: OpaquePointer?
    do throws(FFmpegError) {
      try FFmpegError.check(
        swr_alloc_set_opts2(
          &created, &outputLayout, AV_SAMPLE_FMT_S16, Int32(DecodedAudioChunk.sampleRate),
          &inputLayout, AVSampleFormat(rawValue: key.1), key.0, 0, nil), "swr_alloc_set_opts2")
      guard let created else {
        throw FFmpegError(operation: "swr_alloc_set_opts2", code: wcs_averror_enomem())
      }
      context = created
      try FFmpegError.check(swr_init(created), "swr_init")
      input = key
      return created
    } catch {
      swr_free(&context)
      throw .ffmpeg(error)
    }
  }

  private func run(
    _ context: OpaquePointer, inputs: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int32
  ) throws(MediaFileReaderError) -> [Int16] {
    let capacity = swr_get_out_samples(context, count)
    guard capacity > 0 else { return [] }
    var samples = [Int16](repeating: 0, count: Int(capacity) * channels)
    let produced = samples.withUnsafeMutableBytes { raw -> Int32 in
      var output = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
      return swr_convert(context, &output, capacity, inputs, count)
    }
    if produced < 0 { throw .ffmpeg(FFmpegError(operation: "swr_convert", code: produced)) }
    samples.removeLast(samples.count - Int(produced) * channels)
    return samples
  }
}
