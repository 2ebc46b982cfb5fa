/// Why a `WebMRecorder` or an `MP4Recorder` could not be created or could not write.
public enum RecorderError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Neither a video nor an audio track was requested.
  case noTracks
  /// The video size is not 1 ... 16 384 pixels per side.
  case invalidVideoSize(width: Int, height: Int)
  /// H.264 only: no SPS or no PPS, a unit of the wrong NAL type, too short, or too many
  /// (ISO/IEC 14496-15 §5.3.3.1: 31 SPSs, 255 PPSs, 65 535 bytes each).
  case invalidParameterSets
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
    case .noTracks: return "recorder needs a video or an audio track"
    case .invalidVideoSize(let width, let height):
      return "recorder: invalid video size \(width)x\(height)"
    case .invalidParameterSets:
      return "recorder: the H.264 track needs valid SPS and PPS NAL units"
    case .unsupportedAudio(let sampleRate, let channels):
      return "recorder: Opus must be 48000 Hz with 1 or 2 channels, got \(sampleRate) Hz, "
        + "\(channels) channels"
    case .trackNotRecorded(let track): return "recorder has no \(track) track"
    case .finished: return "recorder is already finished"
    case .ffmpeg(let error): return "recorder: \(error)"
    }
  }
}

/// The name `WebMRecorder` has thrown since before MP4 recording.
public typealias WebMRecorderError = RecorderError
