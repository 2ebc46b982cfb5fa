import Foundation
import WCSProtocols

/// Host candidate addresses for a driver: the addresses of every interface that is up
/// (`getifaddrs`), IPv4 and IPv6.
public enum ICEHostAddresses {
  /// Every address of an up interface. Loopback addresses only when `includeLoopback` (tests);
  /// IPv6 link-local addresses only when `includeLinkLocal` (they need a scope ID to be used).
  /// `interfaces`, when given, keeps only the addresses of interfaces with those names.
  public static func current(
    includeLoopback: Bool = false, includeLinkLocal: Bool = false, interfaces: [String]? = nil
  ) -> [ICEIPAddress] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return [] }
    defer { freeifaddrs(list) }
    var result: [ICEIPAddress] = []
    var cursor: UnsafeMutablePointer<ifaddrs>? = first
    while let entry = cursor {
      cursor = entry.pointee.ifa_next
      let flags = Int32(bitPattern: entry.pointee.ifa_flags)
      guard flags & Int32(IFF_UP) != 0, let socketAddress = entry.pointee.ifa_addr else {
        continue
      }
      if let interfaces, !interfaces.contains(String(cString: entry.pointee.ifa_name)) {
        continue
      }
      let family = Int32(socketAddress.pointee.sa_family)
      guard family == AF_INET || family == AF_INET6 else { continue }
      var storage = sockaddr_storage()
      let size =
        family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size
      withUnsafeMutableBytes(of: &storage) { raw in
        raw.copyMemory(from: UnsafeRawBufferPointer(start: socketAddress, count: size))
      }
      guard let address = UDPSocket.address(from: storage)?.ip else { continue }
      if address.isLoopback && !includeLoopback { continue }
      if address.isLinkLocal && !includeLinkLocal { continue }
      if !result.contains(address) { result.append(address) }
    }
    return result
  }
}
