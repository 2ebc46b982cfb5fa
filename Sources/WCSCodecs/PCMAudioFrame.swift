/// A block of 16-bit linear PCM audio at 48 kHz: the audio type of the codec layer (Opus input and
/// output, virtual microphone, WAV files).
public struct PCMAudioFrame: Sendable, Equatable {
  /// Sample rate of every `PCMAudioFrame`: 48 000 Hz (the Opus RTP clock, RFC 7587 §4.1).
  public static let sampleRate = 48_000

  /// Samples per channel in a 20 ms frame at 48 kHz: 960.
  public static let samplesPer20ms = 960

  /// Interleaved samples (`L R L R ...` for stereo), `samplesPerChannel * channels` values.
  public var samples: [Int16]
  /// Number of interleaved channels: 1 (mono) or 2 (stereo).
  public let channels: Int
  /// RTP-style timestamp of the first sample, in 48 kHz sample periods (RFC 7587 §4.1).
  public var timestamp: UInt32

  /// A frame from interleaved samples.
  /// - Parameters:
  ///   - samples: interleaved Int16 samples; a trailing partial group is kept but not counted by
  ///     `samplesPerChannel`.
  ///   - channels: 1 or 2 (values below 1 are treated as 1).
  ///   - timestamp: 48 kHz RTP-style timestamp of the first sample.
  public init(samples: [Int16], channels: Int, timestamp: UInt32 = 0) {
    self.samples = samples
    self.channels = max(1, channels)
    self.timestamp = timestamp
  }

  /// Samples per channel (`samples.count / channels`).
  public var samplesPerChannel: Int { samples.count / channels }

  /// Duration in seconds (`samplesPerChannel / 48 000`).
  public var duration: Double { Double(samplesPerChannel) / Double(Self.sampleRate) }

  /// Mean energy per sample: `Σ s² / count` (0 for an empty frame).
  public var energy: Double {
    guard !samples.isEmpty else { return 0 }
    var sum = 0.0
    for s in samples { sum += Double(s) * Double(s) }
    return sum / Double(samples.count)
  }
}
