/// An error from the H.264 encoder (OpenH264) or decoder (libavcodec), with the library's code.
public struct H264Error: Error, Sendable, Equatable, CustomStringConvertible {
  /// What went wrong.
  public enum Reason: String, Sendable {
    /// The encoder or decoder could not be created or opened.
    case initialization
    /// A setting was rejected (`SetOption`).
    case configuration
    /// `EncodeFrame` failed.
    case encode
    /// libavcodec rejected the access unit, or it is a non-IDR picture before any IDR.
    case decode
    /// The picture decoded but libavcodec flagged it corrupt (`AV_FRAME_FLAG_CORRUPT` or
    /// `decode_error_flags`), e.g. it references a lost picture: ask the sender for a key frame.
    case corruptFrame
    /// The input was rejected before reaching the library (empty data, wrong picture size).
    case invalidInput
    /// An SPS (ITU-T H.264 §7.3.2.1.1) claims a picture over `H264Decoder.pictureLimit`, or
    /// cannot be read; it was not given to libavcodec, which would allocate for it.
    case pictureTooLarge
  }

  /// The kind of failure.
  public let reason: Reason
  /// The library's return value (0 when the error did not come from a library).
  public let code: Int32
  /// The library's message or our reason.
  public let message: String

  init(_ reason: Reason, code: Int32 = 0, message: String) {
    self.reason = reason
    self.code = code
    self.message = message
  }

  /// `"<reason>: <message>"`.
  public var description: String { "\(reason.rawValue): \(message)" }
}

/// The largest H.264 picture a decoder accepts (the same rule as VP8's).
public typealias H264PictureLimit = VP8PictureLimit
