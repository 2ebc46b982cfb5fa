/// Why a media file (Y4M, IVF, WAV) could not be written or read.
public enum MediaFileError: Error, Sendable, Equatable {
  /// The file system call failed; the text is the underlying error's description.
  case io(String)
  /// The bytes do not follow the format; the text says where.
  case malformed(String)
  /// Valid for the format but not supported here (e.g. 8-bit WAV, 4:2:2 Y4M, non-VP8 IVF).
  case unsupported(String)
  /// The input does not match the file (wrong picture size, channel count).
  case mismatch(String)
  /// `write` after `close`.
  case closed
}
