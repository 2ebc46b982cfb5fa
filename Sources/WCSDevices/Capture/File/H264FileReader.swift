import CFFmpeg
import WCSCodecs
import WCSRecording

/// One coded picture of a file's H.264 stream, as `H264FileReader` yields it.
public struct H264FileAccessUnit: Sendable, Equatable {
  /// The NAL units in the byte stream format (ITU-T H.264 Annex B), as `H264Packetizer` takes
  /// them; an IDR carries its SPS and PPS.
  public var data: [UInt8]
  /// Presentation time in seconds from the start of the file, continuing across loops.
  public var ptsSeconds: Double
  /// The container marks it as a random access point (an IDR picture).
  public var isKeyFrame: Bool
}

/// Why a file's H.264 cannot be read without decoding.
public enum H264FileReaderError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The file could not be opened or read (`MediaFileReaderError`).
  case file(MediaFileReaderError)
  /// The best video stream is another codec (FFmpeg's name).
  case notH264(codecName: String)
  /// The first access unit carries no SPS that parses (nor does the container's `avcC`).
  case noSequenceParameterSet(String)
  /// The SPS declares a picture over `H264FileReader.maxPictureSide`.
  case pictureTooLarge(width: Int, height: Int)

  /// A one-line explanation.
  public var description: String {
    switch self {
    case .file(let error): return "\(error)"
    case .notH264(let codecName): return "video is \(codecName), not H.264"
    case .noSequenceParameterSet(let reason): return "no usable SPS: \(reason)"
    case .pictureTooLarge(let width, let height): return "picture \(width)x\(height) too large"
    }
  }
}

/// Reads a file's H.264 video stream without decoding it: each demuxed packet becomes an
/// Annex B access unit (libavcodec's `h264_mp4toannexb` filter turns the MP4/Matroska layout
/// of ISO/IEC 14496-15 §5.2.4, length-prefixed NAL units with the parameter sets in `avcC`,
/// into start codes and puts the SPS and PPS before each IDR that lacks them).
///
/// Opening reads the first access unit and its SPS (`sequenceParameterSet`): what a sender
/// checks against the negotiated `profile-level-id` before it passes the stream through.
/// Packets come in decoding order; `hasReordering` says whether that differs from
/// presentation order (B-frames). With `loops`, the end of the file starts it over, with
/// presentation times continuing (offset by the file's duration, or the end of its last
/// picture if later).
///
/// Bad input is bounded: a packet over `maxAccessUnitSize`, or one the filter rejects, is
/// dropped and counted in `accessUnitsDropped`, and the pictures after it are skipped until
/// the next key frame (they refer to the dropped one).
///
/// Not thread-safe: use one reader from one thread.
public final class H264FileReader {
  /// Largest access unit passed on, bytes: a 4K intra picture fits, a corrupt size does not.
  public static let maxAccessUnitSize = 4 << 20
  /// Largest picture side accepted from the SPS, pixels.
  public static let maxPictureSide = 4096

  /// The file.
  public let path: String
  /// Whether the end of the file starts it over.
  public let loops: Bool
  /// The SPS of the first access unit.
  public let sequenceParameterSet: H264SequenceParameterSet
  /// Average frames per second from the container (0 when unknown).
  public let framesPerSecond: Double
  /// The stream's bitrate from the container, bits per second (0 when unknown).
  public let bitRate: Int
  /// Whether pictures are sent in another order than shown (`video_delay` > 0: B-frames).
  public let hasReordering: Bool
  /// Packets dropped (over the size bound, or refused by the filter) and the pictures skipped
  /// after them up to the next key frame.
  public private(set) var accessUnitsDropped = 0
  /// Times the file was started over.
  public private(set) var loopsCompleted = 0

  private var demuxer: H264FileDemuxer
  private var lookahead: H264FileAccessUnit?
  private var loopOffset = 0.0
  private var loopEnd = 0.0
  private var lastPTS: Double?
  private var frameStep: Double
  private var unitsThisPass = 0
  private var awaitingKeyFrame = false

