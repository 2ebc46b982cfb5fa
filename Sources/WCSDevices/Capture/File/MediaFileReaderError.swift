import WCSRecording

/// Why a `MediaFileReader` could not open or read a file.
public enum MediaFileReaderError: Error, Equatable, Sendable, CustomStringConvertible {
  /// FFmpeg could not open the file or recognise its format (missing, unreadable, garbage).
  case openFailed(path: String, FFmpegError)
  /// The container was recognised but its streams could not be probed.
  case streamInfoUnavailable(FFmpegError)
  /// The file has no video or audio stream that was asked for.
  case noMediaStreams
  /// No decoder for the stream's codec is built into this FFmpeg.
  case decoderUnavailable(codecName: String)
  /// The requested output is not possible: a non-positive video size, or a channel count other
  /// than 1 or 2.
  case invalidOutputFormat(String)
  /// An FFmpeg call failed while reading, decoding or converting.
  case ffmpeg(FFmpegError)

  /// A one-line human-readable explanation.
  public var description: String {
    switch self {
    case .openFailed(let path, let error): return "cannot open media file \(path): \(error)"
    case .streamInfoUnavailable(let error): return "cannot read media stream info: \(error)"
    case .noMediaStreams: return "media file has no stream of the kind asked for (video, audio)"
    case .decoderUnavailable(let codecName): return "no FFmpeg decoder for \(codecName)"
    case .invalidOutputFormat(let reason): return "invalid output format: \(reason)"
    case .ffmpeg(let error): return "media file: \(error)"
    }
  }
}
