import WCSMediaSeam

/// Audio part of the media constraints (`FPWCSApi2AudioConstraints`, api-surface.md §2.9).
public final class FPWCSApi2AudioConstraints {
  /// Opus in-band FEC when publishing.
  public var useFEC: Bool = false
  /// Stereo Opus when publishing.
  public var useStereo: Bool = false
  /// Publish audio bitrate in bits per second, 0 = default.
  public var bitrate: Int = 0
  /// Microphone id (`FPWCSApi2MediaDevice.deviceID`); `nil` = default (Linux addition).
  public var deviceID: String?

  /// Default audio: mono, no FEC, default bitrate, default microphone.
  public init() {}
}

/// Video part of the media constraints (`FPWCSApi2VideoConstraints`, api-surface.md §2.9).
public final class FPWCSApi2VideoConstraints {
  /// Camera id (`FPWCSApi2MediaDevice.deviceID`); `nil` = default camera.
  public var deviceID: String?
  /// Capture (publish) or requested (play) width bounds in pixels, 0 = unconstrained.
  public var minWidth: Int = 0
  /// See `minWidth`.
  public var maxWidth: Int = 0
  /// Height bounds in pixels, 0 = unconstrained.
  public var minHeight: Int = 0
  /// See `minHeight`.
  public var maxHeight: Int = 0
  /// Capture frame-rate bounds in frames per second, 0 = unconstrained.
  public var minFrameRate: Int = 0
  /// See `minFrameRate`.
  public var maxFrameRate: Int = 0
  /// Play: bitrate asked from the server transcoder (kbit/s), 0 = as published.
  public var bitrate: Int = 0
  /// Publish encoder bitrate bounds in kbit/s, 0 = no limit (sent as `minBitrate`/`maxBitrate`).
  public var minBitrate: Int = 0
  /// See `minBitrate`.
  public var maxBitrate: Int = 0
  /// Play: quality asked from the server transcoder, 0...100 (0 = as published).
  public var quality: Int = 0
  /// App-supplied video source replacing the camera (set by `init(audio:videoCapturer:)`).
  public var videoCapturer: RTCVideoCapturer?

  /// Unconstrained video from the default camera.
  public init() {}
}

/// What to send (publish) or receive (play): `FPWCSApi2MediaConstraints` (api-surface.md §2.9).
/// `nil` audio/video means none of it.
public final class FPWCSApi2MediaConstraints {
  /// Audio constraints; `nil` = no audio.
  public var audio: FPWCSApi2AudioConstraints?
  /// Video constraints; `nil` = no video.
  public var video: FPWCSApi2VideoConstraints?

  /// Empty constraints (both `nil`), to be filled in.
  public init() {}

  /// Default audio and/or video. Imported as `init!` on iOS, so `(audio:video:)!` compiles.
  public init!(audio: Bool, video: Bool) {
    self.audio = audio ? FPWCSApi2AudioConstraints() : nil
    self.video = video ? FPWCSApi2VideoConstraints() : nil
  }

  /// Audio flag plus a fixed capture size in pixels.
  public convenience init!(audio: Bool, videoWidth: Int, videoHeight: Int) {
    self.init(audio: audio, video: true)
    self.video?.minWidth = videoWidth
    self.video?.maxWidth = videoWidth
    self.video?.minHeight = videoHeight
    self.video?.maxHeight = videoHeight
  }

  /// Audio flag plus a fixed capture size in pixels and frame rate in frames per second.
  public convenience init!(audio: Bool, videoWidth: Int, videoHeight: Int, videoFps: Int) {
    self.init(audio: audio, videoWidth: videoWidth, videoHeight: videoHeight)
    self.video?.minFrameRate = videoFps
    self.video?.maxFrameRate = videoFps
  }

  /// Audio flag plus video from an app-supplied capturer instead of a camera.
  public convenience init!(audio: Bool, videoCapturer: RTCVideoCapturer?) {
    self.init(audio: audio, video: videoCapturer != nil)
    self.video?.videoCapturer = videoCapturer
  }
}
