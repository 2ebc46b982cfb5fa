import Dispatch
import WCSDevices
import WCSMediaSeam
import WCSProtocols

/// A V4L2 camera (`v4l2:<node>`) feeding a video track: opened at the track's size and frame
/// rate when the connection is made (so a missing or busy camera fails the offer), streamed
/// from `start`; pictures of another size are scaled by the track. A lost camera or a failed
/// stream calls `onFailure` with the reason, once.
final class V4L2CameraSource: NativeCaptureSource {
  private let camera: V4L2Camera
  private let track: VideoSendTrack
  private let clock: NativeMediaClock
  private let onFailure: @Sendable (String) -> Void

  /// Opens the camera; throws `.deviceUnavailable` with the V4L2 reason (no device, busy,
  /// permission, no convertible format).
  init(
    path: String, io: any V4L2DeviceIO, track: VideoSendTrack, clock: NativeMediaClock,
    onFailure: @escaping @Sendable (String) -> Void
  ) throws(MediaBackendError) {
    do {
      camera = try V4L2Camera(
        path: path, width: track.parameters.width, height: track.parameters.height,
        framesPerSecond: Double(track.parameters.frameRate), io: io)
    } catch {
      throw .deviceUnavailable("camera \(path): \(error)")
    }
    self.track = track
    self.clock = clock
    self.onFailure = onFailure
  }

  func start() {
    let path = camera.path
    do {
      try camera.start { [track, clock, onFailure] event in
        switch event {
        case .frame(let image, _, _):
          let timestamp = clock.videoTimestamp()
          track.queue.async { track.encode(image, timestamp: timestamp) }
        case .droppedFrame:
          break
        case .deviceLost(let lost):
          onFailure("camera \(lost) was lost")
        case .failed(let error):
          onFailure("camera \(path) failed: \(error)")
        }
      }
    } catch {
      onFailure("camera \(path) could not stream: \(error)")
    }
  }

  func stop() { camera.stop() }
}

/// A microphone (`pulse:<source>`, `alsa:<pcm>`) feeding an audio track with 20 ms frames
/// from its capture thread. Opened when the connection is made; a read failure calls
/// `onFailure`.
final class MicrophoneSource: NativeCaptureSource {
  private let device: AudioCaptureDevice
  private let track: AudioSendTrack
  private let onFailure: @Sendable (String) -> Void

  /// Opens the microphone; throws `.deviceUnavailable` with the sound system's reason.
  init(
    name: String, backend: AudioBackendPreference, track: AudioSendTrack,
    onFailure: @escaping @Sendable (String) -> Void
  ) throws(MediaBackendError) {
    do {
      device = try AudioCaptureDevice(device: name, channels: track.channels, backend: backend)
    } catch {
      throw .deviceUnavailable("microphone \(name): \(error)")
    }
    self.track = track
    self.onFailure = onFailure
  }

  func start() {
    device.start { [track, onFailure, device] event in
      switch event {
      case .frame(let frame):
        // A device hands a block over once it is recorded: its first sample is a block old.
        let capturedAt = MediaInstant.now() - .seconds(frame.duration)
        track.queue.async {
          track.append(frame.samples, sourceChannels: frame.channels, capturedAt: capturedAt)
        }
      case .failed(let error):
        onFailure("microphone \(device.device ?? "default") failed: \(error)")
      }
    }
  }

  func stop() { device.stop() }
}
