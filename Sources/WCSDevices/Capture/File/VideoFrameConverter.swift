import CFFmpeg
import CFFmpegConvert
import WCSRecording

/// Converts decoded pictures of any pixel format and size to I420 at the output size with
/// libswscale (bilinear), into tightly packed planes.
final class VideoFrameConverter {
  /// Output size in pixels; nil keeps each frame's own size.
  let outputSize: (width: Int, height: Int)?
  private var scaler: OpaquePointer?
  private var output: UnsafeMutablePointer<AVFrame>?

  init(outputSize: (width: Int, height: Int)?) {
    self.outputSize = outputSize
  }

  deinit {
    sws_freeContext(scaler)
    av_frame_free(&output)
  }

  /// The I420 picture of `frame` at the output size, stamped `ptsSeconds`. Throws `.ffmpeg`.
  func convert(_ frame: UnsafeMutablePointer<AVFrame>, ptsSeconds: Double)
    throws(MediaFileReaderError) -> DecodedVideoFrame
  {
    let sourceWidth = frame.pointee.width
    let sourceHeight = frame.pointee.height
    guard sourceWidth > 0, sourceHeight > 0 else {
      throw .ffmpeg(FFmpegError(operation: "decoded frame size", code: wcs_averror_invaliddata()))
    }
    let width = Int32(outputSize?.width ?? Int(sourceWidth))
    let height = Int32(outputSize?.height ?? Int(sourceHeight))
    scaler = sws_getCachedContext(
      scaler, sourceWidth, sourceHeight, AVPixelFormat(rawValue: frame.pointee.format), width,
      height, AV_PIX_FMT_YUV420P, SWS_BILINEAR, nil, nil, nil)
    guard let scaler else {
      throw .ffmpeg(FFmpegError(operation: "sws_getCachedContext", code: wcs_averror_einval()))
    }
    let target = try outputFrame(width: width, height: height)
    do {
      try FFmpegError.check(sws_scale_frame(scaler, target, frame), "sws_scale_frame")
    } catch {
      throw .ffmpeg(error)
    }
    let chromaWidth = (Int(width) + 1) / 2
    let chromaHeight = (Int(height) + 1) / 2
    let data = target.pointee.data
    let lineSizes = target.pointee.linesize
    return DecodedVideoFrame(
      width: Int(width), height: Int(height),
      y: Self.copyPlane(data.0, lineSize: lineSizes.0, width: Int(width), rows: Int(height)),
      u: Self.copyPlane(data.1, lineSize: lineSizes.1, width: chromaWidth, rows: chromaHeight),
      v: Self.copyPlane(data.2, lineSize: lineSizes.2, width: chromaWidth, rows: chromaHeight),
      yStride: Int(width), uStride: chromaWidth, vStride: chromaWidth, ptsSeconds: ptsSeconds)
  }

  private func outputFrame(width: Int32, height: Int32) throws(MediaFileReaderError)
    -> UnsafeMutablePointer<AVFrame>
  {
    if let output, output.pointee.width == width, output.pointee.height == height {
      return output
    }
    av_frame_free(&output)
    guard let frame = av_frame_alloc() else {
      throw .ffmpeg(FFmpegError(operation: "av_frame_alloc", code: wcs_averror_enomem()))
    }
    output = frame
    frame.pointee.width = width
    frame.pointee.height = height
    frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
    do {
      try FFmpegError.check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer")
    } catch {
      throw .ffmpeg(error)
    }
    return frame
  }

  private static func copyPlane(
    _ base: UnsafeMutablePointer<UInt8>?, lineSize: Int32, width: Int, rows: Int
  ) -> [UInt8] {
    guard let base, Int(lineSize) >= width else {
      return [UInt8](repeating: 0, count: width * rows)
    }
    var plane = [UInt8](repeating: 0, count: width * rows)
    plane.withUnsafeMutableBufferPointer { destination in
      guard let to = destination.baseAddress else { return }
      for row in 0..<rows {
        (to + row * width).update(from: base + row * Int(lineSize), count: width)
      }
    }
    return plane
  }
}
