import Foundation

#if canImport(Glibc)
  import Glibc
#endif

enum RawSocketError: Error {
  case failed(String)
}

private func loopbackAddress(port: UInt16) -> sockaddr_in {
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = port.bigEndian
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  return address
}

/// A TCP socket listening on 127.0.0.1 that never accepts: connections complete the TCP
/// handshake in the kernel backlog and then hear nothing.
final class RawTCPListener {
  let descriptor: Int32
  let port: Int

  init() throws {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw RawSocketError.failed("socket") }
    self.descriptor = descriptor
    var address = loopbackAddress(port: 0)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(descriptor, 4) == 0 else {
      Glibc.close(descriptor)
      throw RawSocketError.failed("bind/listen")
    }
    var actual = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &actual) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(descriptor, $0, &length)
      }
    }
    port = Int(UInt16(bigEndian: actual.sin_port))
  }

  func close() { Glibc.close(descriptor) }
}

/// A TCP socket connected to 127.0.0.1:`port` with a 10 s receive timeout; `receiveBuffer`
/// (bytes) is set before connecting so the window the peer sees is small from the start.
func connectLoopback(port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { throw RawSocketError.failed("socket") }
  if var size = receiveBuffer {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
  }
  var timeout = timeval(tv_sec: 10, tv_usec: 0)
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  var address = loopbackAddress(port: UInt16(port))
  let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard connected == 0 else {
    Glibc.close(fd)
    throw RawSocketError.failed("connect")
  }
  return fd
}

/// One HTTP/1.1 GET over a raw TCP socket to 127.0.0.1: the status code and the body.
func httpGet(port: Int, path: String) throws -> (status: Int, body: [UInt8]) {
  let fd = try connectLoopback(port: port)
  defer { Glibc.close(fd) }
  let request = Array(
    "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
  guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
    throw RawSocketError.failed("send")
  }
  var response: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65536)
  while true {
    let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    if n <= 0 { break }
    response += chunk[0..<n]
  }
  let separator: [UInt8] = Array("\r\n\r\n".utf8)
  guard let headerEnd = findSubsequence(response, separator) else {
    throw RawSocketError.failed("no header end in \(response.count) bytes")
  }
  let head = String(decoding: response[0..<headerEnd], as: UTF8.self)
  let statusLine = head.split(separator: "\r\n").first ?? ""
  let parts = statusLine.split(separator: " ")
  guard parts.count >= 2, let status = Int(parts[1]) else {
    throw RawSocketError.failed("bad status line \(statusLine)")
  }
  var body = Array(response[(headerEnd + 4)...])
  let lengthLine = head.split(separator: "\r\n").first {
    $0.lowercased().hasPrefix("content-length:")
  }
  if let lengthLine,
    let length = Int(lengthLine.dropFirst(15).trimmingCharacters(in: .whitespaces)),
    body.count > length
  {
    body = Array(body.prefix(length))
  }
  return (status, body)
}

private func findSubsequence(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
  guard haystack.count >= needle.count else { return nil }
  for start in 0...(haystack.count - needle.count)
  where haystack[start..<(start + needle.count)].elementsEqual(needle) {
    return start
  }
  return nil
}
