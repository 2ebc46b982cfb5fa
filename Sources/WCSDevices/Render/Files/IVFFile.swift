import Foundation

/// Writes VP8 frames to an IVF file: a 32-byte header (`DKIF`, version 0, header size 32, FourCC
/// `VP80`, width, height, time base rate and scale, frame count) and, per frame, a 12-byte header
/// (size, 64-bit timestamp, little-endian) before the frame bytes. The frame count is patched on
/// `close()`. ffmpeg and the libvpx tools read it.
public final class IVFWriter {
  /// Frames written so far.
  public private(set) var frameCount = 0
  private let sink: MediaFileSink

  /// Creates (or truncates) `url` and writes the file header.
  /// - Parameters:
  ///   - url: the file to create (truncated when it exists).
  ///   - width: picture width in pixels (16 bits).
  ///   - height: picture height in pixels (16 bits).
  ///   - timebaseRate: time base denominator: timestamps count 1/`timebaseRate` s (90 000 for RTP
  ///     timestamps, or the frame rate for frame numbers).
  /// - Throws: `MediaFileError.mismatch` for sizes outside 1 ... 65535, `.io`.
  public init(url: URL, width: Int, height: Int, timebaseRate: UInt32 = 90_000)
    throws(MediaFileError)
  {
    guard (1...65535).contains(width), (1...65535).contains(height), timebaseRate > 0 else {
      throw .mismatch("size \(width)x\(height) or time base out of range")
    }
    sink = try MediaFileSink(url: url)
    var header = Array("DKIF".utf8)
    header += MediaFileLittleEndian.bytes(UInt16(0)) + MediaFileLittleEndian.bytes(UInt16(32))
    header += Array("VP80".utf8)
    header +=
      MediaFileLittleEndian.bytes(UInt16(width)) + MediaFileLittleEndian.bytes(UInt16(height))
    header += MediaFileLittleEndian.bytes(timebaseRate) + MediaFileLittleEndian.bytes(UInt32(1))
    header += MediaFileLittleEndian.bytes(UInt32(0)) + MediaFileLittleEndian.bytes(UInt32(0))
    try sink.append(header)
  }

  /// Appends one frame.
  /// - Parameters:
  ///   - frame: one encoded frame (VP8 bytes as the encoder produced them).
  ///   - timestamp: in time base units (see `init`).
  /// - Throws: `MediaFileError.closed`, `.io`, `.mismatch` for a frame over 4 GiB.
  public func write(_ frame: [UInt8], timestamp: UInt64) throws(MediaFileError) {
    guard frame.count <= Int(UInt32.max) else { throw .mismatch("frame too large") }
    try sink.append(
      MediaFileLittleEndian.bytes(UInt32(frame.count)) + MediaFileLittleEndian.bytes(timestamp)
        + frame)
    frameCount += 1
  }

  /// Writes the frame count into the header and closes the file.
  /// - Throws: `MediaFileError.io`.
  public func close() throws(MediaFileError) {
    guard !sink.isClosed else { return }
    try sink.patch(MediaFileLittleEndian.bytes(UInt32(truncatingIfNeeded: frameCount)), at: 24)
    try sink.close()
  }
}

/// An IVF file read whole and checked strictly.
public struct IVFFile: Sendable {
  /// One frame of the file.
  public struct Frame: Sendable, Equatable {
    /// The codec frame bytes.
    public var data: [UInt8]
    /// Timestamp in time base units.
    public var timestamp: UInt64
  }

  /// FourCC from the header, e.g. `VP80`.
  public let fourCC: String
  /// Picture width in pixels.
  public let width: Int
  /// Picture height in pixels.
  public let height: Int
  /// Time base denominator (rate) from the header.
  public let timebaseRate: UInt32
  /// Time base numerator (scale) from the header.
  public let timebaseScale: UInt32
  /// Frame count the header states (some writers leave 0).
  public let declaredFrameCount: Int
  /// The frames, in file order.
  public let frames: [Frame]

  /// Reads and parses `url`.
  /// - Throws: `MediaFileError` (`.io`, `.malformed`).
  public init(url: URL) throws(MediaFileError) {
    try self.init(bytes: readMediaFile(url))
  }

  /// Parses a whole IVF stream.
  /// - Throws: `MediaFileError.malformed` for a bad signature, header size, or a frame header or
  ///   frame running past the end.
  public init(bytes: [UInt8]) throws(MediaFileError) {
    var reader = MediaFileByteReader(bytes)
    guard let signature = reader.take(4), Array(signature) == Array("DKIF".utf8) else {
      throw .malformed("missing DKIF signature")
    }
    guard let version = reader.uint16(), let headerSize = reader.uint16(),
      let fourCC = reader.take(4), let width = reader.uint16(), let height = reader.uint16(),
      let rate = reader.uint32(), let scale = reader.uint32(), let count = reader.uint32(),
      reader.take(4) != nil
    else { throw .malformed("header shorter than 32 bytes") }
    guard version == 0 else { throw .malformed("version \(version)") }
    guard headerSize >= 32, Int(headerSize) <= bytes.count else {
      throw .malformed("header size \(headerSize)")
    }
    reader.offset = Int(headerSize)
    self.fourCC = String(decoding: fourCC, as: UTF8.self)
    self.width = Int(width)
    self.height = Int(height)
    timebaseRate = rate
    timebaseScale = scale
    declaredFrameCount = Int(count)
    var frames: [Frame] = []
    while reader.remaining > 0 {
      guard let size = reader.uint32(), let timestamp = reader.uint64() else {
        throw .malformed("frame header \(frames.count) truncated")
      }
      guard let data = reader.take(Int(size)) else {
        throw .malformed("frame \(frames.count) truncated: \(size) bytes declared")
      }
      frames.append(Frame(data: Array(data), timestamp: timestamp))
    }
    self.frames = frames
  }
}
