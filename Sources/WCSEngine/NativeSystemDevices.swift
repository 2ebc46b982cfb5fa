import WCSDevices
import WCSMediaSeam

/// The machine's real capture devices as the native backend sees them: V4L2 cameras
/// (`v4l2:/dev/videoN`) and PulseAudio/ALSA microphones (`pulse:<source>`, `alsa:<pcm>`).
///
/// The V4L2 layer is injectable so tests can list and stream from a scripted camera.
public struct NativeSystemDevices: Sendable {
  /// The V4L2 layer cameras are listed and opened with (`V4L2KernelIO` for real devices).
  public var videoIO: any V4L2DeviceIO
  /// Which sound system microphones are listed and opened on.
  public var audioBackend: AudioBackendPreference
  /// Whether microphones are listed at all (listing runs `pactl`, which can take up to
  /// `audioListingTimeout` seconds when a sound server hangs).
  public var listsMicrophones: Bool
  /// Seconds the microphone listing may take.
  public var audioListingTimeout: Double

  /// Real devices: the kernel's V4L2, PulseAudio then ALSA.
  public init(
    videoIO: any V4L2DeviceIO = V4L2KernelIO(), audioBackend: AudioBackendPreference = .automatic,
    listsMicrophones: Bool = true, audioListingTimeout: Double = 3
  ) {
    self.videoIO = videoIO
    self.audioBackend = audioBackend
    self.listsMicrophones = listsMicrophones
    self.audioListingTimeout = audioListingTimeout
  }

  /// Every V4L2 camera (id `v4l2:<node>`, label the driver's card name) and every microphone
  /// that is not a PulseAudio monitor (id `pulse:<name>` or `alsa:<name>`). Devices that
  /// cannot be queried are left out.
  func devices() -> [CaptureDevice] {
    let cameras = V4L2CameraEnumerator(io: videoIO).list().cameras.map {
      CaptureDevice(
        kind: .video, id: NativeMediaDevices.v4l2Prefix + $0.path, label: $0.label)
    }
    guard listsMicrophones else { return cameras }
    let audio = AudioDeviceEnumerator.list(backend: audioBackend, timeout: audioListingTimeout)
    let microphones = audio.microphones.filter { !$0.isMonitor }.map {
      CaptureDevice(
        kind: .audio, id: NativeMediaDevices.microphoneID($0.id, backend: $0.backend),
        label: $0.label)
    }
    return cameras + microphones
  }
}
