import WCSDevices
import WCSMediaSeam

/// Device ids the native backend understands: the always-present virtual devices, file
/// sources (`file:<path>`, any file FFmpeg reads; its video and audio streams are published),
/// V4L2 cameras (`v4l2:/dev/videoN`) and microphones (`pulse:<source>`, `alsa:<pcm>`).
public enum NativeMediaDevices {
  /// Id of the virtual camera (a moving test pattern carrying its frame number,
  /// `VirtualCamera`).
  public static let virtualCameraID = "virtual:camera"
  /// Id of the virtual microphone (a 440 Hz tone, `VirtualMicrophone`).
  public static let virtualMicrophoneID = "virtual:microphone"
  /// Prefix of file source ids: `file:/path/to/clip.mp4`.
  public static let filePrefix = "file:"
  /// Prefix of V4L2 camera ids: `v4l2:/dev/video0`.
  public static let v4l2Prefix = "v4l2:"
  /// Prefix of PulseAudio microphone ids: `pulse:alsa_input.usb-...`.
  public static let pulseAudioPrefix = "pulse:"
  /// Prefix of ALSA microphone ids: `alsa:hw:1,0`.
  public static let alsaPrefix = "alsa:"

  /// The node of a V4L2 camera id (`v4l2:/dev/video0` → `/dev/video0`), `nil` for other ids.
  public static func v4l2Path(fromID id: String) -> String? {
    guard id.hasPrefix(v4l2Prefix) else { return nil }
    let path = String(id.dropFirst(v4l2Prefix.count))
    return path.isEmpty ? nil : path
  }

  /// The id of a microphone named `name` on `backend`.
  public static func microphoneID(_ name: String, backend: AudioBackend) -> String {
    (backend == .pulseAudio ? pulseAudioPrefix : alsaPrefix) + name
  }

  /// The sound system and source name of a microphone id, `nil` for other ids.
  public static func microphone(fromID id: String) -> (
    backend: AudioBackendPreference, name: String
  )? {
    for (prefix, backend) in [
      (pulseAudioPrefix, AudioBackendPreference.pulseAudio), (alsaPrefix, .alsa),
    ] where id.hasPrefix(prefix) {
      let name = String(id.dropFirst(prefix.count))
      return name.isEmpty ? nil : (backend, name)
    }
    return nil
  }

  /// The virtual camera as a device.
  public static let virtualCamera = CaptureDevice(
    kind: .video, id: virtualCameraID, label: "Virtual Camera (test pattern)")
  /// The virtual microphone as a device.
  public static let virtualMicrophone = CaptureDevice(
    kind: .audio, id: virtualMicrophoneID, label: "Virtual Microphone (440 Hz tone)")

  /// The id of the file source at `path` (`file:` + path).
  public static func fileSourceID(path: String) -> String { filePrefix + path }

  /// The path of a file source id, `nil` for other ids.
  public static func filePath(fromID id: String) -> String? {
    guard id.hasPrefix(filePrefix) else { return nil }
    let path = String(id.dropFirst(filePrefix.count))
    return path.isEmpty ? nil : path
  }

  /// The devices of one file source: a camera and a microphone with the same id, labelled with
  /// the file name.
  public static func fileDevices(path: String) -> [CaptureDevice] {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    let id = fileSourceID(path: path)
    return [
      CaptureDevice(kind: .video, id: id, label: "File \(name) (video)"),
      CaptureDevice(kind: .audio, id: id, label: "File \(name) (audio)"),
    ]
  }
}
