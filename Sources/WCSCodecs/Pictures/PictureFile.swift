import CPNG
import CTurboJPEG
import CYUV
import Foundation

/// Why a picture could not be written or read as PNG/JPEG.
public enum PictureFileError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The picture's planes do not match its size.
  case invalidPicture
  /// The encoder refused: libpng's or libturbojpeg's message.
  case encodingFailed(String)
  /// Not a PNG the reader accepts (or larger than `PictureFile.maximumPixels`): the reason.
  case decodingFailed(String)

  /// The reason as one line of text, for logs and error messages.
  public var description: String {
    switch self {
    case .invalidPicture: return "the picture's planes do not match its size"
    case .encodingFailed(let message): return "picture encoding failed: \(message)"
    case .decodingFailed(let message): return "not a readable PNG: \(message)"
    }
  }
}

/// The file format of a snapshot.
public enum PictureFormat: Sendable, Equatable {
  /// Lossless PNG (RGB, 8 bits a channel), libpng.
  case png
  /// Baseline JPEG, 4:2:0, from the I420 planes directly (libturbojpeg); quality 1...100.
  case jpeg(quality: Int)
}

/// PNG and JPEG files of I420 pictures (snapshots, report thumbnails). Colours are BT.601
/// limited range both ways (libyuv `I420ToRAW` / `RAWToI420`).
public enum PictureFile {
  /// Largest picture `decodePNG` accepts: 8192 × 8192 pixels.
  public static let maximumPixels = 8192 * 8192
  /// Largest side `decodePNG` accepts, pixels.
  public static let maximumDimension = 16384

  /// `image` in `format`.
  /// - Throws: `PictureFileError.invalidPicture` for inconsistent planes, `.encodingFailed`.
  public static func encode(_ image: I420Image, as format: PictureFormat) throws(PictureFileError)
    -> [UInt8]
  {
    switch format {
    case .png: return try png(image)
    case .jpeg(let quality): return try jpeg(image, quality: quality)
    }
  }

  /// `image` as a PNG file (RGB). `fast` trades size for time (libpng's
  /// `PNG_IMAGE_FLAG_FAST`: about 4x faster and 3x larger on the virtual camera's pattern,
  /// see `PictureBench`).
  /// - Throws: `PictureFileError.invalidPicture`, `.encodingFailed` with libpng's message.
  public static func png(_ image: I420Image, fast: Bool = false) throws(PictureFileError)
    -> [UInt8]
  {
    guard let rgb = rgb(image) else { throw .invalidPicture }
    var info = png_image()
    info.version = wcs_png_image_version()
    info.width = UInt32(image.width)
    info.height = UInt32(image.height)
    info.format = UInt32(PNG_FORMAT_RGB)
    if fast { info.flags = UInt32(PNG_IMAGE_FLAG_FAST) }
    var size: png_alloc_size_t = 0
    let stride = Int32(image.width * 3)
    let measured = rgb.withUnsafeBytes {
      png_image_write_to_memory(&info, nil, &size, 0, $0.baseAddress, stride, nil)
    }
    guard measured != 0, size > 0 else { throw .encodingFailed(message(&info)) }
    var out = [UInt8](repeating: 0, count: Int(size))
    let written = out.withUnsafeMutableBytes { memory in
      rgb.withUnsafeBytes {
        png_image_write_to_memory(&info, memory.baseAddress, &size, 0, $0.baseAddress, stride, nil)
      }
    }
    guard written != 0 else { throw .encodingFailed(message(&info)) }
    return Array(out.prefix(Int(size)))
  }

