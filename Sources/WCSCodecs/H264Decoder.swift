import CFFmpeg
import Foundation
import WCSMediaSeam

/// H.264 decoder (libavcodec) producing I420 pictures from whole access units, with
/// corrupt-picture detection and a size check of every SPS before libavcodec sees it.
///
/// Not thread-safe: use one decoder from one thread (or behind the caller's lock).
public final class H264Decoder {
  /// The largest picture an SPS may announce before it reaches libavcodec; the SPS fields allow
  /// 2^16 macroblocks per side, and libavcodec allocates its picture pool for what the SPS says.
  public let pictureLimit: H264PictureLimit
  private let context: UnsafeMutablePointer<AVCodecContext>
  private let packet: UnsafeMutablePointer<AVPacket>
  private let frame: UnsafeMutablePointer<AVFrame>
  /// Whether an IDR reached the decoder: pictures before it reference nothing it has.
  private var hasIDR = false

  /// Creates a decoder (1 thread, low delay: a picture comes out of the access unit that
  /// carries it).
  /// - Parameter pictureLimit: SPSs announcing a larger picture are refused with
  ///   `H264Error.pictureTooLarge` (default 4096×2304 area, as VP8).
  /// - Throws: `H264Error.initialization` when libavcodec has no H.264 decoder or cannot open it.
  public init(pictureLimit: H264PictureLimit = .default) throws(H264Error) {
    self.pictureLimit = pictureLimit
    guard let codec = avcodec_find_decoder(AV_CODEC_ID_H264),
      let context = avcodec_alloc_context3(codec)
    else { throw H264Error(.initialization, message: "libavcodec has no H.264 decoder") }
    context.pointee.thread_count = 1
    context.pointee.flags |= Int32(AV_CODEC_FLAG_LOW_DELAY)
    context.pointee.max_pixels = Int64(pictureLimit.maximumPixels)
    let opened = avcodec_open2(context, codec, nil)
    guard opened >= 0, let packet = av_packet_alloc(), let frame = av_frame_alloc() else {
      var dead: UnsafeMutablePointer<AVCodecContext>? = context
      avcodec_free_context(&dead)
      throw H264Error(.initialization, code: opened, message: "avcodec_open2 failed")
    }
    self.context = context
    self.packet = packet
    self.frame = frame
  }

  deinit {
    var context: UnsafeMutablePointer<AVCodecContext>? = context
    avcodec_free_context(&context)
    var packet: UnsafeMutablePointer<AVPacket>? = packet
    av_packet_free(&packet)
    var frame: UnsafeMutablePointer<AVFrame>? = frame
    av_frame_free(&frame)
  }

  /// Decodes one complete access unit (Annex B byte stream, e.g. from `H264AccessUnitAssembler`
  /// or an encoder).
  /// - Returns: the picture, or nil when the unit holds no picture (parameter sets only).
  /// - Throws: `H264Error` — `.invalidInput` for empty data, `.pictureTooLarge` for an SPS over
  ///   `pictureLimit` or one that cannot be read (not decoded), `.decode` when libavcodec
  ///   rejects the data or a non-IDR picture comes before any IDR, `.corruptFrame` when the
  ///   picture decoded but is flagged corrupt. After any of them, ask the sender for a key frame.
  public func decode(_ accessUnit: [UInt8]) throws(H264Error) -> I420Image? {
    try decodeVideoFrame(accessUnit).flatMap(I420Image.init)
  }

