import XCTest

@testable import WCSProtocols

/// ChannelBind and ChannelData (RFC 8656 §12) and the stream transports' timing (RFC 8489
/// §6.2.2), against a scripted server on a virtual clock.
final class TURNClientChannelTests: XCTestCase {
  private let key = try! STUNIntegrityKey.longTerm(
    username: "user", realm: "wcs.test", password: "secret")
  private let peer = ICETransportAddress(ip: .v4(0xC633_6407), port: 40_000)

  private func server(_ transport: ICETURNTransport) -> ICETURNServer {
    ICETURNServer(
      address: ICETransportAddress(ip: .v4(0xC000_0264), port: 3478), username: "user",
      password: "secret", transport: transport)
  }

  private func requests(_ client: TURNClient) throws -> [STUNMessage] {
    try client.takeDatagrams().map { try STUNMessage.decode($0.bytes) }
  }

  private func answer(
    _ request: STUNMessage, _ messageClass: STUNClass = .successResponse,
    _ attributes: [STUNAttribute] = [], key: STUNIntegrityKey?
  ) throws -> [UInt8] {
    try STUNMessage(
      type: STUNMessageType(method: request.type.method, messageClass: messageClass),
      transactionID: request.transactionID, attributes: attributes
    ).encode(key: key, fingerprint: true)
  }

  /// A client whose allocation succeeded (401 challenge first).
  private func allocated(_ transport: ICETURNTransport) throws -> TURNClient {
    let client = TURNClient(server: server(transport), socket: 0, randomSeed: 4)
    client.start(now: virtualTime(0))
    let first = try XCTUnwrap(try requests(client).first)
    client.receive(
      try answer(
        first, .errorResponse,
        [.errorCode(code: 401, reason: "Unauthorized"), .realm("wcs.test"), .nonce("n")],
        key: nil), now: virtualTime(0.01))
    let signed = try XCTUnwrap(try requests(client).first)
    client.receive(
      try answer(
        signed, .successResponse,
        [
          .xorRelayedAddress(ICETransportAddress(ip: .v4(0xC000_0264), port: 50_000)),
          .lifetime(600),
        ], key: key), now: virtualTime(0.02))
    XCTAssertNotNil(client.relayedAddress)
    _ = client.takeEvents()
    return client
  }

  func testDataGoesInChannelDataOnceTheChannelIsBound() throws {
    let client = try allocated(.udp)
    client.send([1, 2, 3, 4, 5], to: peer, now: virtualTime(1))
    let first = try requests(client)
    XCTAssertEqual(
      first.map(\.type.method), [.createPermission, .channelBind, .send],
      "permission, channel, and the data in a Send indication meanwhile")
    let bind = first[1]
    XCTAssertEqual(bind.attributes.first, .channelNumber(0x4000))
    XCTAssertEqual(bind.xorPeerAddress, peer)
    XCTAssertNoThrow(try bind.verifyIntegrity(key: key))
    // An unsigned success to a signed ChannelBind is ignored: the channel stays unbound.
    client.receive(try answer(bind, key: nil), now: virtualTime(1.01))
    XCTAssertEqual(client.boundChannels, 0)
    client.receive(try answer(bind, key: key), now: virtualTime(1.02))
    XCTAssertEqual(client.boundChannels, 1)

    client.send([9, 8, 7, 6, 5], to: peer, now: virtualTime(2))
    XCTAssertEqual(client.takeDatagrams().map(\.bytes), [[0x40, 0x00, 0x00, 0x05, 9, 8, 7, 6, 5]])
    // ChannelData from the server, padded as over UDP it may be: the announced length counts.
    XCTAssertTrue(client.receive([0x40, 0x00, 0x00, 0x03, 7, 7, 7, 0], now: virtualTime(2.1)))
    XCTAssertEqual(client.takeEvents(), [.data(peer: peer, bytes: [7, 7, 7])])
    // An unbound channel and a length past the datagram are dropped and counted.
    XCTAssertTrue(client.receive([0x40, 0x01, 0x00, 0x01, 1], now: virtualTime(2.2)))
    XCTAssertTrue(client.receive([0x40, 0x00, 0x00, 0x09, 1], now: virtualTime(2.3)))
    XCTAssertEqual(client.takeEvents(), [])
    XCTAssertEqual(client.unknownChannelData, 2)

    // Bound again before its 10 minutes end.
    var now = virtualTime(2.3)
    var rebinds = 0
    while let deadline = client.nextDeadline, deadline < virtualTime(600) {
      now = deadline
      client.handleTimeout(now: now)
      for request in try requests(client) where request.type.method == .channelBind {
        rebinds += 1
        XCTAssertEqual(request.attributes.first, .channelNumber(0x4000))
        client.receive(try answer(request, key: key), now: now)
      }
    }
    XCTAssertEqual(rebinds, 1)
    XCTAssertGreaterThan(now, virtualTime(500))
  }

  func testARefusedChannelFallsBackToSendIndications() throws {
    let client = try allocated(.udp)
    client.send([1], to: peer, now: virtualTime(1))
    let bind = try XCTUnwrap(try requests(client).first { $0.type.method == .channelBind })
    client.receive(
      try answer(bind, .errorResponse, [.errorCode(code: 400, reason: "Bad Request")], key: key),
      now: virtualTime(1.1))
    XCTAssertFalse(client.failed)
    client.send([2], to: peer, now: virtualTime(2))
    XCTAssertEqual(
      try requests(client).map(\.type.method), [.send],
      "no new ChannelBind for that peer: the data goes in a Send indication")
  }

  /// Over TCP or TLS nothing is retransmitted and a server that never answers fails the
  /// allocation after Ti = 39.5 s, with one request sent.
  func testStreamTransportsDoNotRetransmitAndTimeOutAfterTi() throws {
    for transport in [ICETURNTransport.tcp, .tls] {
      let client = TURNClient(server: server(transport), socket: 0, randomSeed: 5)
      client.start(now: virtualTime(0))
      var sent = client.takeDatagrams().count
      XCTAssertEqual(client.nextDeadline, virtualTime(39.5))
      while let deadline = client.nextDeadline {
        client.handleTimeout(now: deadline)
        sent += client.takeDatagrams().count
      }
      XCTAssertEqual(sent, 1)
      XCTAssertEqual(client.takeEvents(), [.failed("allocate timed out")])
    }
  }

  /// A server answering every signed Allocate with 401 (a wrong password) or 438 gets two
  /// signed tries, then the allocation fails with its reason; nothing loops.
  func testChallengeLoopsAreBounded() throws {
    for code in [401, 438] {
      let client = TURNClient(server: server(.tcp), socket: 0, randomSeed: 6)
      client.start(now: virtualTime(0))
      var sent = 0
      var now = virtualTime(0)
      while let request = try requests(client).first {
        sent += 1
        now += .milliseconds(10)
        client.receive(
          try answer(
            request, .errorResponse,
            [.errorCode(code: code, reason: "No"), .realm("wcs.test"), .nonce("n\(sent)")],
            key: nil), now: now)
        XCTAssertLessThan(sent, 10)
      }
      XCTAssertEqual(sent, 3, "\(code)")
      XCTAssertEqual(client.takeEvents(), [.failed("allocate: \(code) No")])
    }
  }
}
