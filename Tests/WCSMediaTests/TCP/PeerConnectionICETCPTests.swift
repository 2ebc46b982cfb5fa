import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// ICE-TCP (RFC 6544) between PeerConnections on loopback: a full offerer with an active TCP
/// candidate against an ICE-lite answerer listening with a passive one, as the SDK with
/// `transport = .TCP` against a WCS set up for media over TCP.
final class PeerConnectionICETCPTests: XCTestCase {
  static var tcp: PeerConnectionConfiguration {
    var configuration = PeerConnectionConfiguration.loopback
    configuration.iceCandidateProtocol = .tcp
    return configuration
  }

  /// Checks, DTLS and RTP both ways run over one RFC 4571 framed connection; RTP arrives
  /// byte-identical and no UDP socket was bound on either side.
  func testActiveOffererConnectsToPassiveLiteAnswererAndCarriesRTP() throws {
    let peers = LoopbackPeers(
      answererLite: true, offererConfiguration: Self.tcp, answererConfiguration: Self.tcp)
    defer { peers.shutdown() }
    let offer = try peers.loop.submit { try peers.offerer.localDescriptionForOffer() }
    XCTAssertEqual(offer.candidates.map(\.tcpType), [.active])
    XCTAssertEqual(offer.candidates.map(\.address.port), [9])
    let answer = try peers.loop.submit {
      let answer = try peers.answerer.setRemoteOffer(offer)
      try peers.offerer.setRemoteAnswer(answer)
      return answer
    }
    XCTAssertEqual(answer.candidates.map(\.tcpType), [.passive])
    XCTAssertTrue(
      answer.candidates.first.map { PeerConnection.sdpCandidate($0)?.tcpType == "passive" }
        ?? false)
    XCTAssertTrue(
      peers.waitForBoth { $0 == .connected },
      "states: \(peers.offererRecorder.states) / \(peers.answererRecorder.states)")
    let toAnswerer = TestMedia.packets(ssrc: 0x7463_7041, count: 40, seed: 3)
    let toOfferer = TestMedia.packets(ssrc: 0x7463_7042, count: 25, seed: 4)
    try peers.exchangeRTP(toAnswerer: toAnswerer, toOfferer: toOfferer)
    let (pair, udpSockets, streams) = peers.loop.submit {
      (
        peers.offerer.stats.selectedPair,
        peers.offerer.sockets.count + peers.answerer.sockets.count,
        peers.answerer.iceTCP.streams.count
      )
    }
    XCTAssertEqual(pair?.local.transport, .tcp)
    XCTAssertEqual(pair?.remote.tcpType, .passive)
    XCTAssertTrue(ICEAgent.isTCPConnection(pair?.socket ?? 0))
    XCTAssertEqual(udpSockets, 0)
    XCTAssertEqual(streams, 1)
  }

  /// The answerer's connection closing (it went away) fails the offerer: the pair's
  /// connection was its only path.
  func testPeerClosingTheConnectionFailsTheOfferer() throws {
    let peers = LoopbackPeers(
      answererLite: true, offererConfiguration: Self.tcp, answererConfiguration: Self.tcp)
    defer { peers.shutdown() }
    try peers.negotiate()
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    peers.loop.submit { peers.answerer.iceTCP.close() }
    XCTAssertTrue(
      eventually { peers.offererRecorder.lastState?.isFinal == true },
      "states: \(peers.offererRecorder.states)")
  }

  /// A UDP-only offerer against a TCP-only lite answerer has no pair at all: it fails at
  /// once with ICE failed rather than after the connect timeout.
  func testUDPOfferAgainstTCPOnlyAnswererFailsWithoutWaiting() throws {
    let peers = LoopbackPeers(answererLite: true, answererConfiguration: Self.tcp)
    defer { peers.shutdown() }
    try peers.negotiate()
    XCTAssertTrue(
      eventually(timeout: 5) { peers.offererRecorder.lastState == .failed(.iceFailed) },
      "states: \(peers.offererRecorder.states)")
  }

