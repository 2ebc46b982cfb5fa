import Glibc
import WCSProtocols

/// A change of the host's addresses or links, as rtnetlink reports it (rtnetlink(7)).
public enum HostAddressChange: Sendable, Equatable {
  /// `RTM_NEWADDR`: `address` was added to (or refreshed on) interface `interface` (index).
  case added(ICEIPAddress, interface: Int32)
  /// `RTM_DELADDR`: `address` was removed from interface `interface`.
  case removed(ICEIPAddress, interface: Int32)
  /// `RTM_NEWLINK`/`RTM_DELLINK`: interface `interface` is now up and running (`IFF_UP` and
  /// `IFF_RUNNING`) or not (down, or deleted).
  case link(interface: Int32, up: Bool)
}

/// Decodes rtnetlink datagrams (netlink(7) `nlmsghdr` framing, rtnetlink(7) `ifaddrmsg` and
/// `ifinfomsg` bodies with their `rtattr`s, host byte order) into `HostAddressChange`s.
/// Sans-I/O: bytes in, changes out. Messages of other types are skipped; a message whose
/// length runs past the datagram, or shorter than its header, ends the datagram (what came
/// before it is kept), and at most `maximumMessages` are read from one datagram.
public enum RTNetlinkAddressChanges {
  /// The most messages read from one datagram.
  public static let maximumMessages = 256

  static let headerLength = 16
  static let newLink: UInt16 = 16
  static let deleteLink: UInt16 = 17
  static let newAddress: UInt16 = 20
  static let deleteAddress: UInt16 = 21
  /// `NLMSG_DONE` and `NLMSG_ERROR`: nothing for us.
  static let done: UInt16 = 3
  static let addressAttribute: UInt16 = 1  // IFA_ADDRESS
  static let localAttribute: UInt16 = 2  // IFA_LOCAL
  static let interfaceUp: UInt32 = 0x1  // IFF_UP
  static let interfaceRunning: UInt32 = 0x40  // IFF_RUNNING

  /// The changes in one datagram read from a `NETLINK_ROUTE` socket.
  public static func decode(_ bytes: some Collection<UInt8>) -> [HostAddressChange] {
    let data = Array(bytes)
    var changes: [HostAddressChange] = []
    var offset = 0
    var messages = 0
    while offset + headerLength <= data.count, messages < maximumMessages {
      messages += 1
      let length = Int(uint32(data, offset))
      let type = uint16(data, offset + 4)
      guard length >= headerLength, offset + length <= data.count else { break }
      let body = Array(data[(offset + headerLength)..<(offset + length)])
      switch type {
      case newAddress, deleteAddress:
        if let change = address(body, added: type == newAddress) { changes.append(change) }
      case newLink, deleteLink:
        if let change = link(body, deleted: type == deleteLink) { changes.append(change) }
      default:
        break
      }
      offset += aligned(length)
    }
    return changes
  }

  /// `ifaddrmsg` (family, prefix length, flags, scope, index) then attributes: IFA_LOCAL is
  /// the interface's own address where it differs from IFA_ADDRESS (point-to-point links).
  private static func address(_ body: [UInt8], added: Bool) -> HostAddressChange? {
    guard body.count >= 8 else { return nil }
    let family = Int32(body[0])
    let index = Int32(bitPattern: uint32(body, 4))
    var address: ICEIPAddress?
    var local: ICEIPAddress?
    for (type, value) in attributes(body, from: 8) {
      let expected = family == AF_INET ? 4 : family == AF_INET6 ? 16 : -1
      guard value.count == expected, let ip = ICEIPAddress(octets: value) else { continue }
      if type == localAttribute { local = ip }
      if type == addressAttribute { address = ip }
    }
    guard let ip = local ?? address else { return nil }
    return added ? .added(ip, interface: index) : .removed(ip, interface: index)
  }

  /// `ifinfomsg`: family, pad, type (2), index (4), flags (4), change mask (4).
  private static func link(_ body: [UInt8], deleted: Bool) -> HostAddressChange? {
    guard body.count >= 16 else { return nil }
    let index = Int32(bitPattern: uint32(body, 4))
    let flags = uint32(body, 8)
    let up = !deleted && flags & interfaceUp != 0 && flags & interfaceRunning != 0
    return .link(interface: index, up: up)
  }

  /// The `rtattr`s (length 2, type 2, value, padded to 4) from `start`; a malformed one ends
  /// the list.
  private static func attributes(_ body: [UInt8], from start: Int) -> [(UInt16, [UInt8])] {
    var result: [(UInt16, [UInt8])] = []
    var offset = start
    while offset + 4 <= body.count, result.count < maximumMessages {
      let length = Int(uint16(body, offset))
      guard length >= 4, offset + length <= body.count else { break }
      result.append((uint16(body, offset + 2), Array(body[(offset + 4)..<(offset + length)])))
      offset += aligned(length)
    }
    return result
  }

  private static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }

  private static func uint16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
    UInt16(littleEndian: UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8)
  }

  private static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    UInt32(
      littleEndian: UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
        | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24)
  }
}
