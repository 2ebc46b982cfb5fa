import CFFmpeg

/// A failed FFmpeg call: which operation, FFmpeg's negative error code (an `AVERROR` value) and
/// its message as rendered by `av_strerror`.
public struct FFmpegError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The libav* function or step that failed, e.g. `"avformat_write_header"`.
  public let operation: String
  /// FFmpeg's return value (negative; `AVERROR(errno)` or an `AVERROR_*` tag).
  public let code: Int32
  /// FFmpeg's explanation of `code`, from `av_strerror`.
  public let message: String

  /// Wraps the return value `code` of `operation`, looking up FFmpeg's message for it.
  public init(operation: String, code: Int32) {
    self.operation = operation
    self.code = code
    self.message = FFmpegError.message(for: code)
  }

  /// `"<operation> failed: <message> (<code>)"`.
  public var description: String {
    "\(operation) failed: \(message) (\(code))"
  }

  /// FFmpeg's text for an error code (`av_err2str`, which Swift cannot import).
  static func message(for code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 128)
    let found = buffer.withUnsafeMutableBufferPointer { pointer -> Int32 in
      guard let base = pointer.baseAddress else { return -1 }
      return wcs_av_strerror(code, base, pointer.count)
    }
    if found < 0 { return "unknown FFmpeg error" }
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Throws an `FFmpegError` when `code` is negative; returns it otherwise.
  @discardableResult
  package static func check(_ code: Int32, _ operation: String) throws(FFmpegError) -> Int32 {
    if code < 0 { throw FFmpegError(operation: operation, code: code) }
    return code
  }
}
