import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Non-blocking UDP sockets of the gateway's plain-RTP legs (IPv4, RFC 3550 §11 port pairs).
enum SIPUDPSocket {
  /// Binds a non-blocking UDP socket on `address` (an IPv4 literal) and `port` (0 = any):
  /// the descriptor and the port it got.
  /// - Throws: `SIPGatewayError.socket` with errno's text.
  static func open(address: String, port: UInt16 = 0) throws(SIPGatewayError) -> (
    fd: Int32, port: UInt16
  ) {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw .socket(String(cString: strerror(errno))) }
    var sin = sockaddr_in()
    sin.sin_family = sa_family_t(AF_INET)
    sin.sin_port = port.bigEndian
    guard inet_pton(AF_INET, address, &sin.sin_addr) == 1 else {
      Glibc.close(fd)
      throw .socket("not an IPv4 address: \(address)")
    }
    let bound = withUnsafePointer(to: &sin) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &sin) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard bound == 0, named == 0 else {
      let text = String(cString: strerror(errno))
      Glibc.close(fd)
      throw .socket(text)
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    return (fd, UInt16(bigEndian: sin.sin_port))
  }

  /// An RTP socket on an even port and its RTCP socket on the next (RFC 3550 §11), tried a
  /// few times: another socket may take the odd port first.
  static func openPair(address: String) throws(SIPGatewayError) -> (
    rtp: Int32, rtcp: Int32, port: UInt16
  ) {
    for _ in 0..<16 {
      let (probe, any) = try open(address: address)
      Glibc.close(probe)
      let even = any & ~1
      guard even > 1024, even < 65534 else { continue }
      guard let rtp = try? open(address: address, port: even) else { continue }
      guard let rtcp = try? open(address: address, port: even + 1) else {
        Glibc.close(rtp.fd)
        continue
      }
      return (rtp.fd, rtcp.fd, even)
    }
    throw .socket("no free RTP/RTCP port pair on \(address)")
  }

  /// Sends `bytes` to `address:port`; whether the kernel took them.
  static func send(_ fd: Int32, _ bytes: [UInt8], to address: String, port: UInt16) -> Bool {
    var sin = sockaddr_in()
    sin.sin_family = sa_family_t(AF_INET)
    sin.sin_port = port.bigEndian
    guard inet_pton(AF_INET, address, &sin.sin_addr) == 1 else { return false }
    let sent = bytes.withUnsafeBytes { buffer in
      withUnsafePointer(to: &sin) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(
            fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    return sent > 0
  }

  /// Every datagram waiting on `fd` (at most `SIPRTPLeg.maxDatagram` octets each).
  static func drain(_ fd: Int32, _ body: ([UInt8]) -> Void) {
    var buffer = [UInt8](repeating: 0, count: SIPRTPLeg.maxDatagram)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      guard count > 0 else { return }
      body(Array(buffer[0..<count]))
    }
  }
}
