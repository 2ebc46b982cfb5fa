import CVPX
import Foundation
import WCSMediaSeam

/// VP8 decoder (libvpx) producing I420 pictures, with corrupt-frame detection.
///
/// Not thread-safe: use one decoder from one thread (or behind the caller's lock).
public final class VP8Decoder {
  private let context: UnsafeMutablePointer<vpx_codec_ctx_t>

  /// The largest picture a key frame may announce before it reaches libvpx; a 14-bit size
  /// field allows 16383×16383, which libvpx would allocate (about 400 MB per reference
  /// frame, several frames) for one forged packet.
  public var pictureLimit: VP8PictureLimit

  /// Creates a decoder (1 thread).
  /// - Parameter pictureLimit: key frames announcing a larger picture are refused with
  ///   `VP8Error.pictureTooLarge` (default `VP8PictureLimit.default`, 4096×2304 area).
  /// - Throws: `VP8Error.initialization` when `vpx_codec_dec_init` fails.
  public init(pictureLimit: VP8PictureLimit = .default) throws(VP8Error) {
    self.pictureLimit = pictureLimit
    context = .allocate(capacity: 1)
    context.initialize(to: vpx_codec_ctx_t())
    var cfg = vpx_codec_dec_cfg_t(threads: 1, w: 0, h: 0)
    let result = wcs_vpx_codec_dec_init(context, vpx_codec_vp8_dx(), &cfg, 0)
    guard result == VPX_CODEC_OK else {
      let error = VP8Error(.initialization, code: result, context: context)
      context.deallocate()
      throw error
    }
  }

  deinit {
    vpx_codec_destroy(context)
    context.deallocate()
  }

  /// Decodes one complete VP8 frame (RFC 6386).
  /// - Parameter frame: the frame bytes, e.g. from `VP8FrameAssembler` or an IVF file.
  /// - Returns: the picture, or nil when the frame is not shown (`show_frame = 0`).
  /// - Throws: `VP8Error` — `.invalidInput` for empty data, `.pictureTooLarge` for a key frame
  ///   announcing a picture over `pictureLimit` (not decoded), `.decode` when libvpx rejects the
  ///   data (truncated, not VP8, a delta frame before any key frame), `.corruptFrame` when libvpx
  ///   decoded it but flags the result corrupt. After any of them, ask the sender for a key frame.
  public func decode(_ frame: [UInt8]) throws(VP8Error) -> I420Image? {
    try frame.withUnsafeBufferPointer { bytes throws(VP8Error) in
      try decode(bytes, picture: Self.copy)
    }
  }

  /// `decode(_:)` from bytes in place (a frame joined in a buffer kept for the next one, or a
  /// packet's own bytes): the same picture and errors.
  package func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(VP8Error) -> I420Image? {
    try decode(bytes, picture: Self.copy)
  }

  /// Decodes one complete VP8 frame (RFC 6386) into a `VideoFrame` with tightly packed planes
  /// (copied once out of libvpx) and `timestampNs` 0; see `decode(_:)` for the result and
  /// errors.
  func decodeVideoFrame(_ frame: [UInt8]) throws(VP8Error) -> VideoFrame? {
    try frame.withUnsafeBufferPointer { bytes throws(VP8Error) in
      try decode(bytes, picture: Self.videoFrame)
    }
  }

  /// `decodeVideoFrame(_:)` from bytes in place: the same picture and errors.
  package func decodeVideoFrame(_ bytes: UnsafeBufferPointer<UInt8>) throws(VP8Error) -> VideoFrame?
  {
    try decode(bytes, picture: Self.videoFrame)
  }

  /// `decodeVideoFrame(_:)` writing the picture into the planes of `spare` (a picture decoded
  /// before and handed back once rendered) when it has the new picture's size: no allocation,
  /// and no `Data` storage made and freed per picture. `spare` is taken when a picture comes
  /// out (nil after), else left. A plane still shared (a renderer kept the frame) is copied
  /// before it is written (`Data` is copy-on-write), so no kept frame ever changes. The same
  /// picture and errors as `decodeVideoFrame(_:)`.
  package func decodeVideoFrame(
    _ bytes: UnsafeBufferPointer<UInt8>, reusing spare: inout VideoFrame?
  ) throws(VP8Error) -> VideoFrame? {
    try decode(bytes) { image in Self.videoFrame(image, reusing: &spare) }
  }

