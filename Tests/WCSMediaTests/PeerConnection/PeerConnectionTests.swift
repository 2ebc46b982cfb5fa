import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// PeerConnection ↔ PeerConnection over real UDP sockets on 127.0.0.1, one process.
final class PeerConnectionTests: XCTestCase {
  func testFullICEOffererAndAnswererConnectAndCarryRTPBothWays() throws {
    try connectAndExchange(answererLite: false)
  }

  func testICELiteAnswererConnectsAndCarriesRTPBothWays() throws {
    try connectAndExchange(answererLite: true)
  }

  private func connectAndExchange(answererLite: Bool) throws {
    let peers = LoopbackPeers(answererLite: answererLite)
    defer { peers.shutdown() }
    try peers.negotiate()
    XCTAssertTrue(
      peers.waitForBoth { $0 == .connected },
      "states: \(peers.offererRecorder.states) / \(peers.answererRecorder.states)")
    XCTAssertEqual(peers.offererRecorder.states, [.connecting, .connected])
    XCTAssertEqual(peers.answererRecorder.states, [.connecting, .connected])

    let (offererStats, answererStats) = peers.loop.submit {
      (peers.offerer.stats, peers.answerer.stats)
    }
    // The answerer answered actpass with active (RFC 8842 §5.3): it is the DTLS client.
    XCTAssertEqual(offererStats.dtlsRole, .server)
    XCTAssertEqual(answererStats.dtlsRole, .client)
    XCTAssertEqual(offererStats.protectionProfile, .aeadAES128GCM)
    XCTAssertEqual(answererStats.protectionProfile, .aeadAES128GCM)
    XCTAssertEqual(offererStats.iceRole, .controlling)
    XCTAssertEqual(answererStats.iceRole, .controlled)
    let offererPair = try XCTUnwrap(offererStats.selectedPair)
    let answererPair = try XCTUnwrap(answererStats.selectedPair)
    XCTAssertEqual(offererPair.local.address, answererPair.remote.address)
    XCTAssertEqual(offererPair.remote.address, answererPair.local.address)
    XCTAssertEqual(offererPair.local.address.ip, .loopbackV4)
    XCTAssertTrue(
      peers.offererRecorder.events.value.contains(
        .dtlsConnected(role: .server, profile: .aeadAES128GCM)))

    let toAnswerer = TestMedia.packets(ssrc: 0x1111_2222, count: 40, seed: 1)
    let toOfferer = TestMedia.packets(ssrc: 0x3333_4444, count: 25, seed: 2)
    try peers.send(toAnswerer, from: peers.offerer)
    try peers.send(toOfferer, from: peers.answerer)
    XCTAssertTrue(
      eventually {
        peers.answererRecorder.rtp.value.count == toAnswerer.count
          && peers.offererRecorder.rtp.value.count == toOfferer.count
      })
    XCTAssertEqual(peers.answererRecorder.rtp.value.map(\.packet), toAnswerer)
    XCTAssertEqual(peers.offererRecorder.rtp.value.map(\.packet), toOfferer)
    XCTAssertEqual(Set(peers.answererRecorder.rtp.value.map(\.ssrc)), [0x1111_2222])
    XCTAssertEqual(Set(peers.offererRecorder.rtp.value.map(\.ssrc)), [0x3333_4444])
    XCTAssertEqual(peers.offererRecorder.offLoopCallbacks.value, 0)

    let bytesToAnswerer = try toAnswerer.reduce(0) { $0 + (try $1.serialized()).count }
    let (sent, received) = peers.loop.submit { (peers.offerer.stats, peers.answerer.stats) }
    XCTAssertEqual(sent.rtpPacketsSent, toAnswerer.count)
    XCTAssertEqual(sent.rtpBytesSent, bytesToAnswerer)
    XCTAssertEqual(received.rtpPacketsReceived, toAnswerer.count)
    XCTAssertEqual(received.rtpBytesReceived, bytesToAnswerer)
    XCTAssertEqual(received.srtpDrops, 0)
  }

  /// RTCP reaches the peer intact, and a receiver report about an SSRC we send gives the RTT
  /// of RFC 3550 §6.4.1: arrival − LSR − DLSR. The report claims our SR left 300 ms ago and
  /// the peer held it 200 ms, so the RTT is 100 ms plus the loopback transit.
  func testRTCPIsDeliveredAndReportBlocksGiveTheRoundTripTime() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    try peers.negotiate()
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    let media = TestMedia.packets(ssrc: 0xABCD_0001, count: 3, seed: 4)
    try peers.send(media, from: peers.offerer)
    XCTAssertNil(peers.loop.submit { peers.offerer.stats.roundTripTime })

