/// The backend used until a real media engine is installed: it has no devices and fails every
/// request with `.unavailable`, so an app learns why instead of hanging.
public final class UnavailableMediaBackend: MediaBackend {
  /// The reason reported by every failure.
  public let reason: String

  /// Creates a backend failing with `reason`.
  public init(
    reason: String = "no media engine installed (set WCSApi2Environment.mediaBackendFactory)"
  ) {
    self.reason = reason
  }

  /// No devices.
  public func devices() -> [CaptureDevice] { [] }

  /// No formats.
  public func supportedVideoFormats(deviceID: String?) -> [VideoCaptureFormat] { [] }

  /// Throws `.unavailable(reason)`.
  public func makeConnection(
    _ request: MediaConnectionRequest,
    onStateChange: @escaping @Sendable (MediaConnectionState) -> Void
  ) throws(MediaBackendError) -> any MediaConnection {
    throw .unavailable(reason)
  }

  /// Throws `.unavailable(reason)`.
  public func openLocalMedia(_ request: MediaConnectionRequest, display: (any VideoRenderer)?)
    throws(MediaBackendError)
  {
    throw .unavailable(reason)
  }

  /// Nothing to release: `false`.
  public func releaseLocalMedia(display: (any VideoRenderer)?) -> Bool { false }
  /// Nothing plays: ignored.
  public func setPlayoutMuted(_ muted: Bool) {}
  /// Nothing is captured: ignored.
  public func useExternalAudioSource(_ enabled: Bool) {}
  /// Dropped.
  public func deliverExternalAudio(_ frame: AudioFrame) {}
}
