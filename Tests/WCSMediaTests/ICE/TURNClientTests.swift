import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

final class TURNClientTests: XCTestCase {
  let server = ICETURNServer(
    address: ICETransportAddress(ip: .v4(0xC000_0264), port: 3478), username: "user",
    password: "secret")

  private func onlyRequest(_ client: TURNClient) throws -> STUNMessage {
    let datagrams = client.takeDatagrams()
    XCTAssertEqual(datagrams.count, 1)
    let datagram = try XCTUnwrap(datagrams.first)
    XCTAssertEqual(datagram.destination, server.address)
    XCTAssertEqual(datagram.socket, 3)
    return try STUNMessage.decode(datagram.bytes)
  }

  private func response(
    to request: STUNMessage, _ messageClass: STUNClass, _ attributes: [STUNAttribute],
    key: STUNIntegrityKey?
  ) throws -> [UInt8] {
    try STUNMessage(
      type: STUNMessageType(method: request.type.method, messageClass: messageClass),
      transactionID: request.transactionID, attributes: attributes
    ).encode(key: key, fingerprint: true)
  }

  func testAllocateChallengeStaleNonceAndSuccess() throws {
    let client = TURNClient(server: server, socket: 3, randomSeed: 1)
    client.start(now: virtualTime(0))
    let first = try onlyRequest(client)
    XCTAssertEqual(first.type, STUNMessageType(method: .allocate, messageClass: .request))
    XCTAssertEqual(first.attributes, [.requestedTransport(17)])
    XCTAssertNil(first.messageIntegrity)

    XCTAssertTrue(
      client.receive(
        try response(
          to: first, .errorResponse,
          [.errorCode(code: 401, reason: "Unauthorized"), .realm("wcs.test"), .nonce("n1")],
          key: nil), now: virtualTime(0.01)))
    let signed = try onlyRequest(client)
    XCTAssertEqual(signed.username, "user")
    XCTAssertEqual(signed.realm, "wcs.test")
    XCTAssertEqual(signed.nonce, "n1")
    let key = try STUNIntegrityKey.longTerm(username: "user", realm: "wcs.test", password: "secret")
    XCTAssertNoThrow(try signed.verifyIntegrity(key: key))

    // 438 Stale Nonce: retried with the new nonce.
    client.receive(
      try response(
        to: signed, .errorResponse,
        [.errorCode(code: 438, reason: "Stale Nonce"), .realm("wcs.test"), .nonce("n2")], key: key),
      now: virtualTime(0.02))
    let retried = try onlyRequest(client)
    XCTAssertEqual(retried.nonce, "n2")
    XCTAssertNoThrow(try retried.verifyIntegrity(key: key))

    let relayed = ICETransportAddress(ip: .v4(0xC000_0264), port: 50000)
    let mapped = ICETransportAddress(ip: .v4(0xCB00_7105), port: 40000)
    client.receive(
      try response(
        to: retried, .successResponse,
        [.xorRelayedAddress(relayed), .xorMappedAddress(mapped), .lifetime(300)], key: key),
      now: virtualTime(0.03))
    XCTAssertEqual(
      client.takeEvents(), [.allocated(relayed: relayed, mapped: mapped, lifetime: 300)])
    XCTAssertEqual(client.relayedAddress, relayed)
    // Refresh at max(lifetime / 2, lifetime - 60) = 240 s after the allocation.
    XCTAssertEqual(try XCTUnwrap(client.nextDeadline), virtualTime(240.03))

    // Sending to a peer installs a permission first, asks for a channel, then sends a Send
    // indication (ChannelData once the channel is bound: TURNClientChannelTests).
    let peer = ICETransportAddress(ip: .v4(0x0A00_0002), port: 6000)
    client.send([1, 2, 3], to: peer, now: virtualTime(1))
    let out = client.takeDatagrams().compactMap { try? STUNMessage.decode($0.bytes) }
    XCTAssertEqual(
      out.map(\.type),
      [
        STUNMessageType(method: .createPermission, messageClass: .request),
        STUNMessageType(method: .channelBind, messageClass: .request),
        STUNMessageType(method: .send, messageClass: .indication),
      ])
    XCTAssertEqual(out.first?.xorPeerAddress?.ip, peer.ip)
    XCTAssertNoThrow(try out.first?.verifyIntegrity(key: key))
    XCTAssertEqual(out.last?.xorPeerAddress, peer)
    XCTAssertEqual(out.last?.data, [1, 2, 3])

    // A Data indication from the server becomes a data event.
    let data = try STUNMessage(
      type: STUNMessageType(method: .data, messageClass: .indication),
      attributes: [.xorPeerAddress(peer), .data([9, 8])]
    ).encode(fingerprint: true)
    XCTAssertTrue(client.receive(data, now: virtualTime(2)))
    XCTAssertEqual(client.takeEvents(), [.data(peer: peer, bytes: [9, 8])])

    client.handleTimeout(now: virtualTime(240.03))
    let refresh = client.takeDatagrams().compactMap { try? STUNMessage.decode($0.bytes) }
      .filter { $0.type.method == .refresh }
    XCTAssertEqual(refresh.first?.lifetime, 600)
  }

