import WCSCodecs

/// Turns the bytes of one V4L2 buffer into an I420 picture of the negotiated size: YUYV with libyuv
/// (`I420Image.fromYUY2`), YU12 by splitting the planes, MJPEG with libturbojpeg (`MJPEGDecoder`),
/// scaled with libyuv when the JPEG's size differs from the negotiated one.
///
/// Not thread-safe (holds a JPEG decompressor): one converter per capture thread.
public final class V4L2FrameConverter {
  /// The format the buffers are in.
  public let format: V4L2NegotiatedFormat
  private var decoder: MJPEGDecoder?

  /// A converter for buffers in `format`.
  public init(format: V4L2NegotiatedFormat) {
    self.format = format
  }

  /// One buffer as I420.
  /// - Throws: `V4L2Error.badFrame` for a buffer shorter than the format needs, a corrupt JPEG, or
  ///   a format other than YUYV, YU12 and MJPEG.
  public func image(from bytes: [UInt8]) throws(V4L2Error) -> I420Image {
    let w = format.width
    let h = format.height
    switch format.pixelFormat {
    case .yuyv:
      let stride = format.bytesPerLine >= 2 * w ? format.bytesPerLine : 0
      guard let image = I420Image.fromYUY2(bytes, width: w, height: h, stride: stride) else {
        throw .badFrame(reason: "YUYV buffer of \(bytes.count) bytes for \(w)x\(h)")
      }
      return image
    case .yuv420:
      let cw = (w + 1) / 2
      let ch = (h + 1) / 2
      guard bytes.count >= w * h + 2 * cw * ch,
        let image = I420Image(
          width: w, height: h, y: Array(bytes[0..<w * h]), strideY: w,
          u: Array(bytes[w * h..<w * h + cw * ch]), strideU: cw,
          v: Array(bytes[w * h + cw * ch..<w * h + 2 * cw * ch]), strideV: cw)
      else { throw .badFrame(reason: "YU12 buffer of \(bytes.count) bytes for \(w)x\(h)") }
      return image
    case .mjpeg:
      let jpegDecoder: MJPEGDecoder
      if let existing = decoder {
        jpegDecoder = existing
      } else {
        jpegDecoder = try MJPEGDecoder()
        decoder = jpegDecoder
      }
      let image = try jpegDecoder.decode(bytes)
      if image.width == w && image.height == h { return image }
      guard let scaled = image.scaled(toWidth: w, height: h) else {
        throw .badFrame(reason: "cannot scale \(image.width)x\(image.height) to \(w)x\(h)")
      }
      return scaled
    default:
      throw .badFrame(reason: "pixel format \(format.pixelFormat) is not converted")
    }
  }
}
