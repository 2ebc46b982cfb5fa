import XCTest

@testable import WCSEventLoop
@testable import WCSProtocols

/// rtnetlink reports (rtnetlink(7)) decoded into host address changes: address added and
/// removed for IPv4 (IFA_LOCAL before IFA_ADDRESS) and IPv6, links up and down, other
/// messages skipped, and bad framing ending the datagram without losing what came before.
final class RTNetlinkAddressChangesTests: XCTestCase {
  private func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
  private func le32(_ value: UInt32) -> [UInt8] {
    [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
  }

  private func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
    var bytes = le16(4 + value.count) + le16(type) + value
    while bytes.count % 4 != 0 { bytes.append(0) }
    return bytes
  }

  /// One netlink message: the 16-byte header (length, type, flags, sequence, port id), `body`.
  private func message(type: Int, _ body: [UInt8]) -> [UInt8] {
    le32(UInt32(16 + body.count)) + le16(type) + le16(0) + le32(1) + le32(0) + body
  }

  /// `ifaddrmsg`: family, prefix length, flags, scope, interface index; then attributes.
  private func address(family: Int32, index: UInt32, _ attributes: [UInt8]) -> [UInt8] {
    [UInt8(family), 32, 0, 0] + le32(index) + attributes
  }

  /// `ifinfomsg`: family, pad, device type, index, flags, change mask.
  private func link(index: UInt32, flags: UInt32) -> [UInt8] {
    [0, 0] + le16(1) + le32(index) + le32(flags) + le32(0xFFFF_FFFF)
  }

  func testAddressesAndLinksAreDecoded() {
    let v6: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1]
    let bytes =
      message(
        type: 20,
        address(
          family: AF_INET, index: 3,
          attribute(1, [10, 0, 0, 2]) + attribute(2, [127, 0, 1, 1]) + attribute(3, [0x65, 0]))
      )
      + message(type: 21, address(family: AF_INET6, index: 4, attribute(1, v6)))
      + message(type: 16, link(index: 3, flags: 0x1 | 0x40))
      + message(type: 16, link(index: 5, flags: 0x1))
      + message(type: 17, link(index: 6, flags: 0x1 | 0x40))
      + message(type: 24, [UInt8](repeating: 0, count: 12))  // RTM_NEWROUTE: skipped
    XCTAssertEqual(
      RTNetlinkAddressChanges.decode(bytes),
      [
        .added(.v4(0x7F00_0101), interface: 3),
        .removed(ICEIPAddress(octets: v6)!, interface: 4),
        .link(interface: 3, up: true),
        .link(interface: 5, up: false),
        .link(interface: 6, up: false),
      ])
  }

  func testBadFramingEndsTheDatagramAndKeepsWhatCameBefore() {
    let good = message(
      type: 20, address(family: AF_INET, index: 2, attribute(2, [127, 0, 2, 1])))
    let added = HostAddressChange.added(.v4(0x7F00_0201), interface: 2)
    // A length past the datagram.
    var overlong = message(type: 21, address(family: AF_INET, index: 2, []))
    overlong.replaceSubrange(0..<4, with: le32(4096))
    XCTAssertEqual(RTNetlinkAddressChanges.decode(good + overlong), [added])
    // A length shorter than the header (0 would never advance).
    var zero = good
    zero.replaceSubrange(0..<4, with: le32(0))
    XCTAssertEqual(RTNetlinkAddressChanges.decode(good + zero + good), [added])
    // An address of the wrong size for its family, and a body too short to hold ifaddrmsg.
    let wrongSize = message(
      type: 20, address(family: AF_INET, index: 2, attribute(2, [127, 0, 2])))
    XCTAssertEqual(RTNetlinkAddressChanges.decode(wrongSize + message(type: 21, [2, 32])), [])
    // A truncated header.
    XCTAssertEqual(RTNetlinkAddressChanges.decode(Array(good.prefix(10))), [])
  }

  func testOneDatagramYieldsAtMostTheMessageLimit() {
    let one = message(type: 20, address(family: AF_INET, index: 2, attribute(2, [127, 0, 0, 9])))
    let many = [[UInt8]](repeating: one, count: RTNetlinkAddressChanges.maximumMessages + 10)
      .flatMap { $0 }
    XCTAssertEqual(
      RTNetlinkAddressChanges.decode(many).count, RTNetlinkAddressChanges.maximumMessages)
  }
}
