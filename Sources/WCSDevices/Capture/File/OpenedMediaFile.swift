import CFFmpeg
import WCSRecording

/// An open container and the decoders of its chosen video and audio streams.
final class OpenedMediaFile {
  let format: UnsafeMutablePointer<AVFormatContext>
  let packet: UnsafeMutablePointer<AVPacket>
  let videoDecoder: FFmpegStreamDecoder?
  let audioDecoder: FFmpegStreamDecoder?

  /// Opens `path`, probes its streams and opens decoders for the best video stream (when
  /// `decodeVideo`) and the best audio stream (when `decodeAudio`). With neither, the file is
  /// only probed (`describe()` gives its format and duration).
  init(path: String, decodeVideo: Bool, decodeAudio: Bool) throws(MediaFileReaderError) {
    var opened: UnsafeMutablePointer<AVFormatContext>?
    let openResult = avformat_open_input(&opened, path, nil, nil)
    guard openResult >= 0, let format = opened else {
      throw .openFailed(path: path, FFmpegError(operation: "avformat_open_input", code: openResult))
    }
    do throws(MediaFileReaderError) {
      let streamInfo = avformat_find_stream_info(format, nil)
      if streamInfo < 0 {
        throw .streamInfoUnavailable(
          FFmpegError(operation: "avformat_find_stream_info", code: streamInfo))
      }
      let videoIndex =
        decodeVideo ? av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0) : -1
      let audioIndex =
        decodeAudio ? av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0) : -1
      // A probe (nothing to decode) needs no stream; a decode needs one it asked for.
      if (decodeVideo || decodeAudio) && videoIndex < 0 && audioIndex < 0 {
        throw .noMediaStreams
      }
      videoDecoder =
        videoIndex >= 0 ? try FFmpegStreamDecoder(format: format, streamIndex: videoIndex) : nil
      audioDecoder =
        audioIndex >= 0 ? try FFmpegStreamDecoder(format: format, streamIndex: audioIndex) : nil
      guard let packet = av_packet_alloc() else {
        throw .ffmpeg(FFmpegError(operation: "av_packet_alloc", code: wcs_averror_enomem()))
      }
      self.packet = packet
    } catch {
      avformat_close_input(&opened)
      throw error
    }
    self.format = format
  }

  deinit {
    var ownedPacket: UnsafeMutablePointer<AVPacket>? = packet
    av_packet_free(&ownedPacket)
    var ownedFormat: UnsafeMutablePointer<AVFormatContext>? = format
    avformat_close_input(&ownedFormat)
  }

  /// The file's start time in seconds (`AVFormatContext.start_time`), 0 when unknown or
  /// negative (a negative start is codec delay, e.g. Opus pre-skip, which decoders remove).
  var startSeconds: Double {
    let start = format.pointee.start_time
    guard start != wcs_av_nopts_value(), start > 0 else { return 0 }
    return Double(start) / Double(wcs_av_time_base())
  }

  /// Container and stream information.
  func describe() -> MediaFileInfo {
    let duration = format.pointee.duration
    var info = MediaFileInfo(
      formatName: format.pointee.iformat?.pointee.name.map { String(cString: $0) } ?? "",
      durationSeconds: duration == wcs_av_nopts_value() || duration <= 0
        ? nil : Double(duration) / Double(wcs_av_time_base()),
      video: nil, audio: nil)
    if let stream = stream(videoDecoder?.streamIndex), let parameters = stream.pointee.codecpar {
      var rate = stream.pointee.avg_frame_rate
      if rate.num <= 0 || rate.den <= 0 { rate = stream.pointee.r_frame_rate }
      info.video = MediaFileInfo.Video(
        codecName: String(cString: avcodec_get_name(parameters.pointee.codec_id)),
        width: Int(parameters.pointee.width), height: Int(parameters.pointee.height),
        framesPerSecond: rate.num > 0 && rate.den > 0 ? wcs_av_q2d(rate) : 0)
    }
    if let stream = stream(audioDecoder?.streamIndex), let parameters = stream.pointee.codecpar {
      info.audio = MediaFileInfo.Audio(
        codecName: String(cString: avcodec_get_name(parameters.pointee.codec_id)),
        sampleRate: Int(parameters.pointee.sample_rate),
        channels: Int(parameters.pointee.ch_layout.nb_channels))
    }
    return info
  }

  private func stream(_ index: Int32?) -> UnsafeMutablePointer<AVStream>? {
    guard let index, index >= 0, index < Int32(format.pointee.nb_streams) else { return nil }
    return format.pointee.streams?[Int(index)]
  }
}
