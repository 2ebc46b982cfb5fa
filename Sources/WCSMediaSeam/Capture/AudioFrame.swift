/// A block of uncompressed audio: interleaved signed 16-bit PCM. What an app pushes into the
/// external audio module (the Linux stand-in for the iOS `CMSampleBuffer` of ReplayKit).
public struct AudioFrame: Sendable, Equatable {
  /// Samples per second per channel (e.g. 48 000).
  public var sampleRate: Int
  /// Channel count (1 or 2).
  public var channels: Int
  /// Interleaved samples, `frameCount * channels` values.
  public var samples: [Int16]
  /// Capture time in nanoseconds on a monotonic clock.
  public var timestampNs: Int64

  /// Creates a frame.
  public init(sampleRate: Int, channels: Int, samples: [Int16], timestampNs: Int64 = 0) {
    self.sampleRate = sampleRate
    self.channels = channels
    self.samples = samples
    self.timestampNs = timestampNs
  }

  /// Samples per channel (`samples.count / channels`, 0 for a zero channel count).
  public var frameCount: Int { channels > 0 ? samples.count / channels : 0 }
}
