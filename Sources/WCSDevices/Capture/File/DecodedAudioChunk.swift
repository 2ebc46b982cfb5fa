/// 20 ms of decoded audio: 48 kHz signed 16-bit PCM, interleaved.
public struct DecodedAudioChunk: Equatable, Sendable {
  /// Samples per second (always 48 000, the Opus/WebRTC rate, RFC 7587 §4).
  public static let sampleRate = 48_000
  /// Samples per channel in one chunk (20 ms at 48 kHz).
  public static let samplesPerChannel = 960

  /// `samplesPerChannel * channels` samples, interleaved (L R L R ... for stereo).
  public var samples: [Int16]
  /// 1 (mono) or 2 (stereo).
  public var channels: Int
  /// Presentation time of the first sample, in seconds from the start of the file.
  public var ptsSeconds: Double

  /// A chunk from interleaved samples.
  public init(samples: [Int16], channels: Int, ptsSeconds: Double) {
    self.samples = samples
    self.channels = channels
    self.ptsSeconds = ptsSeconds
  }

  /// The chunk's length in seconds (`samples.count / channels / 48 000`).
  public var durationSeconds: Double {
    guard channels > 0 else { return 0 }
    return Double(samples.count / channels) / Double(Self.sampleRate)
  }
}