  /// `decode(_:)` with the copy out of libvpx's picture left to `picture` (nil: a format it
  /// does not take).
  private func decode<Picture>(
    _ frame: UnsafeBufferPointer<UInt8>, picture makePicture: (vpx_image_t) -> Picture?
  ) throws(VP8Error) -> Picture? {
    guard !frame.isEmpty else { throw VP8Error(.invalidInput, message: "empty frame") }
    guard frame.count <= Int(UInt32.max) else {
      throw VP8Error(.invalidInput, message: "frame too large")
    }
    if let size = VP8KeyFrameHeader.pictureSize(frame), !pictureLimit.allows(size) {
      throw VP8Error(
        .pictureTooLarge,
        message: "key frame announces \(size.width)x\(size.height), over \(pictureLimit)")
    }
    let result = vpx_codec_decode(context, frame.baseAddress, UInt32(frame.count), nil, 0)
    guard result == VPX_CODEC_OK else { throw VP8Error(.decode, code: result, context: context) }
    var corrupted: Int32 = 0
    let query = wcs_vpx_decoder_frame_corrupted(context, &corrupted)
    if query == VPX_CODEC_OK, corrupted != 0 {
      // Drain the picture so the next call starts clean.
      var drain: vpx_codec_iter_t? = nil
      while vpx_codec_get_frame(context, &drain) != nil {}
      throw VP8Error(.corruptFrame, message: "libvpx flagged the decoded frame corrupt")
    }
    var iterator: vpx_codec_iter_t? = nil
    var picture: Picture?
    while let image = vpx_codec_get_frame(context, &iterator) {
      picture = makePicture(image.pointee)
    }
    return picture
  }

  /// The picture as a `VideoFrame`, each plane copied by `PlaneCopy.packed`.
  private static func videoFrame(_ image: vpx_image_t) -> VideoFrame? {
    guard image.fmt == VPX_IMG_FMT_I420 || image.fmt == VPX_IMG_FMT_YV12 else { return nil }
    let width = Int(image.d_w)
    let height = Int(image.d_h)
    guard width > 0, height > 0 else { return nil }
    let chromaWidth = (width + 1) / 2
    let chromaHeight = (height + 1) / 2
    func plane(_ pointer: UnsafeMutablePointer<UInt8>?, _ stride: Int32, _ w: Int, _ h: Int)
      -> Data
    {
      PlaneCopy.packed(pointer, stride: Int(stride), width: w, rows: h)
    }
    let first = plane(image.planes.1, image.stride.1, chromaWidth, chromaHeight)
    let second = plane(image.planes.2, image.stride.2, chromaWidth, chromaHeight)
    let yv12 = image.fmt == VPX_IMG_FMT_YV12
    return VideoFrame(
      width: width, height: height, dataY: plane(image.planes.0, image.stride.0, width, height),
      dataU: yv12 ? second : first, dataV: yv12 ? first : second, strideY: width,
      strideU: chromaWidth, strideV: chromaWidth, timestampNs: 0)
  }

  /// `videoFrame(_:)` into `spare`'s planes when it is a tightly packed picture of the same
  /// size whose planes start at index 0 (see `decodeVideoFrame(_:reusing:)`); `spare` is taken
  /// either way.
  private static func videoFrame(_ image: vpx_image_t, reusing spare: inout VideoFrame?)
    -> VideoFrame?
  {
    guard image.fmt == VPX_IMG_FMT_I420 || image.fmt == VPX_IMG_FMT_YV12 else { return nil }
    let width = Int(image.d_w)
    let height = Int(image.d_h)
    guard var frame = spare.take(), width > 0, height > 0, frame.width == width,
      frame.height == height, frame.strideY == width, frame.strideU == frame.chromaWidth,
      frame.strideV == frame.chromaWidth, frame.dataY.count == width * height,
      frame.dataU.count == frame.chromaWidth * frame.chromaHeight,
      frame.dataV.count == frame.chromaWidth * frame.chromaHeight,
      // A plane that is a slice of a larger buffer would keep its offset: a picture's planes
      // start at index 0, as renderers read them.
      frame.dataY.startIndex == 0, frame.dataU.startIndex == 0, frame.dataV.startIndex == 0
    else { return videoFrame(image) }
    let chromaWidth = frame.chromaWidth
    let chromaHeight = frame.chromaHeight
    // `data` holds exactly `w × h` bytes (checked above): each row lands inside it.
    func fill(
      _ data: inout Data, _ pointer: UnsafeMutablePointer<UInt8>?, _ stride: Int32, _ w: Int,
      _ h: Int
    ) {
      data.withUnsafeMutableBytes { bytes in
        guard let base = bytes.baseAddress, bytes.count == w * h else { return }
        guard let pointer else {
          bytes.initializeMemory(as: UInt8.self, repeating: 128)
          return
        }
        for row in 0..<h {
          (base + row * w).copyMemory(from: pointer + row * Int(stride), byteCount: w)
        }
      }
    }
    let yv12 = image.fmt == VPX_IMG_FMT_YV12
    fill(&frame.dataY, image.planes.0, image.stride.0, width, height)
    if yv12 {
      fill(&frame.dataV, image.planes.1, image.stride.1, chromaWidth, chromaHeight)
      fill(&frame.dataU, image.planes.2, image.stride.2, chromaWidth, chromaHeight)
    } else {
      fill(&frame.dataU, image.planes.1, image.stride.1, chromaWidth, chromaHeight)
      fill(&frame.dataV, image.planes.2, image.stride.2, chromaWidth, chromaHeight)
    }
    frame.timestampNs = 0
    return frame
  }

