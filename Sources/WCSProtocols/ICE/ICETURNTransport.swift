/// How a TURN client reaches its server (RFC 8656 §3.1): UDP, TCP, or TLS over TCP (`turns:`).
/// The relayed transport is UDP on all three (REQUESTED-TRANSPORT 17); only the leg to the
/// server changes. Over TCP and TLS requests are not retransmitted (RFC 8489 §6.2.2) and the
/// messages are framed on the stream by their own headers (`ICEStreamFramer.Framing.turn`).
public enum ICETURNTransport: String, Hashable, Sendable, CaseIterable {
  /// Datagrams to the server (`turn:host?transport=udp`, the default).
  case udp
  /// A TCP connection to the server (`turn:host?transport=tcp`).
  case tcp
  /// TLS 1.2+ over a TCP connection (`turns:host?transport=tcp`).
  case tls

  /// Whether the leg to the server is a byte stream (TCP or TLS).
  public var isStream: Bool { self != .udp }
}
