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

  public func devices() -> [CaptureDevice] { [] }

  public func makeConnection(
    _ request: MediaConnectionRequest,
    onStateChange: @escaping @Sendable (MediaConnectionState) -> Void
  ) throws(MediaBackendError) -> any MediaConnection {
    throw .unavailable(reason)
  }

  public func openLocalMedia(_ request: MediaConnectionRequest, display: (any VideoRenderer)?)
    throws(MediaBackendError)
  {
    throw .unavailable(reason)
  }

  public func releaseLocalMedia(display: (any VideoRenderer)?) -> Bool { false }
  public func setPlayoutMuted(_ muted: Bool) {}
  public func useExternalAudioSource(_ enabled: Bool) {}
  public func deliverExternalAudio(_ frame: AudioFrame) {}
}