  /// `decode(_:)` as a `VideoFrame` with tightly packed planes and `timestampNs` 0.
  public func decodeVideoFrame(_ accessUnit: [UInt8]) throws(H264Error) -> VideoFrame? {
    guard !accessUnit.isEmpty, accessUnit.count < Int(Int32.max) - 64 else {
      throw H264Error(.invalidInput, message: "empty or oversized access unit")
    }
    var hasPicture = false
    var hasIDRSlice = false
    for unit in H264AnnexB.nalUnits(accessUnit) {
      guard let header = unit.first else { continue }
      switch H264NALUnitType.of(header) {
      case H264NALUnitType.sps:
        try check(sps: unit)
      case H264NALUnitType.idrSlice:
        hasIDRSlice = true
        hasPicture = true
      case H264NALUnitType.nonIDRSlice:
        hasPicture = true
      default: break
      }
    }
    if hasPicture, !hasIDRSlice, !hasIDR {
      throw H264Error(.decode, message: "a non-IDR picture before any IDR")
    }
    hasIDR = hasIDR || hasIDRSlice
    let allocated = av_new_packet(packet, Int32(accessUnit.count))
    guard allocated >= 0, let data = packet.pointee.data else {
      throw H264Error(.decode, code: allocated, message: "av_new_packet failed")
    }
    accessUnit.withUnsafeBufferPointer { bytes in
      guard let base = bytes.baseAddress else { return }
      data.update(from: base, count: bytes.count)
    }
    let sent = avcodec_send_packet(context, packet)
    av_packet_unref(packet)
    guard sent >= 0 else {
      throw H264Error(.decode, code: sent, message: "avcodec_send_packet: \(Self.text(sent))")
    }
    var picture: VideoFrame?
    var corrupt = false
    while true {
      let received = avcodec_receive_frame(context, frame)
      if received == wcs_averror_eagain() || received == wcs_averror_eof() { break }
      guard received >= 0 else {
        throw H264Error(
          .decode, code: received, message: "avcodec_receive_frame: \(Self.text(received))")
      }
      if frame.pointee.flags & Int32(AV_FRAME_FLAG_CORRUPT) != 0
        || frame.pointee.decode_error_flags != 0
      {
        corrupt = true
      } else {
        picture = Self.videoFrame(frame.pointee)
      }
      av_frame_unref(frame)
    }
    if corrupt, picture == nil {
      throw H264Error(.corruptFrame, message: "libavcodec flagged the decoded picture corrupt")
    }
    return picture
  }

  private func check(sps unit: ArraySlice<UInt8>) throws(H264Error) {
    let sps: H264SequenceParameterSet
    do {
      sps = try H264SequenceParameterSet(nalUnit: unit)
    } catch {
      throw H264Error(.pictureTooLarge, message: "unreadable SPS: \(error)")
    }
    let coded = (sps.widthInMacroblocks * 16, sps.heightInMacroblocks * 16)
    guard pictureLimit.allows(coded) else {
      throw H264Error(
        .pictureTooLarge, message: "SPS announces \(coded.0)x\(coded.1), over \(pictureLimit)")
    }
  }

  private static func text(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 128)
    _ = wcs_av_strerror(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// The picture as a `VideoFrame` (planes copied by `PlaneCopy.packed`); nil for a pixel
  /// format other than 4:2:0 8-bit.
  private static func videoFrame(_ picture: AVFrame) -> VideoFrame? {
    let format = picture.format
    guard format == AV_PIX_FMT_YUV420P.rawValue || format == AV_PIX_FMT_YUVJ420P.rawValue else {
      return nil
    }
    let width = Int(picture.width)
    let height = Int(picture.height)
    guard width > 0, height > 0 else { return nil }
    let chromaWidth = (width + 1) / 2
    let chromaHeight = (height + 1) / 2
    func plane(_ pointer: UnsafeMutablePointer<UInt8>?, _ stride: Int32, _ w: Int, _ h: Int)
      -> Data
    {
      PlaneCopy.packed(pointer, stride: Int(stride), width: w, rows: h)
    }
    return VideoFrame(
      width: width, height: height,
      dataY: plane(picture.data.0, picture.linesize.0, width, height),
      dataU: plane(picture.data.1, picture.linesize.1, chromaWidth, chromaHeight),
      dataV: plane(picture.data.2, picture.linesize.2, chromaWidth, chromaHeight),
      strideY: width, strideU: chromaWidth, strideV: chromaWidth, timestampNs: 0)
  }
}
