import Synchronization

/// A capture device as the media engine knows it: a camera or a microphone (real or virtual).
public struct CaptureDevice: Sendable, Equatable, Hashable {
  /// What the device captures.
  public enum Kind: String, Sendable {
    /// A microphone (ALSA/PulseAudio, a tone generator, a WAV file).
    case audio
    /// A camera (V4L2, a test pattern, a Y4M file, the screen).
    case video
  }
  /// Audio or video.
  public var kind: Kind
  /// Stable unique id (e.g. `/dev/video0`, `virtual:test-pattern`).
  public var id: String
  /// Human-readable name.
  public var label: String

  /// Creates a device description.
  public init(kind: Kind, id: String, label: String) {
    self.kind = kind
    self.id = id
    self.label = label
  }
}

/// A capture format: frame size in pixels (the iOS `AVCaptureDevice.Format` stand-in).
public struct VideoCaptureFormat: Sendable, Equatable, Hashable {
  /// Width in pixels.
  public var width: Int
  /// Height in pixels.
  public var height: Int

  /// Creates a format.
  public init(width: Int, height: Int) {
    self.width = width
    self.height = height
  }
}

/// The base class of app-supplied video sources, standing in for WebRTC's `RTCVideoCapturer`
/// (what `FPWCSApi2MediaConstraints(audio:videoCapturer:)` takes on iOS). A subclass produces I420
/// frames and hands each to `deliver(_:)`; the media pipeline that publishes it installs a frame
/// handler. Subclass it and adopt `FPWCSVideoCapturer` to let the SDK start, stop and switch it.
///
/// Not `Sendable`, so that app subclasses compile as they do on iOS; the frame handler is guarded
/// by a `Mutex`, so `deliver(_:)` and `setFrameHandler(_:)` may be called from any thread.
open class RTCVideoCapturer {
  private let handler = Mutex<(@Sendable (VideoFrame) -> Void)?>(nil)

  /// Creates a capturer with no consumer yet.
  public init() {}

  /// Installs (or with `nil` removes) the consumer of delivered frames. Called by the media
  /// pipeline when publishing starts and ends.
  public final func setFrameHandler(_ newHandler: (@Sendable (VideoFrame) -> Void)?) {
    handler.withLock { $0 = newHandler }
  }

  /// Hands one frame to the current consumer; dropped when nothing consumes frames. Call from any
  /// thread, one frame at a time.
  public final func deliver(_ frame: VideoFrame) {
    let current = handler.withLock { $0 }
    current?(frame)
  }
}

/// Hooks the SDK calls on a custom capturer where it would otherwise drive the camera
/// (api-surface.md §2.11): start with a device and format, stop, and orientation lock
/// (a no-op on Linux, kept for source compatibility).
public protocol FPWCSVideoCapturer: AnyObject {
  /// Starts capturing from `device` at `format` and `fps` frames per second (`nil` = capturer's
  /// own choice). Also called with the other camera on `switchCamera()`.
  func startCapture(with device: CaptureDevice?, format: VideoCaptureFormat?, fps: Int)
  /// Stops capturing; no frames are delivered afterwards.
  func stopCapture()
  /// Freezes the capture orientation.
  func lockCameraOrientation()
  /// Lets the capture orientation follow the device again.
  func unlockCameraOrientation()
}