  func testAllocateRejectedOrUnansweredFails() throws {
    let client = TURNClient(server: server, socket: 3, randomSeed: 2)
    client.start(now: virtualTime(0))
    let first = try onlyRequest(client)
    client.receive(
      try response(to: first, .errorResponse, [.errorCode(code: 486, reason: "Quota")], key: nil),
      now: virtualTime(0.1))
    XCTAssertEqual(client.takeEvents(), [.failed("allocate: 486 Quota")])
    XCTAssertTrue(client.failed)
    XCTAssertNil(client.nextDeadline)

    let silent = TURNClient(server: server, socket: 3, randomSeed: 3)
    silent.start(now: virtualTime(0))
    var now = virtualTime(0)
    var sent = silent.takeDatagrams().count
    while let deadline = silent.nextDeadline, now < virtualTime(60) {
      now = deadline
      silent.handleTimeout(now: now)
      sent += silent.takeDatagrams().count
    }
    XCTAssertEqual(sent, 7)
    XCTAssertEqual(silent.takeEvents(), [.failed("allocate timed out")])
  }

  /// A client past the 401 challenge, its signed Allocate request and the key.
  private func challenged(seed: UInt64) throws -> (TURNClient, STUNMessage, STUNIntegrityKey) {
    let client = TURNClient(server: server, socket: 3, randomSeed: seed)
    client.start(now: virtualTime(0))
    let first = try onlyRequest(client)
    client.receive(
      try response(
        to: first, .errorResponse,
        [.errorCode(code: 401, reason: "Unauthorized"), .realm("wcs.test"), .nonce("n1")],
        key: nil), now: virtualTime(0.01))
    let key = try STUNIntegrityKey.longTerm(username: "user", realm: "wcs.test", password: "secret")
    return (client, try onlyRequest(client), key)
  }

  func testUnsignedOrBadlySignedResponsesToSignedRequestsAreIgnored() throws {
    let (client, signed, key) = try challenged(seed: 4)
    let relayed = ICETransportAddress(ip: .v4(0xC000_0264), port: 50000)
    let forged = ICETransportAddress(ip: .v4(0x0A0A_0A0A), port: 1)
    // An off-path success naming another relay, unsigned, then signed with a wrong key.
    client.receive(
      try response(to: signed, .successResponse, [.xorRelayedAddress(forged)], key: nil),
      now: virtualTime(0.02))
    let wrongKey = try STUNIntegrityKey.longTerm(username: "user", realm: "wcs.test", password: "x")
    client.receive(
      try response(to: signed, .successResponse, [.xorRelayedAddress(forged)], key: wrongKey),
      now: virtualTime(0.03))
    // An unsigned error other than 401/438 would have ended the allocation.
    client.receive(
      try response(
        to: signed, .errorResponse, [.errorCode(code: 486, reason: "Quota")], key: nil),
      now: virtualTime(0.04))
    XCTAssertEqual(client.unauthenticatedResponses, 3)
    XCTAssertEqual(client.takeEvents(), [])
    XCTAssertNil(client.relayedAddress)
    XCTAssertFalse(client.failed)
    // The transaction is still open: it retransmits, and the real answer is taken.
    client.handleTimeout(now: virtualTime(0.3))
    XCTAssertEqual(try onlyRequest(client).transactionID, signed.transactionID)
    client.receive(
      try response(
        to: signed, .successResponse, [.xorRelayedAddress(relayed), .lifetime(600)], key: key),
      now: virtualTime(0.35))
    XCTAssertEqual(
      client.takeEvents(), [.allocated(relayed: relayed, mapped: nil, lifetime: 600)])
  }

