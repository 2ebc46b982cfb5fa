import CFFmpeg
import WCSRecording

/// One stream's libavcodec decoder: packets in, frames out (send/receive API).
final class FFmpegStreamDecoder {
  let streamIndex: Int32
  /// The stream's time base: frame timestamps are in these units.
  let timeBase: AVRational
  private var context: UnsafeMutablePointer<AVCodecContext>?
  private var frame: UnsafeMutablePointer<AVFrame>?

  /// Opens the decoder for stream `streamIndex` of `format`.
  /// Throws `.decoderUnavailable` or `.ffmpeg`.
  init(format: UnsafeMutablePointer<AVFormatContext>, streamIndex: Int32)
    throws(MediaFileReaderError)
  {
    guard streamIndex >= 0, streamIndex < Int32(format.pointee.nb_streams),
      let stream = format.pointee.streams?[Int(streamIndex)],
      let parameters = stream.pointee.codecpar
    else { throw .noMediaStreams }
    self.streamIndex = streamIndex
    self.timeBase = stream.pointee.time_base
    let codecID = parameters.pointee.codec_id
    guard let codec = avcodec_find_decoder(codecID) else {
      throw .decoderUnavailable(codecName: String(cString: avcodec_get_name(codecID)))
    }
    guard let context = avcodec_alloc_context3(codec), let frame = av_frame_alloc() else {
      throw .ffmpeg(FFmpegError(operation: "avcodec_alloc_context3", code: wcs_averror_enomem()))
    }
    self.context = context
    self.frame = frame
    do {
      try FFmpegError.check(
        avcodec_parameters_to_context(context, parameters), "avcodec_parameters_to_context")
      context.pointee.pkt_timebase = stream.pointee.time_base
      try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2")
    } catch {
      throw .ffmpeg(error)
    }
  }

  deinit {
    avcodec_free_context(&context)
    av_frame_free(&frame)
  }

  /// Sends `packet` (nil drains the decoder at the end of the file) and calls `body` with each
  /// frame the decoder gives back. Returns false when the decoder rejected the packet or failed
  /// on it (corrupt data), which skips it rather than ending the stream.
  func decode(
    _ packet: UnsafeMutablePointer<AVPacket>?,
    _ body: (UnsafeMutablePointer<AVFrame>) throws(MediaFileReaderError) -> Void
  ) throws(MediaFileReaderError) -> Bool {
    guard let context, let frame else { return false }
    let sent = avcodec_send_packet(context, packet)
    var healthy = sent >= 0 || sent == wcs_averror_eof()
    while true {
      let received = avcodec_receive_frame(context, frame)
      if received == wcs_averror_eagain() || received == wcs_averror_eof() { break }
      if received < 0 {
        healthy = false
        break
      }
      defer { av_frame_unref(frame) }
      try body(frame)
    }
    return healthy
  }

  /// Drops buffered frames and leaves the drained state, after a seek.
  func flush() {
    if let context { avcodec_flush_buffers(context) }
  }
}