  /// Opens `path` and reads its first access unit.
  /// - Throws: `H264FileReaderError.file` when FFmpeg cannot open or read the file or it has
  ///   no video, `.notH264`, `.noSequenceParameterSet`, `.pictureTooLarge`.
  public init(path: String, loops: Bool) throws(H264FileReaderError) {
    self.path = path
    self.loops = loops
    demuxer = try H264FileDemuxer(path: path)
    framesPerSecond = demuxer.framesPerSecond
    bitRate = demuxer.bitRate
    hasReordering = demuxer.hasReordering
    frameStep = framesPerSecond > 0 ? 1 / framesPerSecond : 1.0 / 30
    var dropped = 0
    var opening: H264FileAccessUnit?
    while opening == nil {
      switch try demuxer.nextPacket() {
      case .unit(let unit): opening = unit
      case .dropped: dropped += 1
      case .end: throw .noSequenceParameterSet("the file has no picture")
      }
    }
    guard let first = opening else { throw .noSequenceParameterSet("the file has no picture") }
    accessUnitsDropped = dropped
    guard
      let unit = H264AnnexB.nalUnits(first.data).first(where: {
        $0.first.map { H264NALUnitType.of($0) == H264NALUnitType.sps } ?? false
      })
    else { throw .noSequenceParameterSet("none before the first picture") }
    do {
      sequenceParameterSet = try H264SequenceParameterSet(nalUnit: unit)
    } catch {
      throw .noSequenceParameterSet("\(error)")
    }
    let sps = sequenceParameterSet
    guard sps.width <= Self.maxPictureSide, sps.height <= Self.maxPictureSide else {
      throw .pictureTooLarge(width: sps.width, height: sps.height)
    }
    lookahead = paced(first)
  }

  /// The next access unit in decoding order, or nil at the end of a file that does not loop
  /// (or one that gave nothing in a whole pass).
  /// - Throws: `H264FileReaderError.file` when the file can no longer be read or reopened.
  public func nextAccessUnit() throws(H264FileReaderError) -> H264FileAccessUnit? {
    if let lookahead {
      self.lookahead = nil
      return lookahead
    }
    while true {
      switch try demuxer.nextPacket() {
      case .unit(let unit) where awaitingKeyFrame && !unit.isKeyFrame:
        accessUnitsDropped += 1
        continue
      case .unit(let unit):
        awaitingKeyFrame = false
        return paced(unit)
      case .dropped:
        accessUnitsDropped += 1
        awaitingKeyFrame = true
        continue
      case .end: break
      }
      guard loops, unitsThisPass > 0 else { return nil }
      demuxer = try H264FileDemuxer(path: path)
      loopOffset = max(loopOffset + demuxer.durationSeconds, loopEnd)
      loopsCompleted += 1
      unitsThisPass = 0
      lastPTS = nil
    }
  }

  /// Moves `unit` onto the looped timeline and notes where this pass ends.
  private func paced(_ unit: H264FileAccessUnit) -> H264FileAccessUnit {
    var unit = unit
    let pts = unit.ptsSeconds.isFinite ? unit.ptsSeconds : (lastPTS.map { $0 + frameStep } ?? 0)
    if let last = lastPTS, pts > last, !hasReordering { frameStep = pts - last }
    lastPTS = pts
    unitsThisPass += 1
    loopEnd = max(loopEnd, loopOffset + pts + frameStep)
    unit.ptsSeconds = loopOffset + pts
    return unit
  }
}

/// The container, its H.264 stream and the Annex B filter of one pass over a file.
private final class H264FileDemuxer {
  enum Packet {
    case unit(H264FileAccessUnit)
    case dropped
    case end
  }

  let format: UnsafeMutablePointer<AVFormatContext>
  let streamIndex: Int32
  let timeBase: AVRational
  let framesPerSecond: Double
  let bitRate: Int
  let hasReordering: Bool
  let durationSeconds: Double
  private let startSeconds: Double
  private var filter: UnsafeMutablePointer<AVBSFContext>?
  private let packet: UnsafeMutablePointer<AVPacket>

