import CVPX

/// An error from the VP8 encoder or decoder (libvpx), with the library's code and message.
public struct VP8Error: Error, Sendable, Equatable, CustomStringConvertible {
  /// What went wrong.
  public enum Reason: String, Sendable {
    /// `vpx_codec_enc_init` / `vpx_codec_dec_init` / `vpx_img_alloc` failed.
    case initialization
    /// A setting was rejected (`vpx_codec_control`, `vpx_codec_enc_config_set`).
    case configuration
    /// `vpx_codec_encode` failed.
    case encode
    /// `vpx_codec_decode` rejected the data (truncated, not VP8, unsupported).
    case decode
    /// The frame decoded but libvpx flagged it corrupt (`VP8D_GET_FRAME_CORRUPTED`), e.g. it
    /// references a frame that was lost: the receiver should ask for a key frame (PLI).
    case corruptFrame
    /// The input was rejected before reaching libvpx (empty data, wrong picture size).
    case invalidInput
    /// A key frame's header (RFC 6386 §9.1) claims a picture larger than
    /// `VP8Decoder.pictureLimit`; it was not given to libvpx, which would allocate for it.
    case pictureTooLarge
  }

  /// The kind of failure.
  public let reason: Reason
  /// `vpx_codec_err_t` raw value (0 when the error did not come from libvpx).
  public let code: UInt32
  /// `vpx_codec_err_to_string` plus `vpx_codec_error_detail` when available, or our reason.
  public let message: String

  init(_ reason: Reason, code: vpx_codec_err_t, context: UnsafeMutablePointer<vpx_codec_ctx_t>?) {
    self.reason = reason
    self.code = code.rawValue
    var text = vpx_codec_err_to_string(code).map { String(cString: $0) } ?? "vpx error"
    if let context, let detail = vpx_codec_error_detail(context) {
      text += ": " + String(cString: detail)
    }
    message = text
  }

  init(_ reason: Reason, message: String) {
    self.reason = reason
    code = 0
    self.message = message
  }

  /// `"<reason>: <message>"`.
  public var description: String { "\(reason.rawValue): \(message)" }
}
