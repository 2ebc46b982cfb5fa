import Foundation
import WCSProtocols

/// Errors of `UDPSocket`, with the `errno` of the failing call.
public enum UDPSocketError: Error, Equatable, Sendable {
  /// `socket()` failed.
  case create(errno: Int32)
  /// `bind()` or `getsockname()` failed.
  case bind(errno: Int32)
  /// `sendto()` failed.
  case send(errno: Int32)
  /// `recvfrom()` or `poll()` failed.
  case receive(errno: Int32)
}

/// A minimal blocking-with-timeout UDP socket over BSD sockets, for ICE drivers and tests. IPv4
/// and IPv6. One owner thread at a time.
public final class UDPSocket {
  /// The bound local address (the real port when bound to port 0).
  public let localAddress: ICETransportAddress
  private let descriptor: Int32

  /// Binds a socket to `address` (port 0 picks a free port). Throws `UDPSocketError`.
  public init(bindingTo address: ICETransportAddress) throws {
    let family = address.ip.isIPv6 ? AF_INET6 : AF_INET
    let descriptor = socket(family, Int32(SOCK_DGRAM.rawValue), 0)
    guard descriptor >= 0 else { throw UDPSocketError.create(errno: errno) }
    var storage = Self.socketAddress(for: address)
    let bound = withUnsafePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.bind(descriptor, $0, Self.length(of: address))
      }
    }
    guard bound == 0 else {
      let error = errno
      close(descriptor)
      throw UDPSocketError.bind(errno: error)
    }
    var actual = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let named = withUnsafeMutablePointer(to: &actual) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(descriptor, $0, &length)
      }
    }
    guard named == 0, let resolved = Self.address(from: actual) else {
      let error = errno
      close(descriptor)
      throw UDPSocketError.bind(errno: error)
    }
    self.descriptor = descriptor
    localAddress = resolved
  }

  deinit { close(descriptor) }

  /// Sends one datagram. Throws `UDPSocketError.send`.
  public func send(_ bytes: [UInt8], to destination: ICETransportAddress) throws {
    var storage = Self.socketAddress(for: destination)
    let sent = bytes.withUnsafeBytes { raw in
      withUnsafePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(descriptor, raw.baseAddress, raw.count, 0, $0, Self.length(of: destination))
        }
      }
    }
    guard sent == bytes.count else { throw UDPSocketError.send(errno: errno) }
  }

  /// Waits up to `timeout` seconds for one datagram; `nil` on timeout. Throws
  /// `UDPSocketError.receive`.
  public func receive(timeout: Double) throws -> (bytes: [UInt8], source: ICETransportAddress)? {
    var descriptorSet = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    let milliseconds = Int32(max(0, min(timeout, 3600)) * 1000)
    let ready = poll(&descriptorSet, 1, milliseconds)
    if ready < 0 {
      if errno == EINTR { return nil }
      throw UDPSocketError.receive(errno: errno)
    }
    guard ready > 0 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 65536)
    var source = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let count = buffer.withUnsafeMutableBytes { raw in
      withUnsafeMutablePointer(to: &source) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          recvfrom(descriptor, raw.baseAddress, raw.count, 0, $0, &length)
        }
      }
    }
    guard count >= 0 else { throw UDPSocketError.receive(errno: errno) }
    guard let address = Self.address(from: source) else { return nil }
    return (Array(buffer.prefix(count)), address)
  }

  private static func length(of address: ICETransportAddress) -> socklen_t {
    socklen_t(
      address.ip.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
  }

  private static func socketAddress(for address: ICETransportAddress) -> sockaddr_storage {
    var storage = sockaddr_storage()
    switch address.ip {
    case .v4(let value):
      withUnsafeMutablePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
          $0.pointee.sin_family = sa_family_t(AF_INET)
          $0.pointee.sin_port = address.port.bigEndian
          $0.pointee.sin_addr = in_addr(s_addr: value.bigEndian)
        }
      }
    case .v6:
      let octets = address.ip.octets
      withUnsafeMutablePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
          $0.pointee.sin6_family = sa_family_t(AF_INET6)
          $0.pointee.sin6_port = address.port.bigEndian
          withUnsafeMutableBytes(of: &$0.pointee.sin6_addr) { raw in
            for index in 0..<min(raw.count, octets.count) { raw[index] = octets[index] }
          }
        }
      }
    }
    return storage
  }

  /// Converts a `sockaddr_storage` holding `sockaddr_in` or `sockaddr_in6`; `nil` otherwise.
  static func address(from storage: sockaddr_storage) -> ICETransportAddress? {
    var storage = storage
    switch Int32(storage.ss_family) {
    case AF_INET:
      return withUnsafePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
          ICETransportAddress(
            ip: .v4(UInt32(bigEndian: $0.pointee.sin_addr.s_addr)),
            port: UInt16(bigEndian: $0.pointee.sin_port))
        }
      }
    case AF_INET6:
      return withUnsafePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
          let octets = withUnsafeBytes(of: address.pointee.sin6_addr) { Array($0) }
          return ICEIPAddress(octets: octets).map {
            ICETransportAddress(ip: $0, port: UInt16(bigEndian: address.pointee.sin6_port))
          }
        }
      }
    default:
      return nil
    }
  }
}
