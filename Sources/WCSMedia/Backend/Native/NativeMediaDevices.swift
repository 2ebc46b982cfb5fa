/// Device ids the native backend understands: the always-present virtual devices and file
/// sources (`file:<path>`, any file FFmpeg reads; its video and audio streams are published).
public enum NativeMediaDevices {
  /// Id of the virtual camera (a moving test pattern carrying its frame number,
  /// `VirtualCamera`).
  public static let virtualCameraID = "virtual:camera"
  /// Id of the virtual microphone (a 440 Hz tone, `VirtualMicrophone`).
  public static let virtualMicrophoneID = "virtual:microphone"
  /// Prefix of file source ids: `file:/path/to/clip.mp4`.
  public static let filePrefix = "file:"

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
