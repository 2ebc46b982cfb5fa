/// Why a `WebMRecorder` could not be created or could not write.
public enum WebMRecorderError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Neither a video nor an audio track was requested.
  case noTracks
  /// The video size is not positive (width and height in pixels).
  case invalidVideoSize(width: Int, height: Int)
  /// The audio track is not 48 kHz mono or stereo Opus (RFC 7587 §4: Opus RTP is always 48 kHz).
  case unsupportedAudio(sampleRate: Int, channels: Int)
  /// A frame was given for a track the recorder was not created with.
  case trackNotRecorded(String)
  /// `finish()` was already called; nothing more can be written.
  case finished
  /// An FFmpeg call failed; carries FFmpeg's error code and message.
  case ffmpeg(FFmpegError)

  /// A one-line human-readable explanation.
  public var description: String {
    switch self {
    case .noTracks: return "WebM recorder needs a video or an audio track"
    case .invalidVideoSize(let width, let height):
      return "WebM recorder: invalid video size \(width)x\(height)"
    case .unsupportedAudio(let sampleRate, let channels):
      return "WebM recorder: Opus must be 48000 Hz with 1 or 2 channels, got \(sampleRate) Hz, "
        + "\(channels) channels"
    case .trackNotRecorded(let track): return "WebM recorder has no \(track) track"
    case .finished: return "WebM recorder is already finished"
    case .ffmpeg(let error): return "WebM recorder: \(error)"
    }
  }
}