  private static func copy(_ image: vpx_image_t) -> I420Image? {
    guard image.fmt == VPX_IMG_FMT_I420 || image.fmt == VPX_IMG_FMT_YV12 else { return nil }
    let width = Int(image.d_w)
    let height = Int(image.d_h)
    guard width > 0, height > 0 else { return nil }
    var out = I420Image(width: width, height: height)
    let chromaWidth = out.chromaWidth
    let chromaHeight = out.chromaHeight
    let yv12 = image.fmt == VPX_IMG_FMT_YV12
    func plane(_ pointer: UnsafeMutablePointer<UInt8>?, _ stride: Int32, _ w: Int, _ h: Int)
      -> [UInt8]
    {
      guard let pointer else { return [UInt8](repeating: 128, count: w * h) }
      var bytes = [UInt8](repeating: 0, count: w * h)
      bytes.withUnsafeMutableBufferPointer { out in
        guard let base = out.baseAddress else { return }
        for row in 0..<h {
          (base + row * w).update(from: pointer + row * Int(stride), count: w)
        }
      }
      return bytes
    }
    out.y = plane(image.planes.0, image.stride.0, width, height)
    let first = plane(image.planes.1, image.stride.1, chromaWidth, chromaHeight)
    let second = plane(image.planes.2, image.stride.2, chromaWidth, chromaHeight)
    out.u = yv12 ? second : first
    out.v = yv12 ? first : second
    return out
  }
}

/// The largest VP8 picture a decoder accepts: each side at most `maximumDimension` and the area
/// at most `maximumPixels`.
public struct VP8PictureLimit: Sendable, Hashable, CustomStringConvertible {
  /// Largest width or height, pixels.
  public var maximumDimension: Int
  /// Largest width × height.
  public var maximumPixels: Int

  /// A limit; both values are pixels.
  public init(maximumDimension: Int, maximumPixels: Int) {
    self.maximumDimension = maximumDimension
    self.maximumPixels = maximumPixels
  }

  /// 4096 per side and the area of 4096×2304 (about 9.4 Mpixel): above 4K UHD in either
  /// orientation, and far below what a forged 16383×16383 header asks for.
  public static let `default` = VP8PictureLimit(maximumDimension: 4096, maximumPixels: 4096 * 2304)

  /// Whether a picture of this size is allowed.
  public func allows(_ size: (width: Int, height: Int)) -> Bool {
    size.width <= maximumDimension && size.height <= maximumDimension
      && size.width * size.height <= maximumPixels
  }

  /// `"<dimension> per side, <pixels> pixels"`.
  public var description: String { "\(maximumDimension) per side, \(maximumPixels) pixels" }
}

/// The uncompressed header of a VP8 key frame (RFC 6386 §9.1).
enum VP8KeyFrameHeader {
  /// The picture size a key frame announces: the 3-byte frame tag (bit 0 of the first byte is
  /// 0 for a key frame), the start code 9D 01 2A, then 16-bit little-endian width and height
  /// whose low 14 bits are the size (the top 2 are the scaling mode). `nil` for a delta frame
  /// or a key frame too short or without the start code (libvpx rejects those itself).
  static func pictureSize(_ frame: UnsafeBufferPointer<UInt8>) -> (width: Int, height: Int)? {
    guard frame.count >= 10, frame[0] & 0x01 == 0,
      frame[3] == 0x9D, frame[4] == 0x01, frame[5] == 0x2A
    else { return nil }
    let width = (Int(frame[6]) | Int(frame[7]) << 8) & 0x3FFF
    let height = (Int(frame[8]) | Int(frame[9]) << 8) & 0x3FFF
    return (width, height)
  }
}
