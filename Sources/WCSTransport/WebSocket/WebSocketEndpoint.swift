import Foundation

/// Where a `ws://` or `wss://` URL points: the parts libwebsockets needs to open the connection.
struct WebSocketEndpoint: Sendable, Equatable {
  /// `true` for `wss://` (TLS).
  var secure: Bool
  /// Host name or address without brackets and without user information.
  var host: String
  /// TCP port: the URL's port, else 80 (`ws`) or 443 (`wss`).
  var port: Int
  /// Path with query, never empty (`/` when the URL has none).
  var path: String
  /// `user:password` from the URL (percent-decoded), for `Authorization: Basic`.
  var credentials: String?

  /// The `Host` header value: the host, with the port when it is not the scheme's default.
  var hostHeader: String {
    let name = host.contains(":") ? "[\(host)]" : host
    let defaultPort = secure ? 443 : 80
    return port == defaultPort ? name : "\(name):\(port)"
  }

  /// `Basic base64(user:password)` (RFC 7617 §2), or `nil` without credentials.
  var basicAuthorization: String? {
    guard let credentials else { return nil }
    return "Basic " + Data(credentials.utf8).base64EncodedString()
  }

  /// Parses a WebSocket URL.
  /// - Throws: `SignalingTransportError.invalidURL` for another scheme, no host or a bad port.
  static func parse(_ url: String) throws(SignalingTransportError) -> WebSocketEndpoint {
    guard let components = URLComponents(string: url),
      let scheme = components.scheme?.lowercased(), scheme == "ws" || scheme == "wss"
    else { throw .invalidURL(url) }
    var host = components.host ?? ""
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty else { throw .invalidURL(url) }
    let secure = scheme == "wss"
    let port = components.port ?? (secure ? 443 : 80)
    guard (1...65535).contains(port) else { throw .invalidURL(url) }
    var path = components.percentEncodedPath
    if path.isEmpty { path = "/" }
    if let query = components.percentEncodedQuery { path += "?" + query }
    var credentials: String?
    if let user = components.user {
      credentials = user + ":" + (components.password ?? "")
    }
    return WebSocketEndpoint(
      secure: secure, host: host, port: port, path: path, credentials: credentials)
  }
}
