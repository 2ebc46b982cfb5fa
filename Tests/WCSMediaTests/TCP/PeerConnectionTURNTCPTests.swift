import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// A relay-only PeerConnection whose TURN server is reached over TCP (RFC 8656 §3.1): coturn
/// on 127.0.0.1 with UDP listening off (`--no-udp`), so only the TCP leg can allocate.
final class PeerConnectionTURNTCPTests: XCTestCase {
  /// Allocation, checks, DTLS and RTP both ways run over the TCP connection to coturn; RTP
  /// arrives byte-identical on both sides and coturn reports a TCP allocation.
  func testRelayOnlyOffererConnectsThroughTURNOverTCP() throws {
    let coturn = try CoturnTestServer(transport: .tcp)
    defer { coturn.stop() }
    XCTAssertTrue(coturn.waitUntilListening(), "coturn did not listen: \(coturn.log)")
    let peers = LoopbackPeers(offererConfiguration: .relayOnly(through: coturn))
    defer { peers.shutdown() }

    let offer = try peers.loop.submit { try peers.offerer.localDescriptionForOffer() }
    XCTAssertEqual(offer.candidates, [])
    try peers.loop.submit {
      let answer = try peers.answerer.setRemoteOffer(offer)
      try peers.offerer.setRemoteAnswer(answer)
    }
    XCTAssertTrue(
      eventually { peers.offererRecorder.events.value.contains(.gatheringComplete) },
      "no allocation: \(coturn.log)")
    let local = peers.loop.submit { peers.offerer.localCandidates }
    XCTAssertEqual(local.map(\.type), [.relayed], "coturn: \(coturn.log)")
    let relayed = try XCTUnwrap(local.first)
    XCTAssertNotEqual(relayed.address, coturn.server.address)
    peers.loop.submit {
      peers.answerer.addRemoteCandidate(relayed)
      peers.answerer.setRemoteEndOfCandidates()
    }
    XCTAssertTrue(
      peers.waitForBoth { $0 == .connected },
      "states: \(peers.offererRecorder.states) / \(peers.answererRecorder.states)")
    let pair = try XCTUnwrap(peers.loop.submit { peers.offerer.stats.selectedPair })
    XCTAssertEqual(pair.local.type, .relayed)
    XCTAssertLessThan(pair.socket, 0)

    let toAnswerer = TestMedia.packets(ssrc: 0x7463_7031, count: 40, seed: 5)
    let toOfferer = TestMedia.packets(ssrc: 0x7463_7032, count: 25, seed: 9)
    try peers.send(toAnswerer, from: peers.offerer)
    try peers.send(toOfferer, from: peers.answerer)
    XCTAssertTrue(
      eventually {
        peers.answererRecorder.rtp.value.count == toAnswerer.count
          && peers.offererRecorder.rtp.value.count == toOfferer.count
      })
    XCTAssertEqual(peers.answererRecorder.rtp.value.map(\.packet), toAnswerer)
    XCTAssertEqual(peers.offererRecorder.rtp.value.map(\.packet), toOfferer)
    let (stats, stream) = peers.loop.submit {
      (
        peers.offerer.stats,
        peers.offerer.turnStreams.first.map {
          ($0.socket.bytesSent, $0.socket.bytesReceived, $0.writeFailures)
        }
      )
    }
    XCTAssertEqual(stats.relayedSendFailures, 0)
    XCTAssertGreaterThan(stats.relayedDatagramsSent, toAnswerer.count)
    let (sent, received, failures) = try XCTUnwrap(stream)
    // Every RTP packet went over the TCP leg, in a Send indication of 36+ bytes more.
    XCTAssertGreaterThan(sent, toAnswerer.reduce(0) { $0 + $1.payload.count + 36 })
    XCTAssertGreaterThan(received, toOfferer.reduce(0) { $0 + $1.payload.count })
    XCTAssertEqual(failures, 0)
    XCTAssertTrue(coturn.log.contains("TCP"), coturn.log)
    peers.loop.submit { peers.offerer.close() }
    XCTAssertTrue(eventually { !coturn.peerUsages.isEmpty }, "coturn log: \(coturn.log)")
  }

  /// A TURN "server" that accepts the TCP connection and never answers: the allocation fails
  /// after Ti (virtual clock in the client test), here the connection's own connect timeout
  /// ends it; gathering completes with no candidate and no descriptor is left open.
  func testUnreachableTURNOverTCPFailsGatheringWithoutLeakingSockets() throws {
    let loop = EventLoop(label: "turn-tcp-refused")
    defer { loop.shutdown() }
    let port = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
      .localAddress.port
    var configuration = PeerConnectionConfiguration.loopback
    configuration.turnServers = [
      ICETURNServer(
        address: ICETransportAddress(ip: .loopbackV4, port: port), username: "u",
        password: "p", transport: .tcp)
    ]
    configuration.iceTransportPolicy = .relay
    let before = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count)
    let connection = PeerConnection(configuration: configuration, loop: loop)
    let recorder = PeerRecorder()
    _ = try loop.submit {
      recorder.attach(to: connection)
      return try connection.localDescriptionForOffer()
    }
    // Refused at once (nothing listens there): the relay fails and gathering ends.
    XCTAssertTrue(eventually(timeout: 5) { recorder.events.value.contains(.gatheringComplete) })
    XCTAssertEqual(loop.submit { connection.localCandidates }, [])
    XCTAssertEqual(loop.submit { connection.turnStreams.map(\.socket.isClosed) }, [true])
    loop.submit { connection.close() }
    let after = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count)
    XCTAssertEqual(after, before)
  }
}
