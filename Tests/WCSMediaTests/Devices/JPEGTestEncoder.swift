import CMediaDevices
import WCSMedia

/// Makes MJPEG test frames with libturbojpeg's compressor, as a webcam would.
enum JPEGTestEncoder {
  /// `image` as a baseline JPEG with the given chroma subsampling; empty on failure.
  static func jpeg(from image: I420Image, subsampling: TJSAMP, quality: Int32 = 95) -> [UInt8] {
    guard let bgra = image.argb(), let handle = tjInitCompress() else { return [] }
    defer { tjDestroy(handle) }
    var output: UnsafeMutablePointer<UInt8>?
    var size: UInt = 0
    let result = bgra.withUnsafeBufferPointer {
      tjCompress2(
        handle, $0.baseAddress, Int32(image.width), Int32(4 * image.width), Int32(image.height),
        Int32(TJPF_BGRA.rawValue), &output, &size, Int32(subsampling.rawValue), quality, 0)
    }
    guard result == 0, let output else { return [] }
    defer { tjFree(output) }
    return [UInt8](UnsafeBufferPointer(start: output, count: Int(size)))
  }
}
