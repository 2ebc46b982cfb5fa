import Foundation
import WCSProtocols

/// Conversions between `ICETransportAddress` and the BSD `sockaddr_in`/`sockaddr_in6` the socket
/// calls take, without heap allocation (they run for every datagram).
enum SocketAddress {
  /// Calls `body` with `address` as a `sockaddr` and its length.
  static func with<Result>(
    _ address: ICETransportAddress, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
  ) -> Result {
    switch address.ip {
    case .v4(let value):
      var inet = sockaddr_in()
      inet.sin_family = sa_family_t(AF_INET)
      inet.sin_port = address.port.bigEndian
      inet.sin_addr = in_addr(s_addr: value.bigEndian)
      return withUnsafePointer(to: &inet) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    case .v6(let high, let low):
      var inet6 = sockaddr_in6()
      inet6.sin6_family = sa_family_t(AF_INET6)
      inet6.sin6_port = address.port.bigEndian
      withUnsafeMutableBytes(of: &inet6.sin6_addr) { raw in
        raw.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
        raw.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
      }
      return withUnsafePointer(to: &inet6) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    }
  }

  /// Reads a `sockaddr_in` or `sockaddr_in6` from `storage`; `nil` for any other family.
  static func decode(_ storage: UnsafePointer<sockaddr_storage>) -> ICETransportAddress? {
    switch Int32(storage.pointee.ss_family) {
    case AF_INET:
      return storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
        ICETransportAddress(
          ip: .v4(UInt32(bigEndian: $0.pointee.sin_addr.s_addr)),
          port: UInt16(bigEndian: $0.pointee.sin_port))
      }
    case AF_INET6:
      return storage.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet6 in
        let (high, low) = withUnsafeBytes(of: inet6.pointee.sin6_addr) { raw in
          (
            UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
          )
        }
        return ICETransportAddress(
          ip: .v6(high, low), port: UInt16(bigEndian: inet6.pointee.sin6_port))
      }
    default:
      return nil
    }
  }
}
