import Foundation

/// What a signalling transport reports to its owner, in the order it happens.
public enum SignalingEvent: Sendable, Equatable {
  /// The WebSocket upgrade completed; `send(_:)` may be used from now on.
  case opened
  /// One complete text message (fragmented frames already reassembled).
  case text(String)
  /// The connection closed. `code`: the WebSocket close code (RFC 6455 §7.4; 1006 when the
  /// socket went away without a close frame). `reason`: the close frame's reason text.
  case closed(code: Int, reason: String)
  /// The connection could not be opened or broke; no further events follow.
  case failed(SignalingTransportError)
}

/// Why a signalling transport failed.
public enum SignalingTransportError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The URL is not a `ws://` or `wss://` URL with a host.
  case invalidURL(String)
  /// No connection within the connect timeout (seconds).
  case connectTimeout(seconds: Double)
  /// The TCP connection, TLS handshake (certificate verification included) or WebSocket upgrade
  /// failed; `reason` is the library's explanation.
  case connectionFailed(reason: String)
  /// `send(_:)` was called before `opened` or after the connection ended.
  case notConnected

  /// A one-line explanation for logs and `WCSError` messages.
  public var description: String {
    switch self {
    case .invalidURL(let url): return "invalid WebSocket URL '\(url)'"
    case .connectTimeout(let seconds): return "no connection within \(seconds) s"
    case .connectionFailed(let reason): return "connection failed: \(reason)"
    case .notConnected: return "not connected"
    }
  }
}

/// How a client transport connects: TLS policy, extra headers and the timeout.
public struct SignalingConnectOptions: Sendable, Equatable {
  /// Extra HTTP headers on the WebSocket upgrade request (name → value). An `Authorization:
  /// Basic` header is added automatically when the URL carries `user:password@`.
  public var headers: [String: String]
  /// Seconds to wait for the upgrade to complete before failing with `.connectTimeout`.
  public var connectTimeout: Double
  /// `wss://` only: verify the server certificate against the system CA store (default `true`).
  /// Setting this to `false` accepts self-signed and mismatched certificates; use for tests only.
  public var verifyCertificates: Bool
  /// `wss://` only: a PEM file of CA certificates to trust instead of the system store.
  public var caFile: String?

  /// Creates options; defaults: no headers, 10 s timeout, certificates verified, system CAs.
  public init(
    headers: [String: String] = [:], connectTimeout: Double = 10, verifyCertificates: Bool = true,
    caFile: String? = nil
  ) {
    self.headers = headers
    self.connectTimeout = connectTimeout
    self.verifyCertificates = verifyCertificates
    self.caFile = caFile
  }
}

/// A bidirectional text-message channel to a WCS server (a WebSocket in production, an in-memory
/// script in tests). Implementations deliver events on their own thread, one at a time and in
/// order; `send` and `close` may be called from any thread.
public protocol SignalingTransport: AnyObject, Sendable {
  /// Starts connecting to `url` (`ws://` or `wss://`). Events go to `handler` until `closed` or
  /// `failed`; invalid URLs are reported as `.failed(.invalidURL)` through the handler.
  func connect(
    to url: String, options: SignalingConnectOptions,
    handler: @escaping @Sendable (SignalingEvent) -> Void)
  /// Queues one text message. Messages are sent in the order given. Dropped (and reported with
  /// `.notConnected`) when the transport is not open.
  @discardableResult func send(_ text: String) -> Result<Void, SignalingTransportError>
  /// Starts a clean close with a close code (RFC 6455 §7.4, default 1000) and a reason.
  func close(code: Int, reason: String)
}

extension SignalingTransport {
  /// Closes normally (code 1000).
  public func close() { close(code: 1000, reason: "") }
}
