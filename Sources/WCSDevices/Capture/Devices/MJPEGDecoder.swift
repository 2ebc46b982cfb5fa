import CMediaDevices
import CYUV
import WCSCodecs

/// Decodes Motion-JPEG webcam frames (one baseline JPEG per buffer) to I420 with libturbojpeg:
/// straight to YUV planes (`tjDecompressToYUVPlanes`), then 4:2:2 and 4:4:4 chroma is reduced to
/// 4:2:0 with libyuv (`I422ToI420`, `I444ToI420`); other subsamplings go through BGRX.
///
/// Not thread-safe: one decoder per capture thread.
public final class MJPEGDecoder {
  private let handle: tjhandle

  /// A decoder.
  /// - Throws: `V4L2Error.badFrame` if libturbojpeg cannot make a decompressor.
  public init() throws(V4L2Error) {
    guard let handle = tjInitDecompress() else {
      throw .badFrame(reason: "tjInitDecompress failed")
    }
    self.handle = handle
  }

  deinit { tjDestroy(handle) }

  /// One JPEG picture as I420.
  /// - Throws: `V4L2Error.badFrame` with libturbojpeg's message for a truncated or corrupt JPEG.
  public func decode(_ jpeg: [UInt8]) throws(V4L2Error) -> I420Image {
    guard !jpeg.isEmpty else { throw .badFrame(reason: "empty JPEG buffer") }
    var width: Int32 = 0
    var height: Int32 = 0
    var subsampling: Int32 = 0
    var colorspace: Int32 = 0
    let header = jpeg.withUnsafeBufferPointer {
      tjDecompressHeader3(
        handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colorspace)
    }
    guard header == 0, width > 0, height > 0, width <= 16384, height <= 16384 else {
      throw .badFrame(reason: "JPEG header: \(errorText())")
    }
    let w = Int(width)
    let h = Int(height)
    switch subsampling {
    case sampling(TJSAMP_420):
      var image = I420Image(width: w, height: h)
      try decodePlanes(
        jpeg, into: &image.y, &image.u, &image.v, width: w, height: h,
        strides: [image.strideY, image.strideU, image.strideV])
      return image
    case sampling(TJSAMP_422), sampling(TJSAMP_444):
      let chromaWidth = subsampling == sampling(TJSAMP_422) ? (w + 1) / 2 : w
      var y = [UInt8](repeating: 0, count: w * h)
      var u = [UInt8](repeating: 0, count: chromaWidth * h)
      var v = [UInt8](repeating: 0, count: chromaWidth * h)
      try decodePlanes(
        jpeg, into: &y, &u, &v, width: w, height: h,
        strides: [w, chromaWidth, chromaWidth])
      return try reduceChroma(y: y, u: u, v: v, chromaWidth: chromaWidth, width: w, height: h)
    case sampling(TJSAMP_GRAY):
      var image = I420Image(width: w, height: h)
      var unusedU: [UInt8] = []
      var unusedV: [UInt8] = []
      try decodePlanes(
        jpeg, into: &image.y, &unusedU, &unusedV, width: w, height: h,
        strides: [image.strideY, 0, 0])
      return image
    default:
      return try decodeViaBGRX(jpeg, width: w, height: h)
    }
  }

  private func sampling(_ value: TJSAMP) -> Int32 { Int32(truncatingIfNeeded: value.rawValue) }

  private func errorText() -> String {
    guard let text = tjGetErrorStr2(handle) else { return "unknown error" }
    return String(cString: text)
  }

  private func decodePlanes(
    _ jpeg: [UInt8], into y: inout [UInt8], _ u: inout [UInt8], _ v: inout [UInt8], width: Int,
    height: Int, strides: [Int]
  ) throws(V4L2Error) {
    var strides32 = strides.map { Int32($0) }
    let result = jpeg.withUnsafeBufferPointer { source in
      y.withUnsafeMutableBufferPointer { py in
        u.withUnsafeMutableBufferPointer { pu in
          v.withUnsafeMutableBufferPointer { pv in
            var planes: [UnsafeMutablePointer<UInt8>?] = [
              py.baseAddress, pu.baseAddress, pv.baseAddress,
            ]
            return tjDecompressToYUVPlanes(
              handle, source.baseAddress, UInt(source.count), &planes, Int32(width), &strides32,
              Int32(height), 0)
          }
        }
      }
    }
    guard result == 0 else { throw .badFrame(reason: "JPEG decode: \(errorText())") }
  }

  private func reduceChroma(
    y: [UInt8], u: [UInt8], v: [UInt8], chromaWidth: Int, width: Int, height: Int
  ) throws(V4L2Error) -> I420Image {
    var image = I420Image(width: width, height: height)
    let (sy, su, sv) = (Int32(image.strideY), Int32(image.strideU), Int32(image.strideV))
    let is422 = chromaWidth != width
    let result = y.withUnsafeBufferPointer { py in
      u.withUnsafeBufferPointer { pu in
        v.withUnsafeBufferPointer { pv in
          image.y.withUnsafeMutableBufferPointer { dy in
            image.u.withUnsafeMutableBufferPointer { du in
              image.v.withUnsafeMutableBufferPointer { dv in
                is422
                  ? I422ToI420(
                    py.baseAddress, Int32(width), pu.baseAddress, Int32(chromaWidth),
                    pv.baseAddress, Int32(chromaWidth), dy.baseAddress, sy, du.baseAddress, su,
                    dv.baseAddress, sv, Int32(width), Int32(height))
                  : I444ToI420(
                    py.baseAddress, Int32(width), pu.baseAddress, Int32(chromaWidth),
                    pv.baseAddress, Int32(chromaWidth), dy.baseAddress, sy, du.baseAddress, su,
                    dv.baseAddress, sv, Int32(width), Int32(height))
              }
            }
          }
        }
      }
    }
    guard result == 0 else { throw .badFrame(reason: "chroma subsampling conversion failed") }
    return image
  }

  private func decodeViaBGRX(_ jpeg: [UInt8], width: Int, height: Int) throws(V4L2Error)
    -> I420Image
  {
    var bgrx = [UInt8](repeating: 0, count: 4 * width * height)
    let result = jpeg.withUnsafeBufferPointer { source in
      bgrx.withUnsafeMutableBufferPointer { out in
        tjDecompress2(
          handle, source.baseAddress, UInt(source.count), out.baseAddress, Int32(width),
          Int32(4 * width), Int32(height), Int32(TJPF_BGRX.rawValue), 0)
      }
    }
    guard result == 0, let image = I420Image.fromARGB(bgrx, width: width, height: height) else {
      throw .badFrame(reason: "JPEG decode: \(errorText())")
    }
    return image
  }
}
