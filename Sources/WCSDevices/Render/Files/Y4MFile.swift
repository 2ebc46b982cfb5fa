import Foundation
import WCSCodecs

/// Writes raw I420 video as YUV4MPEG2 (`.y4m`): a header line
/// `YUV4MPEG2 W<w> H<h> F<num>:<den> Ip A1:1 C420jpeg` and, per picture, `FRAME` and the packed Y, U,
/// V planes. ffmpeg, mpv and the libvpx tools read it.
public final class Y4MWriter {
  /// Picture width in pixels.
  public let width: Int
  /// Picture height in pixels.
  public let height: Int
  /// Pictures written so far.
  public private(set) var frameCount = 0
  private let sink: MediaFileSink

  /// Creates (or truncates) `url` and writes the stream header.
  /// - Parameters:
  ///   - url: the file to create (truncated when it exists).
  ///   - width: picture width in pixels.
  ///   - height: picture height in pixels.
  ///   - frameRate: frames per second, written as `F<frameRate>:1`.
  /// - Throws: `MediaFileError.io` when the file cannot be created, `.mismatch` for a non-positive
  ///   size or rate.
  public init(url: URL, width: Int, height: Int, frameRate: Int) throws(MediaFileError) {
    guard width > 0, height > 0, frameRate > 0 else {
      throw .mismatch("size and frame rate must be positive")
    }
    self.width = width
    self.height = height
    sink = try MediaFileSink(url: url)
    let header = "YUV4MPEG2 W\(width) H\(height) F\(frameRate):1 Ip A1:1 C420jpeg\n"
    try sink.append(Array(header.utf8))
  }

  /// Appends one picture.
  /// - Throws: `MediaFileError.mismatch` for a picture of another size, `.closed`, `.io`.
  public func write(_ picture: I420Image) throws(MediaFileError) {
    guard picture.width == width, picture.height == height else {
      throw .mismatch("picture \(picture.width)x\(picture.height), file \(width)x\(height)")
    }
    try sink.append(Array("FRAME\n".utf8) + picture.packedBytes)
    frameCount += 1
  }

  /// Flushes and closes the file. Further writes throw `.closed`.
  public func close() throws(MediaFileError) { try sink.close() }
}

/// A YUV4MPEG2 file read whole and checked strictly: 4:2:0 chroma only (`C420jpeg`, `C420`,
/// `C420paldv`, `C420mpeg2` or no C tag), every frame complete.
public struct Y4MFile: Sendable {
  /// Picture width in pixels.
  public let width: Int
  /// Picture height in pixels.
  public let height: Int
  /// Frame rate numerator (`F<num>:<den>`); 0 when the header has no F tag.
  public let frameRateNumerator: Int
  /// Frame rate denominator; 1 when the header has no F tag.
  public let frameRateDenominator: Int
  /// The pictures, in file order.
  public let frames: [I420Image]

  /// Reads and parses `url`.
  /// - Throws: `MediaFileError` (`.io`, `.malformed`, `.unsupported`).
  public init(url: URL) throws(MediaFileError) {
    try self.init(bytes: readMediaFile(url))
  }

  /// Parses a whole YUV4MPEG2 stream.
  /// - Throws: `MediaFileError.malformed` for a bad header, a missing or bad FRAME line, or a
  ///   truncated picture; `.unsupported` for non-4:2:0 chroma or interlacing tags we do not handle.
  public init(bytes: [UInt8]) throws(MediaFileError) {
    var offset = 0
    func line() throws(MediaFileError) -> String {
      guard let end = bytes[offset...].prefix(4096).firstIndex(of: 0x0A) else {
        throw .malformed("no line end within 4096 bytes at offset \(offset)")
      }
      let text = String(decoding: bytes[offset..<end], as: UTF8.self)
      offset = end + 1
      return text
    }
    let header = try line()
    var fields = header.split(separator: " ", omittingEmptySubsequences: true)
    guard fields.first == "YUV4MPEG2" else { throw .malformed("missing YUV4MPEG2 signature") }
    fields.removeFirst()
    var width = 0
    var height = 0
    var rate = (0, 1)
    for field in fields {
      let value = field.dropFirst()
      switch field.first {
      case "W": width = Int(value) ?? 0
      case "H": height = Int(value) ?? 0
      case "F":
        let parts = value.split(separator: ":")
        guard parts.count == 2, let num = Int(parts[0]), let den = Int(parts[1]), num >= 0, den > 0
        else { throw .malformed("bad frame rate \(field)") }
        rate = (num, den)
      case "C":
        guard ["420jpeg", "420", "420paldv", "420mpeg2"].contains(String(value)) else {
          throw .unsupported("chroma \(value)")
        }
      case "I":
        guard value == "p" || value == "?" else { throw .unsupported("interlacing \(value)") }
      default: continue  // A (aspect), X (extensions): not needed.
      }
    }
    guard width > 0, height > 0, width <= 16384, height <= 16384 else {
      throw .malformed("bad size \(width)x\(height)")
    }
    self.width = width
    self.height = height
    frameRateNumerator = rate.0
    frameRateDenominator = rate.1
    let chroma = ((width + 1) / 2) * ((height + 1) / 2)
    let frameBytes = width * height + 2 * chroma
    var frames: [I420Image] = []
    while offset < bytes.count {
      let frameLine = try line()
      guard frameLine == "FRAME" || frameLine.hasPrefix("FRAME ") else {
        throw .malformed("expected FRAME at offset \(offset)")
      }
      guard bytes.count - offset >= frameBytes else {
        throw .malformed("frame \(frames.count) truncated")
      }
      let y = Array(bytes[offset..<offset + width * height])
      let u = Array(bytes[offset + width * height..<offset + width * height + chroma])
      let v = Array(bytes[offset + width * height + chroma..<offset + frameBytes])
      offset += frameBytes
      let cw = (width + 1) / 2
      guard
        let image = I420Image(
          width: width, height: height, y: y, strideY: width, u: u, strideU: cw, v: v, strideV: cw)
      else { throw .malformed("frame \(frames.count)") }
      frames.append(image)
    }
    self.frames = frames
  }
}
