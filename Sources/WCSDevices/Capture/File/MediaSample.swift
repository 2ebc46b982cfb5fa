/// A decoded video frame or audio chunk, as `MediaFileReader.nextSample()` yields them in
/// presentation-time order.
public enum MediaSample: Equatable, Sendable {
  /// An I420 picture.
  case video(DecodedVideoFrame)
  /// 20 ms of 48 kHz PCM.
  case audio(DecodedAudioChunk)

  /// Presentation time in seconds.
  public var ptsSeconds: Double {
    switch self {
    case .video(let frame): return frame.ptsSeconds
    case .audio(let chunk): return chunk.ptsSeconds
    }
  }

  /// The same sample with its presentation time replaced (seconds).
  public func withPTS(_ seconds: Double) -> MediaSample {
    switch self {
    case .video(var frame):
      frame.ptsSeconds = seconds
      return .video(frame)
    case .audio(var chunk):
      chunk.ptsSeconds = seconds
      return .audio(chunk)
    }
  }
}

/// Something that yields decoded samples in presentation order and can start over: a
/// `MediaFileReader`, or a scripted source in tests. `MediaFilePacer` reads from it.
public protocol MediaSampleSource: AnyObject {
  /// The file's length in seconds, when known.
  var duration: Double? { get }
  /// The next sample, or nil at the end. Throws the source's error.
  func nextSample() throws -> MediaSample?
  /// Goes back to the start, so `nextSample()` yields the first sample again.
  func rewind() throws
}
