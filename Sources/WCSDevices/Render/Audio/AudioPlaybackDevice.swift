import Synchronization
import WCSCodecs

/// A speaker on PulseAudio (`pa_simple` playback stream) or ALSA that plays `PCMAudioFrame`s
/// (48 kHz S16). Frames with a different channel count than the device are converted (mono is
/// copied to both channels; stereo is averaged to mono).
public final class AudioPlaybackDevice: Sendable {
  /// The sound system the device was opened on.
  public let backend: AudioBackend
  /// The sink name (PulseAudio) or PCM name (ALSA); nil for the default device.
  public let device: String?
  /// 1 or 2.
  public let channels: Int

  /// Writes from several threads are serialised by this lock.
  private let stream: Mutex<any PCMDeviceStream>

  /// Opens a speaker.
  /// - Parameters:
  ///   - device: PulseAudio sink name or ALSA PCM name; nil for the default.
  ///   - channels: 1 or 2 (anything else means 1).
  ///   - backend: `.automatic` tries PulseAudio, then ALSA.
  ///   - applicationName: the client name PulseAudio shows for this stream.
  /// - Throws: `AudioDeviceError.noSoundServer`, `.deviceNotFound`, `.openFailed`.
  public init(
    device: String? = nil, channels: Int = 2, backend: AudioBackendPreference = .automatic,
    applicationName: String = "WCSApi2"
  ) throws(AudioDeviceError) {
    let opened = try openPCMDeviceStream(
      direction: .playback, device: device, channels: channels, preference: backend,
      applicationName: applicationName)
    self.backend = opened.backend
    self.device = device
    self.channels = channels == 2 ? 2 : 1
    self.stream = Mutex(opened)
  }

  /// Queues a frame for playback; blocks while the device buffer (about 60 ms) is full.
  /// - Throws: `AudioDeviceError.writeFailed`.
  public func write(_ frame: PCMAudioFrame) throws(AudioDeviceError) {
    let samples = Self.convert(frame, toChannels: channels)
    try stream.withLock { (s: inout any PCMDeviceStream) throws(AudioDeviceError) in
      try s.write(samples)
    }
  }

  /// Blocks until everything written has been played.
  public func drain() {
    stream.withLock { $0.drain() }
  }

  /// Interleaved samples of `frame` with `channels` channels.
  package static func convert(_ frame: PCMAudioFrame, toChannels channels: Int) -> [Int16] {
    if frame.channels == channels { return frame.samples }
    let count = frame.samplesPerChannel
    if channels == 2 {
      var out = [Int16](repeating: 0, count: 2 * count)
      for i in 0..<count {
        out[2 * i] = frame.samples[i]
        out[2 * i + 1] = frame.samples[i]
      }
      return out
    }
    var out = [Int16](repeating: 0, count: count)
    for i in 0..<count {
      let sum = Int(frame.samples[2 * i]) + Int(frame.samples[2 * i + 1])
      out[i] = Int16(sum / 2)
    }
    return out
  }
}
