import Foundation

extension WebSocketServer {
  /// One accepted WebSocket connection. `send` and `close` may be called from any thread; they
  /// queue work for the server's service thread and do nothing once the connection ended.
  public final class Connection: Sendable, Hashable, CustomStringConvertible {
    /// Unique per server, counting from 1 in accept order.
    public let id: Int
    /// The peer's IP address as text (`127.0.0.1`).
    public let remoteAddress: String
    /// The request target of the upgrade (`/path?query`).
    public let path: String
    /// Upgrade request headers, names lowercased: `authorization`, `host`, `origin`,
    /// `user-agent` when present, plus the configured `capturedHeaders`.
    public let headers: [String: String]
    private weak let server: WebSocketServer?

    init(
      id: Int, remoteAddress: String, path: String, headers: [String: String],
      server: WebSocketServer
    ) {
      self.id = id
      self.remoteAddress = remoteAddress
      self.path = path
      self.headers = headers
      self.server = server
    }

    /// Queues one text message; `false` when the connection or server has ended.
    @discardableResult public func send(_ text: String) -> Bool {
      server?.enqueue(.send(Array(text.utf8)), for: id) ?? false
    }

    /// Sends what is queued, then a close frame with `code` (RFC 6455 §7.4) and `reason`; the
    /// handler gets `.closed(self, code, reason)` when the connection is gone.
    public func close(code: Int = 1000, reason: String = "") {
      _ = server?.enqueue(.close(WebSocketClosePayload(code: code, reason: reason)), for: id)
    }

    /// The request header `name` (any case), or `nil`.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// `connection ID from ADDRESS PATH`, for logs.
    public var description: String { "connection \(id) from \(remoteAddress) \(path)" }

    /// Identity: the same accepted connection.
    public static func == (lhs: Connection, rhs: Connection) -> Bool { lhs === rhs }
    /// Hashes the object identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
  }

  /// What the server reports, per connection in order, on its private serial event queue.
  public enum Event: Sendable {
    /// The upgrade completed.
    case connected(Connection)
    /// One complete text message (fragments joined).
    case text(Connection, String)
    /// The connection ended: the peer's close code and reason, the code given to `close`, 1006
    /// when the socket went away without a close frame, 1001 when the server stopped.
    case closed(Connection, code: Int, reason: String)
  }

  /// Why `start()` failed.
  public enum StartError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `start()` was called on a running server.
    case alreadyStarted
    /// Could not listen on `address:port` (in use, not a local address, no permission).
    case listenFailed(address: String, port: Int, reason: String)
    /// libwebsockets could not create its context.
    case contextFailed(String)

    /// One line saying what failed, for logs.
    public var description: String {
      switch self {
      case .alreadyStarted: return "server already started"
      case .listenFailed(let address, let port, let reason):
        return "cannot listen on \(address):\(port): \(reason)"
      case .contextFailed(let reason): return "cannot create the server context: \(reason)"
      }
    }
  }

  /// Server settings.
  public struct Configuration: Sendable, Equatable {
    /// Address to listen on (default `127.0.0.1`).
    public var address: String
    /// WebSocket port; 0 picks a free one, read it from `WebSocketServer.port`.
    public var port: Int
    /// PEM certificate (chain) file for `wss`; `nil` serves plain `ws`.
    public var certificatePath: String?
    /// PEM private key file for `certificatePath`.
    public var privateKeyPath: String?
    /// Header names (any case) besides the standard ones to record on each `Connection`.
    public var capturedHeaders: [String]
    /// Serve files from a directory over plain HTTP on a second port; `nil` for none.
    public var files: FileMount?
    /// Largest message a client may send, bytes (default 1 MiB, `defaultMaximumMessageSize`).
    /// A longer one closes the connection with 1009 (RFC 6455 §7.4.1) before more than this
    /// much is buffered.
    public var maximumMessageSize: Int
    /// Most bytes queued to one connection and not yet written (default 16 MiB,
    /// `defaultMaximumOutboxSize`). A client that does not read while messages keep coming
    /// would otherwise hold them all in memory: past the bound its queue is dropped and it is
    /// closed with 1008 (policy violation, RFC 6455 §7.4.1). One message larger than this is
    /// never delivered.
    public var maximumOutboxSize: Int

    /// 1 MiB: far above any WCS signalling message (an SDP with 100 candidates is ~10 KB).
    public static let defaultMaximumMessageSize = 1 << 20
    /// 16 MiB.
    public static let defaultMaximumOutboxSize = 16 << 20

    /// Creates settings; defaults: 127.0.0.1, a free port, plain `ws`, no file serving, 1 MiB
    /// messages in, 16 MiB queued out per connection.
    public init(
      address: String = "127.0.0.1", port: Int = 0, certificatePath: String? = nil,
      privateKeyPath: String? = nil, capturedHeaders: [String] = [], files: FileMount? = nil,
      maximumMessageSize: Int = defaultMaximumMessageSize,
      maximumOutboxSize: Int = defaultMaximumOutboxSize
    ) {
      self.maximumMessageSize = maximumMessageSize
      self.maximumOutboxSize = maximumOutboxSize
      self.address = address
      self.port = port
      self.certificatePath = certificatePath
      self.privateKeyPath = privateKeyPath
      self.capturedHeaders = capturedHeaders
      self.files = files
    }
  }

  /// A directory served over HTTP: `GET http://address:httpPort<mountPoint>/<name>` returns the
  /// file `<directory>/<name>`, 404 when there is none or its name starts with `.`, 403 when
  /// `access` refuses the request.
  public struct FileMount: Sendable, Equatable {
    /// URL path prefix, e.g. `/client/records`.
    public var mountPoint: String
    /// Directory whose files are served.
    public var directory: String
    /// HTTP port; 0 picks a free one, read it from `WebSocketServer.httpPort`.
    public var port: Int
    /// Which requests are answered (`nil`: every one). Hidden files (a path component starting
    /// with `.`) are never served, whatever it says: 404.
    public var access: FileAccessCheck?

    /// Creates a mount of `directory` at `mountPoint` on `port`.
    public init(
      mountPoint: String, directory: String, port: Int = 0, access: FileAccessCheck? = nil
    ) {
      self.mountPoint = mountPoint
      self.directory = directory
      self.port = port
      self.access = access
    }
  }
}
