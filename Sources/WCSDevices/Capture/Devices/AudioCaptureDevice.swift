import Dispatch
import Foundation
import Synchronization
import WCSCodecs

/// A microphone on PulseAudio (`pa_simple` record stream) or ALSA, delivering 20 ms
/// `PCMAudioFrame`s (48 kHz, S16, mono or stereo) from a capture thread.
///
/// Timestamps count samples per channel from 0 at `start` (48 kHz, RFC 7587 §4.1), so
/// consecutive frames differ by 960.
public final class AudioCaptureDevice: Sendable {
  /// What the capture thread reports; nothing follows `.failed`.
  public enum Event: Sendable {
    /// 20 ms of audio.
    case frame(PCMAudioFrame)
    /// Reading failed (device removed, server gone); capture has ended.
    case failed(AudioDeviceError)
  }

  /// The sound system the device was opened on.
  public let backend: AudioBackend
  /// The source name (PulseAudio) or PCM name (ALSA); nil for the default device.
  public let device: String?
  /// 1 or 2.
  public let channels: Int

  /// The stream is touched only by whoever holds this lock: the capture thread while running,
  /// `readFrame` callers otherwise.
  private let stream: Mutex<any PCMDeviceStream>
  private let nextTimestamp = Mutex<UInt32>(0)
  private let captureThread = CaptureThread()

  /// Opens a microphone.
  /// - Parameters:
  ///   - device: PulseAudio source name (e.g. `alsa_input.usb-...` or `sink.monitor`) or ALSA PCM
  ///     name (e.g. `hw:1,0`); nil for the default.
  ///   - channels: 1 or 2 (anything else means 1).
  ///   - backend: `.automatic` tries PulseAudio, then ALSA.
  ///   - applicationName: the client name PulseAudio shows for this stream.
  /// - Throws: `AudioDeviceError.noSoundServer`, `.deviceNotFound`, `.openFailed`.
  public init(
    device: String? = nil, channels: Int = 1, backend: AudioBackendPreference = .automatic,
    applicationName: String = "WCSApi2"
  ) throws(AudioDeviceError) {
    let opened = try openPCMDeviceStream(
      direction: .capture, device: device, channels: channels, preference: backend,
      applicationName: applicationName)
    self.backend = opened.backend
    self.device = device
    self.channels = channels == 2 ? 2 : 1
    self.stream = Mutex(opened)
  }

  deinit { stop() }

  /// Reads the next 20 ms (blocks about 20 ms). Use either this or `start`, not both.
  /// - Throws: `AudioDeviceError.readFailed`.
  public func readFrame() throws(AudioDeviceError) -> PCMAudioFrame {
    var samples = [Int16](repeating: 0, count: PCMAudioFrame.samplesPer20ms * channels)
    try stream.withLock { (s: inout any PCMDeviceStream) throws(AudioDeviceError) in
      try s.read(into: &samples)
    }
    let timestamp = nextTimestamp.withLock { t in
      defer { t &+= UInt32(PCMAudioFrame.samplesPer20ms) }
      return t
    }
    return PCMAudioFrame(samples: samples, channels: channels, timestamp: timestamp)
  }

  /// Starts the capture thread; `onEvent` is called on it every 20 ms. Does nothing if running.
  /// The thread keeps the device alive until `stop()` is called or capture fails.
  public func start(onEvent: @escaping @Sendable (Event) -> Void) {
    guard captureThread.claim() else { return }
    captureThread.run(name: "AudioCaptureDevice") { [self] in
      while !captureThread.stopRequested {
        do throws(AudioDeviceError) {
          onEvent(.frame(try readFrame()))
        } catch {
          onEvent(.failed(error))
          break
        }
      }
    }
  }

  /// Stops the capture thread, waiting up to 2 s for it (not at all when called from `onEvent`).
  public func stop() {
    captureThread.stop()
  }
}
