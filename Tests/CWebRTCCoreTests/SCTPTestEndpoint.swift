import CWebRTCCore
import Foundation

/// usrsctp keeps one stack per process; it is started once, without its own threads, so every
/// call (and every `conn_output`) happens on the thread that drives the test.
enum USRSCTPLibrary {
  static let started: Bool = {
    wcs_usrsctp_init_nothreads(
      0, sctpConnOutput, ProcessInfo.processInfo.environment["WCS_SCTP_DEBUG"] == nil ? 0 : 1)
    return true
  }()
}

/// usrsctp's `conn_output`: `address` is the remote address of the association, which each
/// endpoint sets to its own registered address (its `Unmanaged` pointer). Packets are queued, not fed to the peer here, so usrsctp is never
/// re-entered from inside its own output path.
private func sctpConnOutput(
  _ address: UnsafeMutableRawPointer?, _ buffer: UnsafeMutableRawPointer?, _ length: Int,
  _ tos: UInt8, _ setDF: UInt8
) -> Int32 {
  guard let address, let buffer else { return -1 }
  let endpoint = Unmanaged<SCTPTestEndpoint>.fromOpaque(address).takeUnretainedValue()
  endpoint.outbox.append(Array(UnsafeRawBufferPointer(start: buffer, count: length)))
  return 0
}

/// One SCTP endpoint over AF_CONN (RFC 8261 style: SCTP packets handed over in memory).
final class SCTPTestEndpoint {
  /// SCTP packets this endpoint sent and the peer has not received yet.
  var outbox: [[UInt8]] = []
  let port: UInt16
  private(set) var socket: OpaquePointer?
  private var registered = false

  /// The address usrsctp knows this endpoint by; it comes back in `conn_output`.
  var address: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

  init(port: UInt16) throws {
    self.port = port
    guard USRSCTPLibrary.started else { throw BindingTestError.cCall("usrsctp_init", code: 0) }
    usrsctp_register_address(address)
    registered = true
    guard
      let socket = usrsctp_socket(
        AF_CONN, Int32(SOCK_STREAM.rawValue), Int32(IPPROTO_SCTP), nil, nil, 0, nil)
    else { throw BindingTestError.cCall("usrsctp_socket", code: Int(errno)) }
    self.socket = socket
    try Self.configure(socket)
    var local = sockaddr_conn()
    local.sconn_family = UInt16(AF_CONN)
    local.sconn_port = port.bigEndian
    local.sconn_addr = address
    let bound = withUnsafeMutablePointer(to: &local) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        usrsctp_bind(socket, $0, socklen_t(MemoryLayout<sockaddr_conn>.size))
      }
    }
    guard bound == 0 else { throw BindingTestError.cCall("usrsctp_bind", code: Int(errno)) }
  }

  /// Non-blocking, per-message receive info, and an abortive close (SO_LINGER 0) so no
  /// SHUTDOWN retransmission can reach `conn_output` after the endpoint is gone.
  static func configure(_ socket: OpaquePointer) throws {
    guard usrsctp_set_non_blocking(socket, 1) == 0 else {
      throw BindingTestError.cCall("usrsctp_set_non_blocking", code: Int(errno))
    }
    var on: Int32 = 1
    guard
      usrsctp_setsockopt(
        socket, Int32(IPPROTO_SCTP), SCTP_RECVRCVINFO, &on, socklen_t(MemoryLayout<Int32>.size))
        == 0
    else { throw BindingTestError.cCall("SCTP_RECVRCVINFO", code: Int(errno)) }
    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
    guard
      usrsctp_setsockopt(
        socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size)) == 0
    else { throw BindingTestError.cCall("SO_LINGER", code: Int(errno)) }
  }

  func listen() throws {
    guard usrsctp_listen(socket, 1) == 0 else {
      throw BindingTestError.cCall("usrsctp_listen", code: Int(errno))
    }
  }

  /// Starts the association; the INIT goes to the outbox (EINPROGRESS is the expected answer).
  ///
  /// usrsctp_conninput files a packet under one address as both source and destination, so each
  /// endpoint names the peer with its own address (as WebRTC stacks do); the peer is told apart
  /// by its port, and `conn_output` then always gets the sending endpoint's address.
  func connect(to peer: SCTPTestEndpoint) throws {
    var remote = sockaddr_conn()
    remote.sconn_family = UInt16(AF_CONN)
    remote.sconn_port = peer.port.bigEndian
    remote.sconn_addr = address
    let result = withUnsafeMutablePointer(to: &remote) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        usrsctp_connect(socket, $0, socklen_t(MemoryLayout<sockaddr_conn>.size))
      }
    }
    guard result == 0 || errno == EINPROGRESS else {
      throw BindingTestError.cCall("usrsctp_connect", code: Int(errno))
    }
  }

  /// The accepted association's socket, or nil while none is established.
  func accept() throws -> OpaquePointer? {
    guard let accepted = usrsctp_accept(socket, nil, nil) else { return nil }
    try Self.configure(accepted)
    return accepted
  }

  func close() {
    if let socket { usrsctp_close(socket) }
    socket = nil
  }

  deinit {
    close()
    if registered { usrsctp_deregister_address(address) }
  }
}
