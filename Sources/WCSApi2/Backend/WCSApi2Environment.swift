import Synchronization
import WCSEngine
import WCSMediaSeam
import WCSTransport

/// The default signalling transport: the libwebsockets client (`ws://` and `wss://`, certificates
/// verified unless the session's `connectOptions` opt out).
func makeDefaultSignalingTransport() -> any SignalingTransport {
  WebSocketTransport()
}

/// The default media engine: WCSMedia's native WebRTC stack (virtual camera and microphone,
/// file sources, VP8/Opus over DTLS-SRTP).
func makeDefaultMediaBackend() -> any MediaBackend {
  NativeMediaBackend.shared
}

/// Process-wide seams: where sessions get their signalling transport and media engine when the
/// options do not give one. Apps and tests may replace the factories; the defaults are
/// `makeDefaultSignalingTransport()` and `makeDefaultMediaBackend()`.
public enum WCSApi2Environment {
  private struct State {
    var transportFactory: @Sendable () -> any SignalingTransport = {
      makeDefaultSignalingTransport()
    }
    var mediaBackendFactory: @Sendable () -> any MediaBackend = { makeDefaultMediaBackend() }
    var sharedBackend: (any MediaBackend)?
  }

  private static let state = Mutex(State())

  /// Makes the transport of a session whose options give none (one per `connect()`).
  public static var transportFactory: @Sendable () -> any SignalingTransport {
    get { state.withLock { $0.transportFactory } }
    set { state.withLock { $0.transportFactory = newValue } }
  }

  /// Makes the process-wide media engine (called once, on first use). Setting it drops the
  /// engine made by the previous factory.
  public static var mediaBackendFactory: @Sendable () -> any MediaBackend {
    get { state.withLock { $0.mediaBackendFactory } }
    set {
      state.withLock {
        $0.mediaBackendFactory = newValue
        $0.sharedBackend = nil
      }
    }
  }

  /// Puts both factories back to the package defaults.
  public static func reset() {
    state.withLock { $0 = State() }
  }

  /// A new transport from `transportFactory`.
  public static func makeSignalingTransport() -> any SignalingTransport {
    transportFactory()
  }

  /// The process-wide media engine (devices, local preview, default for sessions).
  public static var sharedMediaBackend: any MediaBackend {
    state.withLock { s in
      if let backend = s.sharedBackend { return backend }
      let backend = s.mediaBackendFactory()
      s.sharedBackend = backend
      return backend
    }
  }
}

/// The transport used until a WebSocket transport is installed: `connect` reports `.failed`.
public final class UnavailableSignalingTransport: SignalingTransport {
  /// Creates the placeholder.
  public init() {}

  /// Reports `.failed(.connectionFailed)` explaining that no WebSocket transport is installed.
  public func connect(
    to url: String, options: SignalingConnectOptions,
    handler: @escaping @Sendable (SignalingEvent) -> Void
  ) {
    handler(
      .failed(
        .connectionFailed(
          reason: "no WebSocket transport installed (set WCSApi2Environment.transportFactory)")))
  }

  /// Never connected: `.failure(.notConnected)`.
  @discardableResult public func send(_ text: String) -> Result<Void, SignalingTransportError> {
    .failure(.notConnected)
  }

  /// Nothing to close.
  public func close(code: Int, reason: String) {}
}
