import Synchronization
import WCSMedia
import WCSTransport

/// Process-wide seams: where sessions get their signalling transport and media engine when the
/// options do not give one. The integrator points `transportFactory` at `WebSocketTransport()`
/// and `mediaBackendFactory` at the native engine.
public enum WCSApi2Environment {
  private struct State {
    var transportFactory: @Sendable () -> any SignalingTransport = {
      UnavailableSignalingTransport()
    }
    var mediaBackendFactory: @Sendable () -> any MediaBackend = { UnavailableMediaBackend() }
    var sharedBackend: (any MediaBackend)?
  }

  private static let state = Mutex(State())

  /// Makes the transport of a session whose options give none. Default: a transport that fails
  /// with "no WebSocket transport installed".
  public static var transportFactory: @Sendable () -> any SignalingTransport {
    get { state.withLock { $0.transportFactory } }
    set { state.withLock { $0.transportFactory = newValue } }
  }

  /// Makes the process-wide media engine (called once, on first use). Setting it drops the
  /// engine made by the previous factory. Default: `UnavailableMediaBackend`.
  public static var mediaBackendFactory: @Sendable () -> any MediaBackend {
    get { state.withLock { $0.mediaBackendFactory } }
    set {
      state.withLock {
        $0.mediaBackendFactory = newValue
        $0.sharedBackend = nil
      }
    }
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

  public func connect(
    to url: String, options: SignalingConnectOptions,
    handler: @escaping @Sendable (SignalingEvent) -> Void
  ) {
    handler(
      .failed(
        .connectionFailed(
          reason: "no WebSocket transport installed (set WCSApi2Environment.transportFactory)")))
  }

  @discardableResult public func send(_ text: String) -> Result<Void, SignalingTransportError> {
    .failure(.notConnected)
  }

  public func close(code: Int, reason: String) {}
}