    let lastSenderReport = PeerConnection.ntpMiddle32(Date().addingTimeInterval(-0.3))
    let report = try RTCPPacket.serializeCompound([
      .receiverReport(
        RTCPReceiverReport(
          ssrc: 0x0BAD_CAFE,
          reports: [
            RTCPReportBlock(
              ssrc: 0xABCD_0001, highestSequence: 1002, lastSenderReport: lastSenderReport,
              delaySinceLastSenderReport: 65_536 / 5),
            // About an SSRC the offerer never sent: ignored.
            RTCPReportBlock(
              ssrc: 0x0000_0042, highestSequence: 1, lastSenderReport: lastSenderReport,
              delaySinceLastSenderReport: 0),
          ]))
    ])
    try peers.loop.submit { try peers.answerer.sendRTCP(report) }
    XCTAssertTrue(eventually { peers.offererRecorder.rtcp.value.count == 1 })
    XCTAssertEqual(peers.offererRecorder.rtcp.value, [report])
    let rtt = try XCTUnwrap(peers.loop.submit { peers.offerer.stats.roundTripTime })
    XCTAssertGreaterThanOrEqual(rtt, .milliseconds(99))
    XCTAssertLessThan(rtt, .milliseconds(1100))
    let (sent, received) = peers.loop.submit { (peers.answerer.stats, peers.offerer.stats) }
    XCTAssertEqual(sent.rtcpPacketsSent, 1)
    XCTAssertEqual(received.rtcpPacketsReceived, 1)
  }

  func testTamperedAnswerFingerprintFailsBothSidesAndDeliversNoMedia() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    try peers.negotiate { answer in
      var bytes = answer.fingerprint.bytes
      bytes[0] ^= 0x01
      answer.fingerprint =
        (try? DTLSFingerprint(algorithm: .sha256, bytes: bytes)) ?? answer.fingerprint
    }
    XCTAssertTrue(
      peers.waitForBoth {
        if case .failed = $0 { return true }
        return false
      }, "states: \(peers.offererRecorder.states) / \(peers.answererRecorder.states)")
    guard case .failed(.dtls(.fingerprintMismatch)) = peers.offererRecorder.lastState else {
      return XCTFail("offerer: \(peers.offererRecorder.states)")
    }
    XCTAssertFalse(peers.offererRecorder.states.contains(.connected))
    XCTAssertFalse(peers.answererRecorder.states.contains(.connected))
    try peers.loop.submit {
      XCTAssertThrowsError(
        try peers.offerer.sendRTP(TestMedia.packets(ssrc: 1, count: 1, seed: 0)[0].serialized())
      ) {
        XCTAssertEqual($0 as? PeerConnectionError, .notConnected)
      }
      XCTAssertThrowsError(
        try peers.answerer.sendRTP(TestMedia.packets(ssrc: 2, count: 1, seed: 0)[0].serialized())
      ) {
        XCTAssertEqual($0 as? PeerConnectionError, .notConnected)
      }
    }
    XCTAssertEqual(
      peers.offererRecorder.rtp.value.count + peers.answererRecorder.rtp.value.count, 0)
  }

  /// A connection's sockets coalesce (`PeerConnectionConfiguration.receiveCoalescing`) only
  /// from its first connect on: before, the ICE checks (paced every Ta by a timer always due
  /// within the window) and the DTLS handshake would each wait for that timer.
  func testSocketsCoalesceOnlyOnceConnected() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    let before = try peers.loop.submit { () throws -> [Duration] in
      let offer = try peers.offerer.localDescriptionForOffer()
      let answer = try peers.answerer.setRemoteOffer(offer)
      try peers.offerer.setRemoteAnswer(answer)
      return (peers.offerer.sockets + peers.answerer.sockets).map(\.coalescing)
    }
    XCTAssertFalse(before.isEmpty)
    XCTAssertEqual(before, before.map { _ in .zero })
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    let after = peers.loop.submit {
      (peers.offerer.sockets + peers.answerer.sockets).map(\.coalescing)
    }
    XCTAssertEqual(after.count, before.count)
    XCTAssertEqual(after, after.map { _ in .milliseconds(25) })
  }

  func testCloseSendsCloseNotifyAndThePeerGoesDisconnected() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    try peers.negotiate()
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    peers.loop.submit { peers.offerer.close() }
    XCTAssertTrue(eventually { peers.answererRecorder.lastState == .disconnected })
    XCTAssertEqual(peers.offererRecorder.states, [.connecting, .connected, .closed])
    XCTAssertTrue(peers.answererRecorder.events.value.contains(.remoteClosed))
    try peers.loop.submit {
      XCTAssertEqual(peers.offerer.sockets.allSatisfy(\.isClosed), true)
      XCTAssertEqual(peers.loop.pendingTimerCount, peers.answerer.timer == nil ? 0 : 1)
      XCTAssertThrowsError(
        try peers.answerer.sendRTP(TestMedia.packets(ssrc: 2, count: 1, seed: 0)[0].serialized())
      ) {
        XCTAssertEqual($0 as? PeerConnectionError, .notConnected)
      }
      XCTAssertThrowsError(
        try peers.offerer.sendRTP(TestMedia.packets(ssrc: 1, count: 1, seed: 0)[0].serialized())
      ) {
        XCTAssertEqual($0 as? PeerConnectionError, .notConnected)
      }
    }
  }

  /// The peer vanishes without close_notify (its sockets closed): consent checks go
  /// unanswered, so the state goes disconnected, then failed (RFC 7675), and media stops.
  func testLostConsentGoesDisconnectedThenFailed() throws {
    var configuration = PeerConnectionConfiguration.loopback
    configuration.iceConsentInterval = .milliseconds(50)
    configuration.iceDisconnectedTimeout = .milliseconds(500)
    configuration.iceConsentTimeout = .seconds(1)
    let peers = LoopbackPeers(offererConfiguration: configuration)
    defer { peers.shutdown() }
    try peers.negotiate()
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    // Consent answered for a while: still connected after several intervals.
    usleep(300_000)
    XCTAssertEqual(peers.offererRecorder.lastState, .connected)
    peers.loop.submit {
      for socket in peers.answerer.sockets { socket.close() }
    }
    XCTAssertTrue(
      eventually {
        if case .failed = peers.offererRecorder.lastState { return true }
        return false
      }, "\(peers.offererRecorder.states)")
    XCTAssertEqual(
      peers.offererRecorder.states, [.connecting, .connected, .disconnected, .failed(.iceFailed)])
    try peers.loop.submit {
      XCTAssertThrowsError(
        try peers.offerer.sendRTP(TestMedia.packets(ssrc: 1, count: 1, seed: 0)[0].serialized())
      ) {
        XCTAssertEqual($0 as? PeerConnectionError, .notConnected)
      }
      XCTAssertTrue(peers.offerer.sockets.allSatisfy(\.isClosed))
    }
  }

  /// Garbage in every RFC 7983 range, from the peer's own address and from a stranger, is
  /// dropped and counted; the connection stays up and media still flows.
  func testMalformedDatagramsAreDroppedWithoutHarm() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    try peers.negotiate()
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    var generator = SystemRandomNumberGenerator()
    var garbage: [[UInt8]] = [
      [], [0x00], [0x80], [0x80, 0x6F], [0x16, 0xFE, 0xFD], [0xFF, 0x00],
    ]
    for first: UInt8 in [0x00, 0x01, 0x14, 0x16, 0x17, 0x40, 0x80, 0x81, 0x90, 0xC8, 0xBF] {
      for length in [2, 12, 20, 28, 100, 1200] {
        garbage.append(
          [first] + (1..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
      }
    }
    let stranger = try peers.loop.submit {
      try EventLoopUDPSocket(
        loop: peers.loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)
      ) { _, _ in }
    }
    try peers.loop.submit {
      let target = try XCTUnwrap(peers.answerer.stats.selectedPair).local.address
      let fromPeer = try XCTUnwrap(peers.offerer.stats.selectedPair).socket
      for datagram in garbage {
        try peers.offerer.sockets[fromPeer].send(datagram, to: target)
        try stranger.send(datagram, to: target)
      }
    }
    let media = TestMedia.packets(ssrc: 0x7777_0001, count: 5, seed: 7)
    try peers.send(media, from: peers.offerer)
    XCTAssertTrue(eventually { peers.answererRecorder.rtp.value.count == media.count })
    XCTAssertEqual(peers.answererRecorder.rtp.value.map(\.packet), media)
    let stats = peers.loop.submit { peers.answerer.stats }
    XCTAssertEqual(stats.state, .connected)
    XCTAssertGreaterThan(stats.srtpDrops, 0)
    XCTAssertGreaterThan(stats.unexpectedDatagrams, 0)
    XCTAssertEqual(peers.answererRecorder.lastState, .connected)
    peers.loop.submit { stranger.close() }
  }

  func testAnswerWithoutSetupIsTakenAsActiveAndConnects() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    try peers.negotiate { $0.setup = nil }
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    let role = peers.loop.submit { peers.offerer.stats.dtlsRole }
    XCTAssertEqual(role, .server)
  }

  func testSignallingOutOfOrderIsRejected() throws {
    let loop = EventLoop(label: "order")
    defer { loop.shutdown() }
    let connection = PeerConnection(configuration: .loopback, loop: loop)
    try loop.submit {
      let offer = try connection.localDescriptionForOffer()
      XCTAssertEqual(offer.setup, .actpass)
      XCTAssertEqual(offer.candidates.map(\.address.ip), [.loopbackV4])
      XCTAssertThrowsError(try connection.localDescriptionForOffer())
      XCTAssertThrowsError(try connection.setRemoteOffer(offer))
      var holding = offer
      holding.setup = .holdconn
      XCTAssertThrowsError(try connection.setRemoteAnswer(holding)) {
        guard case .incompatibleSetup = $0 as? PeerConnectionError else {
          return XCTFail("\($0)")
        }
      }
      connection.close()
      XCTAssertEqual(connection.state, .closed)
    }
  }
}
