import Dispatch
import Synchronization
import WCSCodecs
import WCSMediaSeam

/// A `PlayoutAudioSink` that plays blocks on a sound output (`AudioPlaybackDevice`: PulseAudio
/// sink or ALSA PCM). Device writes block (about 60 ms stay queued in the sound server), so they
/// run on the sink's own serial queue, never on the caller's thread: `play(_:)` only queues the
/// block. When the device falls behind, at most `capacity` blocks wait and the oldest is dropped
/// (`droppedFrames` counts them). A write error closes the device and ends playback
/// (`failure`); nothing is thrown to the caller.
public final class SpeakerPlayoutSink: PlayoutAudioSink, Sendable {

  /// Blocks waiting for the device at most: 8 × 20 ms = 160 ms.
  public static let defaultCapacity = 8

  private struct State {
    var pending: [AudioFrame] = []
    var writing = false
    var closed = false
    var dropped = 0
    var written = 0
    var failure: AudioDeviceError?
  }

  /// The sound system the device was opened on.
  public let backend: AudioBackend
  /// The sink or PCM name; `nil` for the default output.
  public let deviceName: String?
  /// Blocks waiting for the device at most.
  public let capacity: Int
  /// The open device, used on its queue only (checked); writes block there.
  private let device: QueueBoundBox<AudioPlaybackDevice?>
  private var queue: DispatchQueue { device.queue }
  private let state = Mutex(State())

  /// Opens the output now (blocks while the sound server answers).
  /// - Parameters:
  ///   - device: PulseAudio sink name or ALSA PCM name; `nil` for the default output.
  ///   - channels: the device's channel count, 1 or 2 (blocks are converted to it).
  ///   - backend: `.automatic` tries PulseAudio, then ALSA.
  ///   - capacity: blocks waiting for the device at most (at least 1).
  /// - Throws: `AudioDeviceError.noSoundServer`, `.deviceNotFound`, `.openFailed`.
  public init(
    device: String? = nil, channels: Int = 2, backend: AudioBackendPreference = .automatic,
    capacity: Int = SpeakerPlayoutSink.defaultCapacity
  ) throws(AudioDeviceError) {
    let opened = try AudioPlaybackDevice(device: device, channels: channels, backend: backend)
    self.device = QueueBoundBox(
      opened, queue: DispatchQueue(label: "WCSMedia.SpeakerPlayoutSink", qos: .userInitiated))
    self.backend = opened.backend
    self.deviceName = device
    self.capacity = max(1, capacity)
  }

  /// The output the request names: `nil` for `.none`.
  /// - Throws: the `init` errors.
  public convenience init?(
    output: MediaConnectionRequest.AudioOutput, channels: Int
  ) throws(AudioDeviceError) {
    switch output {
    case .none: return nil
    case .defaultDevice: try self.init(device: nil, channels: channels)
    case .device(let name): try self.init(device: name, channels: channels)
    }
  }

  /// Queues one block (48 kHz; other rates are dropped and counted). Returns at once.
  public func play(_ frame: AudioFrame) {
    let start = state.withLock { state -> Bool in
      guard !state.closed, state.failure == nil else { return false }
      guard frame.sampleRate == PCMAudioFrame.sampleRate, frame.channels > 0 else {
        state.dropped += 1
        return false
      }
      state.pending.append(frame)
      if state.pending.count > capacity {
        state.pending.removeFirst()
        state.dropped += 1
      }
      guard !state.writing else { return false }
      state.writing = true
      return true
    }
    if start { queue.async { self.writePending() } }
  }

  /// Blocks dropped because the device fell behind (or had another sample rate).
  public var droppedFrames: Int { state.withLock { $0.dropped } }

  /// Blocks written to the device.
  public var writtenFrames: Int { state.withLock { $0.written } }

  /// The write error that ended playback, `nil` while it works.
  public var failure: AudioDeviceError? { state.withLock { $0.failure } }

  /// Stops playback and closes the device; returns once it is closed (after a write in
  /// progress, at most about one block). Idempotent; later blocks are ignored.
  public func close() {
    state.withLock {
      $0.closed = true
      $0.pending.removeAll()
    }
    queue.sync { device.value = nil }
  }

  private func writePending() {
    while true {
      let next = state.withLock { state -> AudioFrame? in
        guard !state.closed, !state.pending.isEmpty else {
          state.writing = false
          return nil
        }
        return state.pending.removeFirst()
      }
      guard let next else { return }
      guard let device = device.value else {
        state.withLock { $0.writing = false }
        return
      }
      do throws(AudioDeviceError) {
        try device.write(PCMAudioFrame(samples: next.samples, channels: next.channels))
        state.withLock { $0.written += 1 }
      } catch {
        self.device.value = nil
        state.withLock {
          $0.failure = error
          $0.pending.removeAll()
          $0.writing = false
        }
        return
      }
    }
  }
}