  func testZeroOrTinyLifetimeNeverRefreshesInALoop() throws {
    let (client, signed, key) = try challenged(seed: 5)
    let relayed = ICETransportAddress(ip: .v4(0xC000_0264), port: 50000)
    client.receive(
      try response(
        to: signed, .successResponse, [.xorRelayedAddress(relayed), .lifetime(1)], key: key),
      now: virtualTime(1))
    XCTAssertEqual(client.takeEvents(), [.allocated(relayed: relayed, mapped: nil, lifetime: 1)])
    XCTAssertEqual(
      try XCTUnwrap(client.nextDeadline), virtualTime(1) + TURNClient.minimumRefreshDelay)
    // A server answering every Refresh with LIFETIME 1: at most one Refresh per 5 s.
    var now = virtualTime(1)
    var refreshes = 0
    while now < virtualTime(61), let deadline = client.nextDeadline {
      now = deadline
      client.handleTimeout(now: now)
      for datagram in client.takeDatagrams() {
        let request = try STUNMessage.decode(datagram.bytes)
        refreshes += 1
        client.receive(
          try response(to: request, .successResponse, [.lifetime(1)], key: key), now: now)
      }
    }
    XCTAssertEqual(refreshes, 12)
    // LIFETIME 0 in a Refresh success: the allocation is gone, no further refresh.
    client.handleTimeout(now: now + .seconds(5))
    let last = try onlyRequest(client)
    client.receive(
      try response(to: last, .successResponse, [.lifetime(0)], key: key), now: now + .seconds(5))
    XCTAssertTrue(client.failed)
    XCTAssertNil(client.nextDeadline)

    // LIFETIME 0 in the Allocate success itself.
    let (zero, request, zeroKey) = try challenged(seed: 6)
    zero.receive(
      try response(
        to: request, .successResponse, [.xorRelayedAddress(relayed), .lifetime(0)], key: zeroKey),
      now: virtualTime(1))
    XCTAssertEqual(zero.takeEvents(), [.failed("Allocate success with LIFETIME 0")])
    XCTAssertNil(zero.nextDeadline)
  }

  func testCRC32CheckValueAndChaining() {
    // The CRC-32/ISO-HDLC check value.
    XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926)
    XCTAssertEqual(CRC32.checksum([]), 0)
    let long = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let whole = CRC32.checksum(long)
    let chained = long.withUnsafeBytes {
      CRC32.checksum(
        UnsafeRawBufferPointer(rebasing: $0[13...]),
        continuing: CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[..<13])))
    }
    XCTAssertEqual(whole, chained)
  }

  func testHostAddressesAndUDPSocketOnLoopback() throws {
    let withLoopback = ICEHostAddresses.current(includeLoopback: true)
    XCTAssertTrue(withLoopback.contains(.loopbackV4))
    XCTAssertFalse(ICEHostAddresses.current().contains { $0.isLoopback })
    let first = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
    let second = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
    XCTAssertNotEqual(first.localAddress.port, 0)
    try first.send([1, 2, 3], to: second.localAddress)
    let received = try XCTUnwrap(try second.receive(timeout: 2))
    XCTAssertEqual(received.bytes, [1, 2, 3])
    XCTAssertEqual(received.source, first.localAddress)
    XCTAssertNil(try second.receive(timeout: 0))
  }

  func testIPAddressTextForms() {
    XCTAssertEqual(ICEIPAddress("192.0.2.1"), .v4(0xC000_0201))
    XCTAssertEqual(
      ICEIPAddress("2001:db8::1")?.description, "2001:db8::1")
    XCTAssertEqual(ICEIPAddress("fe80::1%eth0")?.isLinkLocal, true)
    XCTAssertNil(ICEIPAddress("not an address"))
    XCTAssertEqual(
      ICETransportAddress("2001:db8::1", port: 3478)?.description, "[2001:db8::1]:3478")
  }
}
