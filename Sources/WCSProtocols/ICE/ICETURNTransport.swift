/// How a TURN client reaches its server (RFC 8656 §3.1): UDP datagrams, a TCP connection with
/// RFC 6062 §4.1 framing, or TLS over TCP (`turns:`, RFC 7065).
public enum ICETURNTransport: String, Sendable, Hashable {
  /// UDP datagrams to the server's address.
  case udp
  /// A TCP connection to the server.
  case tcp
  /// TLS 1.2+ over TCP, the server's certificate verified.
  case tls
}
