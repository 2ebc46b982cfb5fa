import Synchronization
import WCSMediaSeam

/// The SDK facade (`FPWCSApi2`, api-surface.md §2.1): creates sessions, lists them, and reaches
/// the local media (devices, preview, audio manager) through the process-wide media engine
/// (`WCSApi2Environment.sharedMediaBackend`).
public enum FPWCSApi2 {
  private static let sessions = Mutex<[FPWCSApi2Session]>([])

  /// Creates a session (status New; call `connect()`) and adds it to `getSessions()`.
  /// - Throws: `WCSError.invalidOptions` when `urlServer` is missing or not `ws://`/`wss://`,
  ///   `.invalidArgument` when `custom` holds a non-JSON value.
  public static func createSession(_ options: FPWCSApi2SessionOptions) throws -> FPWCSApi2Session {
    let session = try FPWCSApi2Session(options)
    register(session)
    return session
  }

  /// Sessions created and not yet Disconnected/Failed (a session that connects again is listed
  /// again). The list holds them strongly, as the iOS samples rely on (`getSessions()[0]`).
  public static func getSessions() -> [FPWCSApi2Session] { sessions.withLock { $0 } }

  /// A listed session by id.
  public static func getSession(_ sessionID: String) -> FPWCSApi2Session? {
    sessions.withLock { list in list.first { $0.getSessionID() == sessionID } }
  }

  /// Cameras and microphones of the media engine; device `type` is `"video"` or `"audio"`.
  public static func getMediaDevices() -> FPWCSApi2MediaDeviceList {
    let list = FPWCSApi2MediaDeviceList()
    for device in WCSApi2Environment.sharedMediaBackend.devices() {
      let item = FPWCSApi2MediaDevice(
        type: device.kind.rawValue, deviceID: device.id, label: device.label)
      switch device.kind {
      case .audio: list.audio.append(item)
      case .video: list.video.append(item)
      }
    }
    return list
  }

  /// Capture sizes of the default camera as `"WIDTHxHEIGHT"` strings (iOS returns
  /// `AVCaptureSessionPreset` names, which the samples turn into such labels).
  public static func getSupportedVideoResolutions() -> [String] {
    WCSApi2Environment.sharedMediaBackend.supportedVideoFormats(deviceID: nil).map {
      "\($0.width)x\($0.height)"
    }
  }

  /// Opens local capture per `constraints` and renders the video into `display`, without
  /// publishing.
  /// - Throws: `WCSError.media` when a device cannot be opened.
  public static func getMediaAccess(
    _ constraints: FPWCSApi2MediaConstraints, display: (any VideoRenderer)?
  ) throws {
    let request = MediaRequestBuilder.connectionRequest(
      constraints, direction: .publish, display: display, transport: .fpwcsTransportUDP,
      stripCodecs: [])
    do throws(MediaBackendError) {
      try WCSApi2Environment.sharedMediaBackend.openLocalMedia(request, display: display)
    } catch {
      throw WCSError.media(error)
    }
  }

  /// Stops local capture bound to `display`; returns whether something was released.
  @discardableResult
  public static func releaseLocalMedia(_ display: (any VideoRenderer)?) -> Bool {
    WCSApi2Environment.sharedMediaBackend.releaseLocalMedia(display: display)
  }

  /// The process-wide audio manager.
  public static func getAudioManager() -> FPWCSApi2AudioManager { FPWCSApi2AudioManager.shared }

  static func register(_ session: FPWCSApi2Session) {
    sessions.withLock { list in
      if !list.contains(where: { $0 === session }) { list.append(session) }
    }
  }

  static func unregister(_ session: FPWCSApi2Session) {
    sessions.withLock { $0.removeAll { $0 === session } }
  }
}

/// The process-wide audio manager (`getAudioManager()`; iOS class name UNCONFIRMED).
public final class FPWCSApi2AudioManager: Sendable {
  static let shared = FPWCSApi2AudioManager()
  private let module = FPWCSApi2AudioModule()

  /// Silences all playback audio.
  public func muteAudio() { WCSApi2Environment.sharedMediaBackend.setPlayoutMuted(true) }
  /// Restores playback audio.
  public func unmuteAudio() { WCSApi2Environment.sharedMediaBackend.setPlayoutMuted(false) }
  /// With `true`, published audio comes from `getAudioModule().deliverRecordedData(_:)`.
  public func useAudioModule(_ use: Bool) {
    WCSApi2Environment.sharedMediaBackend.useExternalAudioSource(use)
  }
  /// The app-fed audio source.
  public func getAudioModule() -> FPWCSApi2AudioModule { module }
}

/// App-fed audio input (iOS class name UNCONFIRMED): PCM instead of ReplayKit sample buffers.
public final class FPWCSApi2AudioModule: Sendable {
  /// Feeds one block of PCM as published audio (when `useAudioModule(true)`).
  public func deliverRecordedData(_ frame: AudioFrame) {
    WCSApi2Environment.sharedMediaBackend.deliverExternalAudio(frame)
  }
}
