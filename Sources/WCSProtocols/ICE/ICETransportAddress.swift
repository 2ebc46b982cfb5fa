import Foundation

/// An IP address as carried in STUN address attributes (RFC 8489 §14.1): IPv4 (family 0x01) or
/// IPv6 (family 0x02), in network byte order.
public enum ICEIPAddress: Hashable, Sendable, CustomStringConvertible {
  /// IPv4, the four octets big-endian in one `UInt32` (`192.0.2.1` is `0xC000_0201`).
  case v4(UInt32)
  /// IPv6, the sixteen octets big-endian in two `UInt64` halves (high, low).
  case v6(UInt64, UInt64)

  /// The IPv4 loopback address 127.0.0.1.
  public static let loopbackV4 = ICEIPAddress.v4(0x7F00_0001)

  /// Parses dotted-quad IPv4 or RFC 4291 text IPv6 (`inet_pton`); `nil` when the text is neither.
  /// A zone suffix (`fe80::1%eth0`) is dropped.
  public init?(_ text: String) {
    let host = text.split(separator: "%", maxSplits: 1).first.map(String.init) ?? text
    var v4 = in_addr()
    if inet_pton(AF_INET, host, &v4) == 1 {
      self = .v4(UInt32(bigEndian: v4.s_addr))
      return
    }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, host, &v6) == 1,
      let address = ICEIPAddress(octets: withUnsafeBytes(of: &v6) { Array($0) })
    else { return nil }
    self = address
  }

  /// Builds an address from 4 or 16 octets in network order; `nil` for any other count.
  public init?(octets: [UInt8]) {
    switch octets.count {
    case 4:
      self = .v4(octets.reduce(0) { $0 << 8 | UInt32($1) })
    case 16:
      let high = octets[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      let low = octets[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      self = .v6(high, low)
    default:
      return nil
    }
  }

  /// The octets in network order: 4 for IPv4, 16 for IPv6.
  public var octets: [UInt8] {
    switch self {
    case .v4(let value):
      return (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    case .v6(let high, let low):
      return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
        + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }
  }

  /// `true` for IPv6.
  public var isIPv6: Bool {
    if case .v6 = self { return true }
    return false
  }

  /// `true` for 127.0.0.0/8 and ::1.
  public var isLoopback: Bool {
    switch self {
    case .v4(let value): return value >> 24 == 127
    case .v6(let high, let low): return high == 0 && low == 1
    }
  }

  /// `true` for IPv6 link-local fe80::/10.
  public var isLinkLocal: Bool {
    if case .v6(let high, _) = self { return high >> 54 == 0x3FA }
    return false
  }

  /// Text form: dotted quad or compressed IPv6 (`inet_ntop`).
  public var description: String {
    switch self {
    case .v4(let value):
      return "\(value >> 24).\((value >> 16) & 0xFF).\((value >> 8) & 0xFF).\(value & 0xFF)"
    case .v6:
      var address = in6_addr()
      let bytes = octets
      withUnsafeMutableBytes(of: &address) { raw in
        for index in 0..<min(raw.count, bytes.count) { raw[index] = bytes[index] }
      }
      var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
      guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(INET6_ADDRSTRLEN)) != nil else {
        return "::"
      }
      return String(
        decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
  }
}

/// A transport address: IP address and UDP port (RFC 8445 §3 "transport address").
public struct ICETransportAddress: Hashable, Sendable, CustomStringConvertible {
  /// The IP address.
  public var ip: ICEIPAddress
  /// The UDP port, host order.
  public var port: UInt16

  /// Makes an address from its parts.
  public init(ip: ICEIPAddress, port: UInt16) {
    self.ip = ip
    self.port = port
  }

  /// Parses `"192.0.2.1"` or `"2001:db8::1"` plus a port; `nil` when the IP text is invalid.
  public init?(_ ipText: String, port: UInt16) {
    guard let ip = ICEIPAddress(ipText) else { return nil }
    self.init(ip: ip, port: port)
  }

  /// `192.0.2.1:32853` or `[2001:db8::1]:32853`.
  public var description: String {
    ip.isIPv6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
  }
}
