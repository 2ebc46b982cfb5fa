import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// ICE-TCP (RFC 6544) and TURN over TCP (RFC 8656 §3.1) in one connection, as the SDK with
/// `transport = .TCP` and a `turn:…?transport=tcp` server: the offer has an active TCP host
/// candidate at once and a relayed (UDP, RFC 8656) one once coturn allocated, and no UDP host
/// candidate. Which pair wins follows from the answer: pairs form only between candidates of
/// one transport (RFC 6544 §6.2), so a UDP-only answerer leaves the relay as the only pair,
/// while a passive-TCP answerer pairs only with the TCP host candidate, which also outranks
/// any relayed pair (type preference 126 against 0, RFC 8445 §5.1.2.2).
final class PeerConnectionICETCPWithTURNTests: XCTestCase {
  private static func tcpWithTURN(_ coturn: CoturnTestServer) -> PeerConnectionConfiguration {
    var configuration = PeerConnectionConfiguration.loopback
    configuration.iceCandidateProtocol = .tcp
    configuration.turnServers = [coturn.server]
    return configuration
  }

  /// Offers, waits for the allocation, answers, and returns the connected pair and the
  /// offerer's candidates.
  private func connect(
    _ peers: LoopbackPeers, coturn: CoturnTestServer, file: StaticString = #filePath,
    line: UInt = #line
  ) throws -> (offered: [ICECandidate], gathered: [ICECandidate], pair: ICECandidatePair) {
    XCTAssertTrue(coturn.waitUntilListening(), "coturn did not listen: \(coturn.log)")
    let offer = try peers.loop.submit { try peers.offerer.localDescriptionForOffer() }
    XCTAssertTrue(
      eventually { peers.offererRecorder.events.value.contains(.gatheringComplete) },
      "no allocation: \(coturn.log)", file: file, line: line)
    let gathered = peers.loop.submit { peers.offerer.localCandidates }
    try peers.loop.submit {
      let answer = try peers.answerer.setRemoteOffer(offer)
      try peers.offerer.setRemoteAnswer(answer)
      for candidate in gathered where candidate.type == .relayed {
        peers.answerer.addRemoteCandidate(candidate)
      }
      peers.answerer.setRemoteEndOfCandidates()
    }
    return (offer.candidates, gathered, try peers.connectedPair(file: file, line: line))
  }

  private func assertCandidates(
    offered: [ICECandidate], gathered: [ICECandidate], file: StaticString = #filePath,
    line: UInt = #line
  ) {
    XCTAssertEqual(offered.map(\.transport), [.tcp], file: file, line: line)
    XCTAssertEqual(offered.map(\.tcpType), [.active], file: file, line: line)
    XCTAssertEqual(
      gathered.map { "\($0.type.rawValue) \($0.transport.rawValue)" },
      ["host tcp", "relay udp"], file: file, line: line)
  }

  func testUDPOnlyAnswererConnectsThroughTheTCPRelay() throws {
    let coturn = try CoturnTestServer(transport: .tcp)
    defer { coturn.stop() }
    let peers = LoopbackPeers(offererConfiguration: Self.tcpWithTURN(coturn))
    defer { peers.shutdown() }
    let (offered, gathered, pair) = try connect(peers, coturn: coturn)
    assertCandidates(offered: offered, gathered: gathered)
    XCTAssertEqual(pair.local.type, .relayed)
    XCTAssertEqual(pair.remote.transport, .udp)
    try peers.exchangeRTP(
      toAnswerer: TestMedia.packets(ssrc: 0x7474_7501, count: 20, seed: 21),
      toOfferer: TestMedia.packets(ssrc: 0x7474_7502, count: 10, seed: 22))
    let streamBytes = peers.loop.submit { peers.offerer.turnStreams.map(\.socket.bytesSent) }
    XCTAssertEqual(streamBytes.count, 1)
    XCTAssertGreaterThan(streamBytes.first ?? 0, 20 * 26, "the media went over the TCP leg")
  }

  func testPassiveTCPAnswererWinsOverTheRelay() throws {
    let coturn = try CoturnTestServer(transport: .tcp)
    defer { coturn.stop() }
    var passive = PeerConnectionConfiguration.loopback
    passive.iceCandidateProtocol = .tcp
    let peers = LoopbackPeers(
      answererLite: true, offererConfiguration: Self.tcpWithTURN(coturn),
      answererConfiguration: passive)
    defer { peers.shutdown() }
    let (offered, gathered, pair) = try connect(peers, coturn: coturn)
    assertCandidates(offered: offered, gathered: gathered)
    XCTAssertEqual(pair.local.type, .host)
    XCTAssertEqual(pair.local.transport, .tcp)
    XCTAssertEqual(pair.remote.tcpType, .passive)
    XCTAssertTrue(ICEAgent.isTCPConnection(pair.socket))
    try peers.exchangeRTP(
      toAnswerer: TestMedia.packets(ssrc: 0x7474_7503, count: 20, seed: 23),
      toOfferer: TestMedia.packets(ssrc: 0x7474_7504, count: 10, seed: 24))
  }
}

extension LoopbackPeers {
  /// Waits until both sides are connected and returns the offerer's selected pair.
  func connectedPair(file: StaticString = #filePath, line: UInt = #line) throws
    -> ICECandidatePair
  {
    XCTAssertTrue(
      waitForBoth { $0 == .connected },
      "states: \(offererRecorder.states) / \(answererRecorder.states)", file: file, line: line)
    return try XCTUnwrap(loop.submit { offerer.stats.selectedPair }, file: file, line: line)
  }
}