  /// `image` as a baseline JPEG (4:2:0), `quality` clamped to 1...100.
  /// - Throws: `PictureFileError.invalidPicture`, `.encodingFailed` with libturbojpeg's message.
  public static func jpeg(_ image: I420Image, quality: Int = 90) throws(PictureFileError)
    -> [UInt8]
  {
    guard image.isConsistent else { throw .invalidPicture }
    guard let handle = tjInitCompress() else { throw .encodingFailed("tjInitCompress failed") }
    defer { tjDestroy(handle) }
    var buffer: UnsafeMutablePointer<UInt8>?
    var size: UInt = 0
    var strides = [Int32(image.strideY), Int32(image.strideU), Int32(image.strideV)]
    let status = image.y.withUnsafeBufferPointer { y in
      image.u.withUnsafeBufferPointer { u in
        image.v.withUnsafeBufferPointer { v in
          var planes: [UnsafePointer<UInt8>?] = [y.baseAddress, u.baseAddress, v.baseAddress]
          return tjCompressFromYUVPlanes(
            handle, &planes, Int32(image.width), &strides, Int32(image.height),
            Int32(TJSAMP_420.rawValue), &buffer, &size, Int32(min(100, max(1, quality))), 0)
        }
      }
    }
    defer { tjFree(buffer) }
    guard status == 0, let buffer else {
      throw .encodingFailed(String(cString: tjGetErrorStr2(handle)))
    }
    return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
  }

  /// A PNG file as an I420 picture (odd sizes keep their last column/row in the chroma).
  /// - Throws: `PictureFileError.decodingFailed` for anything libpng cannot read or a picture
  ///   over `maximumDimension` a side or `maximumPixels` in all.
  public static func decodePNG(_ bytes: [UInt8]) throws(PictureFileError) -> I420Image {
    var info = png_image()
    info.version = wcs_png_image_version()
    let begun = bytes.withUnsafeBytes {
      png_image_begin_read_from_memory(&info, $0.baseAddress, $0.count)
    }
    guard begun != 0 else { throw .decodingFailed(message(&info)) }
    let width = Int(info.width)
    let height = Int(info.height)
    guard width > 0, height > 0, width <= maximumDimension, height <= maximumDimension,
      width * height <= maximumPixels
    else {
      png_image_free(&info)
      throw .decodingFailed("\(width)x\(height) is over the limit")
    }
    info.format = UInt32(PNG_FORMAT_RGB)
    var rgb = [UInt8](repeating: 0, count: width * height * 3)
    let finished = rgb.withUnsafeMutableBytes {
      png_image_finish_read(&info, nil, $0.baseAddress, Int32(width * 3), nil)
    }
    guard finished != 0 else { throw .decodingFailed(message(&info)) }
    var out = I420Image(width: width, height: height)
    let (sy, su, sv) = (Int32(out.strideY), Int32(out.strideU), Int32(out.strideV))
    let converted = out.y.withUnsafeMutableBufferPointer { y in
      out.u.withUnsafeMutableBufferPointer { u in
        out.v.withUnsafeMutableBufferPointer { v in
          RAWToI420(
            rgb, Int32(width * 3), y.baseAddress, sy, u.baseAddress, su, v.baseAddress, sv,
            Int32(width), Int32(height))
        }
      }
    }
    guard converted == 0 else { throw .decodingFailed("RAWToI420 failed") }
    return out
  }

  /// R, G, B bytes of `image`, `width * 3` a row; nil for inconsistent planes.
  static func rgb(_ image: I420Image) -> [UInt8]? {
    guard image.isConsistent else { return nil }
    var rgb = [UInt8](repeating: 0, count: image.width * image.height * 3)
    let status = rgb.withUnsafeMutableBufferPointer { out in
      I420ToRAW(
        image.y, Int32(image.strideY), image.u, Int32(image.strideU), image.v,
        Int32(image.strideV), out.baseAddress, Int32(image.width * 3), Int32(image.width),
        Int32(image.height))
    }
    return status == 0 ? rgb : nil
  }

  private static func message(_ info: inout png_image) -> String {
    let text = withUnsafeBytes(of: &info.message) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    png_image_free(&info)
    return text.isEmpty ? "libpng failed" : text
  }
}

extension I420Image {
  /// Whether every plane holds `stride * rows` bytes with strides at least the plane widths.
  var isConsistent: Bool {
    width > 0 && height > 0 && strideY >= width && strideU >= chromaWidth
      && strideV >= chromaWidth && y.count >= strideY * height
      && u.count >= strideU * chromaHeight && v.count >= strideV * chromaHeight
  }
}
