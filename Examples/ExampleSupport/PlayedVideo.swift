import FPWCSApi2Swift
import Foundation
import Synchronization
import WCSMedia

/// A `display` that writes the video it receives to a Y4M file and counts it: the Linux
/// stand-in for the iOS examples' video views. It also keeps up to `keepPictures` pictures with
/// their RTP timestamps and arrival times, so the demo can compare them with the source.
///
/// The Y4M file is opened at the first frame (its size); later frames of another size are
/// counted but not written.
public final class VideoFileRenderer: VideoRenderer {
  /// One kept frame.
  public struct Kept: Sendable {
    /// 90 kHz RTP timestamp (RFC 3550 §5.1) of the frame, as the renderer got it.
    public var rtpTimestamp: UInt32
    /// Seconds since the example started, when the frame arrived.
    public var arrival: Double
    /// The picture (packed planes).
    public var picture: I420Image
  }

  private struct State {
    var writer: Y4MWriter?
    var frames = 0
    var width = 0
    var height = 0
    var kept: [Kept] = []
    var writeError: String?
    var arrivals = FreezeMeter()
    var frameRate = FrameRateEstimate()
  }

  private let path: String?
  private let frameRate: Int
  private let keepPictures: Int
  private let log: ExampleLog
  private let event: String
  private let state = Mutex(State())

  /// - Parameters:
  ///   - path: Y4M file to write, `nil` to write nothing.
  ///   - frameRate: frame rate written in the Y4M header.
  ///   - keepPictures: how many pictures to keep in memory for quality checks (0: none).
  ///   - event: the log event marked at the first frame (e.g. "first frame").
  public init(
    path: String?, frameRate: Int = 30, keepPictures: Int = 0, log: ExampleLog, event: String
  ) {
    self.path = path
    self.frameRate = frameRate
    self.keepPictures = keepPictures
    self.log = log
    self.event = event
  }

  /// Counts, writes and maybe keeps `frame`.
  public func render(_ frame: VideoFrame) {
    let arrival = log.elapsed
    let rtp = UInt32(truncatingIfNeeded: (frame.timestampNs * 9 + 50_000) / 100_000)
    let first = state.withLock { state -> Bool in
      state.frames += 1
      state.arrivals.picture(at: arrival)
      state.frameRate.picture(rtpTimestamp: rtp)
      let isFirst = state.frames == 1
      if isFirst {
        state.width = frame.width
        state.height = frame.height
      }
      guard frame.width == state.width, frame.height == state.height,
        let picture = Self.picture(frame)
      else { return isFirst }
      if isFirst, let path {
        do {
          state.writer = try Y4MWriter(
            url: URL(fileURLWithPath: path), width: frame.width, height: frame.height,
            frameRate: frameRate)
        } catch {
          state.writeError = "\(error)"
        }
      }
      if let writer = state.writer {
        do {
          try writer.write(picture)
        } catch {
          state.writeError = "\(error)"
          state.writer = nil
        }
      }
      if state.kept.count < keepPictures {
        state.kept.append(Kept(rtpTimestamp: rtp, arrival: arrival, picture: picture))
      }
      return isFirst
    }
    if first {
      log.mark(event)
      log.line("\(event): \(frame.width)x\(frame.height)")
    }
  }

  /// Frames received so far.
  public var frameCount: Int { state.withLock { $0.frames } }

  /// Size of the first frame, `nil` before it.
  public var size: (width: Int, height: Int)? {
    state.withLock { $0.frames > 0 ? ($0.width, $0.height) : nil }
  }

  /// The freezes between `start` and `end` (seconds since the example started; see
  /// `FreezeMeter.report(from:to:)`).
  public func freezes(from start: Double, to end: Double) -> FreezeReport {
    state.withLock { $0.arrivals.report(from: start, to: end) }
  }

  /// The frame rate the pictures' RTP timestamps show, `nil` before two pictures.
  public var estimatedFrameRate: Double? { state.withLock { $0.frameRate.framesPerSecond } }

  /// The kept frames, in arrival order.
  public var keptFrames: [Kept] { state.withLock { $0.kept } }

  /// Closes the file; returns its path when something was written, or the write error.
  public func finish() -> Result<String?, ExampleError> {
    state.withLock { state in
      if let error = state.writeError {
        return .failure(.failed("writing \(path ?? ""): \(error)"))
      }
      guard let writer = state.writer else { return .success(nil) }
      state.writer = nil
      do {
        try writer.close()
      } catch {
        return .failure(.failed("closing \(path ?? ""): \(error)"))
      }
      return .success(path)
    }
  }

  static func picture(_ frame: VideoFrame) -> I420Image? {
    I420Image(
      width: frame.width, height: frame.height, y: [UInt8](frame.dataY), strideY: frame.strideY,
      u: [UInt8](frame.dataU), strideU: frame.strideU, v: [UInt8](frame.dataV),
      strideV: frame.strideV)?.packed()
  }
}

