import Foundation
import Synchronization

/// The production `SignalingTransport`: a WebSocket client (RFC 6455) on libwebsockets.
///
/// Each `connect` opens one connection with its own libwebsockets context and service thread;
/// the thread and context are released after the terminal event (`closed` or `failed`, exactly
/// one per connection). Events reach the handler on a private serial queue, in order. `ws://`
/// and `wss://` URLs; port from the URL, else 80/443; path and query kept (default `/`);
/// `user:password@` in the URL becomes `Authorization: Basic` (RFC 7617). Messages of any size
/// up to 64 MiB both ways; outgoing ones longer than 64 KiB go out as continuation frames.
public final class WebSocketTransport: SignalingTransport {
  private let current = Mutex<WebSocketClientConnection?>(nil)
  private let errors = DispatchQueue(label: "WCSTransport.WebSocket.errors")

  /// Creates an idle transport; call `connect(to:options:handler:)`.
  public init() {}

  deinit {
    current.withLock { $0 }?.close(code: 1001, reason: "")
  }

  /// Starts connecting. Reports `.failed(.invalidURL)` for a URL that is not `ws://`/`wss://`
  /// with a host, `.failed(.connectTimeout)` when the upgrade has not completed within
  /// `options.connectTimeout` seconds and `.failed(.connectionFailed)` with libwebsockets' reason
  /// for TCP, TLS (certificate checks included) and upgrade errors. A previous connection of
  /// this transport is closed (1000) first.
  public func connect(
    to url: String, options: SignalingConnectOptions,
    handler: @escaping @Sendable (SignalingEvent) -> Void
  ) {
    let endpoint: WebSocketEndpoint
    do {
      endpoint = try WebSocketEndpoint.parse(url)
    } catch {
      errors.async { handler(.failed(error)) }
      return
    }
    let connection = WebSocketClientConnection(
      endpoint: endpoint, options: options, handler: handler)
    let previous = current.withLock { slot in
      let previous = slot
      slot = connection
      return previous
    }
    previous?.close(code: 1000, reason: "")
    connection.start()
  }

  /// Queues one text message (sent whole, in order). `.failure(.notConnected)` before `opened`,
  /// after `close` and after the connection ended.
  @discardableResult public func send(_ text: String) -> Result<Void, SignalingTransportError> {
    guard let connection = current.withLock({ $0 }) else { return .failure(.notConnected) }
    return connection.send(text)
  }

  /// Sends what is queued, then a close frame with `code` (RFC 6455 §7.4) and `reason` (cut to
  /// 123 bytes); the handler gets `.closed(code, reason)` once the peer answered. Before the
  /// connection opened, it is abandoned and `.closed(code, reason)` reported at once.
  public func close(code: Int, reason: String) {
    current.withLock { $0 }?.close(code: code, reason: reason)
  }

  /// Blocks until the current connection's service thread has released its context and ended
  /// (after the terminal event), or `timeout` seconds passed. `true` when it ended or there is
  /// no connection.
  public func waitUntilStopped(timeout: Double) -> Bool {
    guard let connection = current.withLock({ $0 }) else { return true }
    return connection.waitUntilStopped(timeout: timeout)
  }
}