  init(path: String) throws(H264FileReaderError) {
    var opened: UnsafeMutablePointer<AVFormatContext>?
    let code = avformat_open_input(&opened, path, nil, nil)
    guard code >= 0, let format = opened else {
      throw .file(
        .openFailed(path: path, FFmpegError(operation: "avformat_open_input", code: code)))
    }
    var owned: UnsafeMutablePointer<AVFormatContext>? = format
    do throws(H264FileReaderError) {
      let info = avformat_find_stream_info(format, nil)
      guard info >= 0 else {
        throw .file(
          .streamInfoUnavailable(FFmpegError(operation: "avformat_find_stream_info", code: info)))
      }
      let index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
      guard index >= 0, index < Int32(format.pointee.nb_streams),
        let stream = format.pointee.streams?[Int(index)],
        let parameters = stream.pointee.codecpar
      else { throw .file(.noMediaStreams) }
      guard parameters.pointee.codec_id == AV_CODEC_ID_H264 else {
        throw .notH264(codecName: String(cString: avcodec_get_name(parameters.pointee.codec_id)))
      }
      streamIndex = index
      timeBase = stream.pointee.time_base
      var rate = stream.pointee.avg_frame_rate
      if rate.num <= 0 || rate.den <= 0 { rate = stream.pointee.r_frame_rate }
      framesPerSecond = rate.num > 0 && rate.den > 0 ? wcs_av_q2d(rate) : 0
      bitRate = Int(max(0, parameters.pointee.bit_rate))
      hasReordering = parameters.pointee.video_delay > 0
      let duration = format.pointee.duration
      durationSeconds =
        duration == wcs_av_nopts_value() || duration <= 0
        ? 0 : Double(duration) / Double(wcs_av_time_base())
      let start = format.pointee.start_time
      startSeconds =
        start == wcs_av_nopts_value() || start <= 0 ? 0 : Double(start) / Double(wcs_av_time_base())
      filter = try Self.annexBFilter(parameters, timeBase: stream.pointee.time_base)
      guard let packet = av_packet_alloc() else {
        av_bsf_free(&filter)
        throw .file(.ffmpeg(FFmpegError(operation: "av_packet_alloc", code: wcs_averror_enomem())))
      }
      self.packet = packet
    } catch {
      avformat_close_input(&owned)
      throw error
    }
    self.format = format
  }

  deinit {
    var ownedPacket: UnsafeMutablePointer<AVPacket>? = packet
    av_packet_free(&ownedPacket)
    av_bsf_free(&filter)
    var ownedFormat: UnsafeMutablePointer<AVFormatContext>? = format
    avformat_close_input(&ownedFormat)
  }

  private static func annexBFilter(
    _ parameters: UnsafeMutablePointer<AVCodecParameters>, timeBase: AVRational
  ) throws(H264FileReaderError) -> UnsafeMutablePointer<AVBSFContext> {
    var context: UnsafeMutablePointer<AVBSFContext>?
    guard let definition = av_bsf_get_by_name("h264_mp4toannexb") else {
      throw .file(.decoderUnavailable(codecName: "h264_mp4toannexb"))
    }
    var code = av_bsf_alloc(definition, &context)
    guard code >= 0, let filter = context else {
      throw .file(.ffmpeg(FFmpegError(operation: "av_bsf_alloc", code: code)))
    }
    code = avcodec_parameters_copy(filter.pointee.par_in, parameters)
    if code >= 0 {
      filter.pointee.time_base_in = timeBase
      code = av_bsf_init(filter)
    }
    guard code >= 0 else {
      av_bsf_free(&context)
      throw .file(.ffmpeg(FFmpegError(operation: "av_bsf_init", code: code)))
    }
    return filter
  }

  /// The next packet of the video stream through the filter.
  func nextPacket() throws(H264FileReaderError) -> Packet {
    while true {
      let code = av_read_frame(format, packet)
      if code == wcs_averror_eof() { return .end }
      guard code >= 0 else {
        throw .file(.ffmpeg(FFmpegError(operation: "av_read_frame", code: code)))
      }
      guard packet.pointee.stream_index == streamIndex else {
        av_packet_unref(packet)
        continue
      }
      guard Int(packet.pointee.size) <= H264FileReader.maxAccessUnitSize else {
        av_packet_unref(packet)
        return .dropped
      }
      let time =
        packet.pointee.pts != wcs_av_nopts_value() ? packet.pointee.pts : packet.pointee.dts
      let isKeyFrame = packet.pointee.flags & AV_PKT_FLAG_KEY != 0
      // The filter takes the packet's reference (and blanks it) whatever it answers.
      guard av_bsf_send_packet(filter, packet) >= 0 else {
        av_packet_unref(packet)
        return .dropped
      }
      var data: [UInt8] = []
      while av_bsf_receive_packet(filter, packet) >= 0 {
        if let bytes = packet.pointee.data, packet.pointee.size > 0 {
          data += UnsafeBufferPointer(start: bytes, count: Int(packet.pointee.size))
        }
        av_packet_unref(packet)
      }
      guard !data.isEmpty, data.count <= H264FileReader.maxAccessUnitSize else { return .dropped }
      let seconds =
        time == wcs_av_nopts_value() || timeBase.den == 0
        ? Double.nan : Double(time) * wcs_av_q2d(timeBase) - startSeconds
      return .unit(H264FileAccessUnit(data: data, ptsSeconds: seconds, isKeyFrame: isKeyFrame))
    }
  }
}
