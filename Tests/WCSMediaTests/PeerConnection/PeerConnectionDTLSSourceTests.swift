import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// DTLS is accepted only from addresses ICE validated: one datagram from an off-path stranger
/// must neither fail a stream before its handshake nor draw the handshake's replies.
final class PeerConnectionDTLSSourceTests: XCTestCase {
  /// A plaintext fatal alert, handshake_failure (RFC 6347 §4.1, RFC 5246 §7.2): content type
  /// 21, DTLS 1.2, epoch 0, sequence 0, length 2, level 2, description 40.
  static let plaintextAlert: [UInt8] =
    [21, 0xFE, 0xFD] + [UInt8](repeating: 0, count: 8) + [0x00, 0x02, 2, 40]
  /// A handshake record (content type 22) with junk for a body: "hello".
  static let fakeClientHello: [UInt8] =
    [22, 0xFE, 0xFD] + [UInt8](repeating: 0, count: 8) + [0x00, 0x05] + Array("hello".utf8)

  func testStrangerDTLSBeforeICEIsDroppedAndTheRealPeerStillConnects() throws {
    let peers = LoopbackPeers(answererLite: true)
    defer { peers.shutdown() }
    let strangerReceived = LoopShared<[[UInt8]]>([])
    let stranger = try peers.loop.submit {
      try EventLoopUDPSocket(
        loop: peers.loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)
      ) { bytes, _ in strangerReceived.mutate { $0.append(Array(bytes)) } }
    }
    defer { peers.loop.submit { stranger.close() } }

    // The answer is made (sockets bound, DTLS endpoint ready) but the offerer has not seen it,
    // so no ICE check has reached the answerer yet.
    let offer = try peers.loop.submit { try peers.offerer.localDescriptionForOffer() }
    let answer = try peers.loop.submit { try peers.answerer.setRemoteOffer(offer) }
    let target = try XCTUnwrap(answer.candidates.first).address
    XCTAssertEqual(target.ip, .loopbackV4)
    try peers.loop.submit {
      try stranger.send(Self.plaintextAlert, to: target)
      try stranger.send(Self.fakeClientHello, to: target)
    }
    XCTAssertTrue(
      eventually { peers.loop.submit { peers.answerer.stats.unexpectedDatagrams } == 2 })
    let before = peers.loop.submit { peers.answerer.stats }
    XCTAssertTrue([.new, .connecting].contains(before.state), "\(before.state)")
    XCTAssertEqual(peers.answererRecorder.states.filter { $0 != .connecting }, [])

    try peers.loop.submit { try peers.offerer.setRemoteAnswer(answer) }
    XCTAssertTrue(
      peers.waitForBoth { $0 == .connected },
      "states: \(peers.offererRecorder.states) / \(peers.answererRecorder.states)")
    XCTAssertEqual(peers.answererRecorder.states, [.connecting, .connected])
    XCTAssertEqual(peers.offererRecorder.states, [.connecting, .connected])

    let media = TestMedia.packets(ssrc: 0x5151_0001, count: 10, seed: 9)
    try peers.send(media, from: peers.offerer)
    XCTAssertTrue(eventually { peers.answererRecorder.rtp.value.count == media.count })
    XCTAssertEqual(peers.answererRecorder.rtp.value.map(\.packet), media)

    // The stranger heard nothing: no DTLS record, no STUN, no SRTP.
    XCTAssertEqual(strangerReceived.value, [])
    let after = peers.loop.submit { peers.answerer.stats }
    XCTAssertEqual(after.unexpectedDatagrams, 2)
    XCTAssertEqual(after.dtlsRole, .client)
    XCTAssertEqual(after.srtpDrops, 0)
  }

  /// The agent's validation record: an unauthenticated request or one with a wrong password
  /// validates nothing; a request signed with our password validates its source on its socket
  /// only.
  func testOnlyAuthenticatedBindingRequestsValidateTheirSource() throws {
    let agent = ICEAgent(
      configuration: ICEAgentConfiguration(
        mode: .lite,
        localCredentials: ICECredentials(ufrag: "lite", pwd: "litepasswordlitepassword")))
    let local = ICETransportAddress(ip: .loopbackV4, port: 40_000)
    let peer = ICETransportAddress(ip: .loopbackV4, port: 50_000)
    agent.addLocalSocket(0, address: local, now: virtualTime(0))
    agent.setRemoteCredentials(
      ICECredentials(ufrag: "peer", pwd: "peerpasswordpeerpassword"), now: virtualTime(0))

    func request(password: String) throws -> [UInt8] {
      let message = STUNMessage(
        type: .bindingRequest,
        attributes: [.username("lite:peer"), .priority(0x6E00_1EFF), .iceControlling(1)])
      return try message.encode(
        key: STUNIntegrityKey(shortTermPassword: password), fingerprint: true)
    }
    agent.receive(
      try request(password: "wrongpasswordwrongpassword"), from: peer, socket: 0,
      now: virtualTime(1))
    XCTAssertEqual(agent.integrityFailures, 1)
    XCTAssertFalse(agent.isValidated(peer, socket: 0))

    agent.receive(
      try request(password: "litepasswordlitepassword"), from: peer, socket: 0, now: virtualTime(2))
    XCTAssertTrue(agent.isValidated(peer, socket: 0))
    XCTAssertFalse(agent.isValidated(peer, socket: 1))
    XCTAssertFalse(
      agent.isValidated(ICETransportAddress(ip: .loopbackV4, port: 50_001), socket: 0))
  }
}
