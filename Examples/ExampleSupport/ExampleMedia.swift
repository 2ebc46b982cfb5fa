import FPWCSApi2Swift
import Foundation
import WCSMedia

/// Media sources beyond the iOS API, for the Linux examples: media files as cameras and
/// microphones (the native engine's file sources, device id `file:<path>`).
public enum ExampleMedia {
  /// The device id publishing the file at `path` (its video as a camera, its audio as a
  /// microphone).
  public static func fileDeviceID(_ path: String) -> String {
    NativeMediaDevices.fileSourceID(path: path)
  }

  /// Lists `paths` in `getMediaDevices()` (so `switchCamera()` can move to them). Returns
  /// `false` when the SDK's engine is not the native one.
  @discardableResult
  public static func addFileSources(_ paths: [String]) -> Bool {
    guard let native = WCSApi2Environment.sharedMediaBackend as? NativeMediaBackend else {
      return false
    }
    for path in paths { native.addFileSource(path: path) }
    return true
  }

  /// Opens `path` as a media file (FFmpeg), so a `--file` that is missing or not media fails
  /// the run at once instead of only when a switch to it is tried.
  /// - Throws: `ExampleError.failed` with FFmpeg's reason.
  public static func checkMediaFile(_ path: String) throws(ExampleError) {
    do {
      _ = try MediaFileReader(path: path, decodeVideo: false, decodeAudio: false)
    } catch {
      throw .failed("cannot use \(path): \(error)")
    }
  }

  /// `true` for the always-present virtual devices and file sources (not real hardware).
  public static func isSynthetic(_ deviceID: String) -> Bool {
    deviceID.hasPrefix("virtual:") || NativeMediaDevices.filePath(fromID: deviceID) != nil
  }

  /// The duration of a media file in seconds, `nil` when unknown or unreadable.
  public static func fileDuration(_ path: String) -> Double? {
    (try? MediaFileReader(path: path, decodeVideo: false, decodeAudio: false))?.duration
  }

  /// Which kinds of stream a media file has (`nil` when it cannot be read), so that an example
  /// asks only for tracks the file can give (a video-only file has no microphone to open).
  public static func fileTracks(_ path: String) -> (video: Bool, audio: Bool)? {
    guard let info = (try? MediaFileReader(path: path))?.info else { return nil }
    return (info.video != nil, info.audio != nil)
  }

  /// Points `constraints` at the file at `path` (video as the camera, audio as the microphone)
  /// and leaves out the kind the file does not have, so a video-only clip publishes video only
  /// instead of failing on a microphone it cannot open.
  public static func useFile(_ path: String, in constraints: FPWCSApi2MediaConstraints?) {
    constraints?.video?.deviceID = fileDeviceID(path)
    constraints?.audio?.deviceID = fileDeviceID(path)
    guard let tracks = fileTracks(path), tracks.video || tracks.audio else { return }
    if !tracks.audio { constraints?.audio = nil }
    if !tracks.video { constraints?.video = nil }
  }

  /// Creates `directory` (and parents) when missing.
  public static func makeDirectory(_ directory: String) throws(ExampleError) {
    do {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)
    } catch {
      throw .failed("cannot create \(directory): \(error)")
    }
  }
}
