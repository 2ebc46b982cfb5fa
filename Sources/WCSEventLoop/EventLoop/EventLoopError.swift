import WCSProtocols

/// Errors of the event loop and its UDP sockets, with the `errno` of the failing system call.
public enum EventLoopError: Error, Equatable, Sendable {
  /// `socket()` failed.
  case socketCreationFailed(errno: Int32)
  /// A `setsockopt()` the socket needs failed (`option` names it).
  case socketOptionFailed(option: String, errno: Int32)
  /// `bind()` or `getsockname()` failed for `address` (every port of a range was tried).
  case bindFailed(address: ICETransportAddress, errno: Int32)
  /// `sendto()` failed with an error other than a full send buffer.
  case sendFailed(destination: ICETransportAddress, errno: Int32)
  /// The datagram is larger than 65,507 bytes, the UDP maximum over IPv4.
  case datagramTooLarge(bytes: Int)
  /// The socket was closed.
  case socketClosed
  /// The address family of the destination differs from the socket's.
  case addressFamilyMismatch(local: ICETransportAddress, destination: ICETransportAddress)
}