  /// TCP peers with the offer answered (the offerer not told yet): the peers, the answer and
  /// the answerer's passive candidate address.
  private func answeredPassivePeers() throws -> (
    LoopbackPeers, PeerConnectionTransportDescription, ICETransportAddress
  ) {
    let peers = LoopbackPeers(
      answererLite: true, offererConfiguration: Self.tcp, answererConfiguration: Self.tcp)
    let offer = try peers.loop.submit { try peers.offerer.localDescriptionForOffer() }
    let answer = try peers.loop.submit { try peers.answerer.setRemoteOffer(offer) }
    return (peers, answer, try XCTUnwrap(answer.candidates.first?.address))
  }

  /// A raw TCP connection from 127.0.0.1 to `address`, with a 2 s receive timeout.
  private func connectRaw(to address: ICETransportAddress) throws -> Int32 {
    let (descriptor, _) = try loopbackTCPSocket(listening: nil)
    var peer = sockaddr_in()
    peer.sin_family = sa_family_t(AF_INET)
    peer.sin_port = address.port.bigEndian
    peer.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
    let connected = withUnsafePointer(to: &peer) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    XCTAssertEqual(connected, 0)
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(
      descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    return descriptor
  }

  /// Bad RFC 4571 framing on the passive side (a zero length; 65535, past the 4096-byte bound)
  /// gets the connection closed by the answerer; half a frame then close is dropped. None of
  /// them disturbs the answerer: the real offerer connects afterwards, on the one stream left.
  func testPassiveSideClosesBadlyFramedConnectionsAndStillServesThePeer() throws {
    let (peers, answer, listener) = try answeredPassivePeers()
    defer { peers.shutdown() }
    for bytes: [UInt8] in [[0, 0], [0xFF, 0xFF] + [UInt8](repeating: 1, count: 100)] {
      let descriptor = try connectRaw(to: listener)
      defer { close(descriptor) }
      XCTAssertEqual(send(descriptor, bytes, bytes.count, 0), bytes.count)
      var buffer = [UInt8](repeating: 0, count: 16)
      XCTAssertEqual(recv(descriptor, &buffer, buffer.count, 0), 0, "closed by the answerer")
    }
    let half = try connectRaw(to: listener)
    let partial: [UInt8] = [0, 100, 1, 2, 3]
    XCTAssertEqual(send(half, partial, partial.count, 0), partial.count)
    close(half)
    XCTAssertTrue(eventually { peers.loop.submit { peers.answerer.iceTCP.streams.isEmpty } })
    try peers.loop.submit { try peers.offerer.setRemoteAnswer(answer) }
    XCTAssertTrue(
      peers.waitForBoth { $0 == .connected },
      "states: \(peers.offererRecorder.states) / \(peers.answererRecorder.states)")
    XCTAssertEqual(peers.loop.submit { peers.answerer.iceTCP.streams.count }, 1)
    XCTAssertEqual(peers.loop.submit { peers.answerer.iceTCP.accepted }, 4)
  }

  /// The passive side keeps at most `PeerConnectionICETCP.maximumAccepted` (16) connections
  /// over its life: past them a connection is closed at once, and no stream is kept for it.
  func testPassiveSideAcceptsABoundedNumberOfConnections() throws {
    let (peers, _, listener) = try answeredPassivePeers()
    defer { peers.shutdown() }
    var descriptors: [Int32] = []
    defer { for descriptor in descriptors { close(descriptor) } }
    for _ in 0..<PeerConnectionICETCP.maximumAccepted {
      descriptors.append(try connectRaw(to: listener))
    }
    XCTAssertTrue(
      eventually {
        peers.loop.submit { peers.answerer.iceTCP.streams.count }
          == PeerConnectionICETCP.maximumAccepted
      })
    let extra = try connectRaw(to: listener)
    descriptors.append(extra)
    var buffer = [UInt8](repeating: 0, count: 16)
    XCTAssertEqual(recv(extra, &buffer, buffer.count, 0), 0, "closed at once")
    XCTAssertEqual(
      peers.loop.submit { peers.answerer.iceTCP.streams.count },
      PeerConnectionICETCP.maximumAccepted)
  }
}