/// Where the played audio goes: a WAV file, the level of the last block, and (for the demo) the
/// samples with their arrival times. Installed as the native engine's playout sink, where every
/// played stream's audio goes (a sound output plays it too when asked: `setLoudspeakerStatus`).
public final class PlayedAudioRecorder: Sendable {
  private struct State {
    var writer: WAVWriter?
    var blocks = 0
    var samples: [Int16] = []
    var firstArrival: Double?
    var channels = 1
    var writeError: String?
    var level = 0.0
  }

  private let path: String?
  private let keepSeconds: Double
  private let log: ExampleLog
  private let state = Mutex(State())

  /// - Parameters:
  ///   - path: WAV file to write (48 kHz), `nil` for none.
  ///   - keepSeconds: how much audio to keep in memory (mono, 48 kHz) for delay measurement.
  public init(path: String?, keepSeconds: Double = 0, log: ExampleLog) {
    self.path = path
    self.keepSeconds = keepSeconds
    self.log = log
  }

  /// Routes the played audio of every stream here. Returns `false` when the SDK's media engine
  /// is not the native one (then nothing is recorded).
  @discardableResult
  public func install() -> Bool {
    guard let native = WCSApi2Environment.sharedMediaBackend as? NativeMediaBackend else {
      return false
    }
    native.setPlayoutSink(PlayoutAudioCallbackSink { [self] frame in self.play(frame) })
    return true
  }

  /// Detaches from the engine and closes the file; returns its path when something was written.
  public func finish() -> Result<String?, ExampleError> {
    if let native = WCSApi2Environment.sharedMediaBackend as? NativeMediaBackend {
      native.setPlayoutSink(nil)
    }
    return state.withLock { state in
      if let error = state.writeError {
        return .failure(.failed("writing \(path ?? ""): \(error)"))
      }
      guard let writer = state.writer else { return .success(nil) }
      state.writer = nil
      do {
        try writer.close()
      } catch {
        return .failure(.failed("closing \(path ?? ""): \(error)"))
      }
      return .success(path)
    }
  }

  func play(_ frame: AudioFrame) {
    let arrival = log.elapsed
    let first = state.withLock { state -> Bool in
      state.blocks += 1
      let isFirst = state.blocks == 1
      if isFirst {
        state.channels = max(1, frame.channels)
        if let path {
          do {
            state.writer = try WAVWriter(
              url: URL(fileURLWithPath: path), sampleRate: frame.sampleRate,
              channels: state.channels)
          } catch {
            state.writeError = "\(error)"
          }
        }
      }
      if let writer = state.writer, frame.channels == state.channels {
        do {
          try writer.write(samples: frame.samples)
        } catch {
          state.writeError = "\(error)"
          state.writer = nil
        }
      }
      let mono = Self.mono(frame)
      state.level = AudioLevel.rms(mono)
      if state.firstArrival == nil {
        // Arrival of the block's first sample: the block was handed over when it was due.
        state.firstArrival = arrival - Double(mono.count) / Double(max(1, frame.sampleRate))
      }
      if Double(state.samples.count) < keepSeconds * 48_000 { state.samples += mono }
      return isFirst
    }
    if first {
      log.mark("first audio")
      log.line("first audio block: \(frame.sampleRate) Hz, \(frame.channels) channel(s)")
    }
  }

  /// 20 ms blocks played so far.
  public var blockCount: Int { state.withLock { $0.blocks } }

  /// RMS level of the last block, 0...1.
  public var level: Double { state.withLock { $0.level } }

  /// The kept mono samples (48 kHz) and the arrival time of the first one (seconds since start).
  public var kept: (samples: [Int16], start: Double?) {
    state.withLock { ($0.samples, $0.firstArrival) }
  }

  static func mono(_ frame: AudioFrame) -> [Int16] {
    guard frame.channels > 1 else { return frame.samples }
    let channels = frame.channels
    return (0..<frame.frameCount).map { index in
      var sum = 0
      for channel in 0..<channels { sum += Int(frame.samples[index * channels + channel]) }
      return Int16(clamping: sum / channels)
    }
  }
}

/// Audio level helpers.
public enum AudioLevel {
  /// Root mean square of `samples` as a fraction of full scale (0...1).
  public static func rms(_ samples: [Int16]) -> Double {
    guard !samples.isEmpty else { return 0 }
    var sum = 0.0
    for sample in samples { sum += Double(sample) * Double(sample) }
    return (sum / Double(samples.count)).squareRoot() / 32768
  }

  /// A 20-character meter for `level` in dBFS (-60...0): `[#######.............] -23 dBFS`.
  public static func meter(_ level: Double) -> String {
    let db = level > 0 ? max(-60, 20 * log10(level)) : -60
    let filled = Int(((db + 60) / 60 * 20).rounded())
    return "[" + String(repeating: "#", count: filled)
      + String(repeating: ".", count: 20 - filled) + "] " + String(format: "%.0f dBFS", db)
  }
}
