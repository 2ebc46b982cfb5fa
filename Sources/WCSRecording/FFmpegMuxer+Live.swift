import CFFmpeg

// What a live output (RTMP) needs beyond a file: opening a URL under an interrupt callback and
// muxer options, the header written later (once the first key frame gives the video's
// configuration), and an AAC stream.
extension FFmpegMuxer {
  /// Opens `url` for writing (for `rtmp://`: the TCP connection, RTMP handshake, `connect` and
  /// `publish`) with `options` for the protocol; `interrupt` is polled by every blocking I/O
  /// call of this output from now on, so a true result ends the wait.
  func open(url: String, options: [String: String], interrupt: AVIOInterruptCB)
    throws(FFmpegError)
  {
    guard let context else { throw FFmpegError(operation: "open", code: wcs_averror_einval()) }
    context.pointee.interrupt_callback = interrupt
    var dictionary: OpaquePointer?
    defer { av_dict_free(&dictionary) }
    for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
    var callback = interrupt
    try FFmpegError.check(
      avio_open2(&context.pointee.pb, url, AVIO_FLAG_WRITE, &callback, &dictionary),
      "avio_open2")
  }

  /// Writes the header of an output opened with `open(url:options:interrupt:)`, after its
  /// streams were added; `options` are the muxer's (e.g. `flvflags`).
  func writeHeader(options: [String: String]) throws(FFmpegError) {
    guard let context else {
      throw FFmpegError(operation: "avformat_write_header", code: wcs_averror_einval())
    }
    var dictionary: OpaquePointer?
    defer { av_dict_free(&dictionary) }
    for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
    try FFmpegError.check(avformat_write_header(context, &dictionary), "avformat_write_header")
  }

  /// Adds an AAC stream whose decoder configuration is `audioSpecificConfig` (ISO/IEC 14496-3
  /// §1.6.2.1), in a time base of `sampleRate`.
  func addAACStream(
    sampleRate: Int, channels: Int, frameSize: Int, audioSpecificConfig: [UInt8]
  ) throws(FFmpegError) -> Stream {
    let (stream, parameters) = try newStream()
    parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
    parameters.pointee.codec_id = AV_CODEC_ID_AAC
    parameters.pointee.sample_rate = Int32(sampleRate)
    parameters.pointee.frame_size = Int32(frameSize)
    av_channel_layout_default(&parameters.pointee.ch_layout, Int32(channels))
    try Self.setExtradata(audioSpecificConfig, of: parameters)
    stream.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
    return Stream(index: stream.pointee.index, timeBase: stream.pointee.time_base)
  }
}
