import CFFmpeg

/// The libavformat output both recorders drive: a muxer context, its streams and the file.
///
/// Streams are added before `start(path:)` writes the header; the muxer may change each
/// stream's time base while doing so, so `timeBase(of:)` is read after it.
final class FFmpegMuxer {
  /// A stream of the file: its index and the time base packets are written in.
  struct Stream {
    var index: Int32
    var timeBase: AVRational
  }

  var context: UnsafeMutablePointer<AVFormatContext>?

  /// A context for libavformat's muxer `format` ("webm", "mp4") writing `path`.
  init(format: String, path: String) throws(FFmpegError) {
    var newContext: UnsafeMutablePointer<AVFormatContext>?
    let allocated = avformat_alloc_output_context2(&newContext, nil, format, path)
    guard allocated >= 0, let newContext else {
      throw FFmpegError(operation: "avformat_alloc_output_context2", code: allocated)
    }
    context = newContext
  }

  deinit { release() }

  /// True until `release()`.
  var isOpen: Bool { context != nil }

  /// Adds a video stream of `codec` with `extradata` (the codec's decoder configuration).
  func addVideoStream(codec: AVCodecID, width: Int, height: Int, extradata: [UInt8] = [])
    throws(FFmpegError) -> Stream
  {
    let (stream, parameters) = try newStream()
    parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
    parameters.pointee.codec_id = codec
    parameters.pointee.width = Int32(width)
    parameters.pointee.height = Int32(height)
    if !extradata.isEmpty { try Self.setExtradata(extradata, of: parameters) }
    stream.pointee.time_base = AVRational(num: 1, den: 90_000)
    return Stream(index: stream.pointee.index, timeBase: stream.pointee.time_base)
  }

  /// Adds a 48 kHz Opus stream whose decoder configuration is an OpusHead (RFC 7845 §5.1) with
  /// the customary pre-skip; both Matroska (CodecPrivate, CodecDelay) and ISO BMFF (`dOps`,
  /// edit list) take it from there.
  func addOpusStream(channels: Int) throws(FFmpegError) -> Stream {
    let (stream, parameters) = try newStream()
    parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
    parameters.pointee.codec_id = AV_CODEC_ID_OPUS
    parameters.pointee.sample_rate = 48_000
    av_channel_layout_default(&parameters.pointee.ch_layout, Int32(channels))
    // The container's codec delay must match the pre-skip in OpusHead (RFC 7845 §4.2).
    parameters.pointee.initial_padding = Int32(OpusHead.defaultPreSkip)
    try Self.setExtradata(
      OpusHead.bytes(channels: UInt8(channels), inputSampleRate: 48_000), of: parameters)
    stream.pointee.time_base = AVRational(num: 1, den: 48_000)
    return Stream(index: stream.pointee.index, timeBase: stream.pointee.time_base)
  }

  /// Opens `path` for writing and writes the header.
  func start(path: String) throws(FFmpegError) {
    guard let context else { throw FFmpegError(operation: "start", code: wcs_averror_einval()) }
    try FFmpegError.check(
      avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE), "avio_open(\(path))")
    try FFmpegError.check(avformat_write_header(context, nil), "avformat_write_header")
  }

  /// The time base the muxer chose for `stream` while writing the header.
  func timeBase(of stream: Stream) -> Stream {
    guard let context, stream.index >= 0, stream.index < Int32(context.pointee.nb_streams),
      let streams = context.pointee.streams, let found = streams[Int(stream.index)]
    else { return stream }
    return Stream(index: stream.index, timeBase: found.pointee.time_base)
  }

  /// Writes one packet whose times are in ticks of a `clockRate` Hz clock; decode and
  /// presentation times are equal (no reordered pictures).
  func write(_ packet: WebMTrack.Packet, clockRate: Int32, stream: Stream) throws(FFmpegError) {
    guard let context else {
      throw FFmpegError(operation: "av_interleaved_write_frame", code: wcs_averror_einval())
    }
    guard let avPacket = av_packet_alloc() else {
      throw FFmpegError(operation: "av_packet_alloc", code: wcs_averror_enomem())
    }
    defer {
      var owned: UnsafeMutablePointer<AVPacket>? = avPacket
      av_packet_free(&owned)
    }
    try FFmpegError.check(av_new_packet(avPacket, Int32(packet.bytes.count)), "av_new_packet")
    packet.bytes.withUnsafeBytes { source in
      guard let from = source.baseAddress, let to = avPacket.pointee.data else { return }
      UnsafeMutableRawPointer(to).copyMemory(from: from, byteCount: source.count)
    }
    let clock = AVRational(num: 1, den: clockRate)
    let start = av_rescale_q(packet.ticks, clock, stream.timeBase)
    let end = av_rescale_q(packet.ticks + packet.durationTicks, clock, stream.timeBase)
    avPacket.pointee.pts = start
    avPacket.pointee.dts = start
    avPacket.pointee.duration = end - start
    avPacket.pointee.stream_index = stream.index
    if packet.isKeyFrame { avPacket.pointee.flags |= AV_PKT_FLAG_KEY }
    try FFmpegError.check(
      av_interleaved_write_frame(context, avPacket), "av_interleaved_write_frame")
  }

  /// Writes the trailer (the index: Matroska cues, the MP4 `moov`).
  func writeTrailer() throws(FFmpegError) {
    guard let context else { return }
    try FFmpegError.check(av_write_trailer(context), "av_write_trailer")
  }

  /// Closes the file and frees the context; later calls do nothing.
  func release() {
    guard let context else { return }
    if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
    avformat_free_context(context)
    self.context = nil
  }

  func newStream() throws(FFmpegError) -> (
    UnsafeMutablePointer<AVStream>, UnsafeMutablePointer<AVCodecParameters>
  ) {
    guard let context, let stream = avformat_new_stream(context, nil),
      let parameters = stream.pointee.codecpar
    else {
      throw FFmpegError(operation: "avformat_new_stream", code: wcs_averror_enomem())
    }
    return (stream, parameters)
  }

  static func setExtradata(
    _ bytes: [UInt8], of parameters: UnsafeMutablePointer<AVCodecParameters>
  ) throws(FFmpegError) {
    guard
      let extradata = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))?
        .assumingMemoryBound(to: UInt8.self)
    else {
      throw FFmpegError(operation: "av_mallocz", code: wcs_averror_enomem())
    }
    extradata.update(from: bytes, count: bytes.count)
    parameters.pointee.extradata = extradata
    parameters.pointee.extradata_size = Int32(bytes.count)
  }
}
