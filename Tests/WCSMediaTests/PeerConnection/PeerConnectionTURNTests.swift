import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// PeerConnections whose selected pair uses a local relayed candidate (RFC 8656), through coturn
/// on 127.0.0.1: DTLS and SRTP must go through the TURN server, not straight to the peer.
final class PeerConnectionTURNTests: XCTestCase {
  /// The relay-policy offerer signals only its relayed candidate; ICE, DTLS (fingerprints
  /// verified) and RTP both ways run through coturn, which reports the relayed packets.
  func testRelayOnlyOffererCarriesDTLSAndRTPThroughCoturn() throws {
    let coturn = try CoturnTestServer()
    defer { coturn.stop() }
    let peers = LoopbackPeers(offererConfiguration: .relayOnly(through: coturn))
    defer { peers.shutdown() }

    let offer = try peers.loop.submit { try peers.offerer.localDescriptionForOffer() }
    // Nothing to signal before the allocation: no host candidate, no end-of-candidates.
    XCTAssertEqual(offer.candidates, [])
    XCTAssertFalse(offer.endOfCandidates)
    let answer = try peers.loop.submit {
      let answer = try peers.answerer.setRemoteOffer(offer)
      try peers.offerer.setRemoteAnswer(answer)
      return answer
    }
    let answererHost = try XCTUnwrap(answer.candidates.first).address

    XCTAssertTrue(
      eventually { peers.offererRecorder.events.value.contains(.gatheringComplete) },
      "no allocation: \(coturn.log)")
    let (local, offererAddresses) = peers.loop.submit {
      (peers.offerer.localCandidates, peers.offerer.localAddresses)
    }
    XCTAssertEqual(local.map(\.type), [.relayed])
    let relayed = try XCTUnwrap(local.first)
    XCTAssertEqual(relayed.address.ip, .loopbackV4)
    XCTAssertFalse(offererAddresses.contains(relayed.address))
    XCTAssertNotEqual(relayed.address, coturn.server.address)
    // No local address in raddr either (RFC 8828 mode 4).
    XCTAssertEqual(relayed.relatedAddress, ICETransportAddress(ip: .v4(0), port: 0))
    let events = peers.offererRecorder.events.value
    XCTAssertEqual(
      events.compactMap {
        if case .localCandidate(let candidate) = $0 { return candidate }
        return nil
      }, [relayed])
    peers.loop.submit {
      peers.answerer.addRemoteCandidate(relayed)
      peers.answerer.setRemoteEndOfCandidates()
    }

    XCTAssertTrue(
      peers.waitForBoth { $0 == .connected },
      "states: \(peers.offererRecorder.states) / \(peers.answererRecorder.states)")
    let (offererPair, answererPair) = peers.loop.submit {
      (peers.offerer.stats.selectedPair, peers.answerer.stats.selectedPair)
    }
    let pair = try XCTUnwrap(offererPair)
    XCTAssertEqual(pair.local.type, .relayed)
    XCTAssertEqual(pair.local.address, relayed.address)
    XCTAssertLessThan(pair.socket, 0)
    XCTAssertEqual(pair.remote.address, answererHost)
    // The far side sees the relay's address as its peer: every check, DTLS record and SRTP
    // packet it accepted came from there.
    XCTAssertEqual(answererPair?.remote.address, relayed.address)
    XCTAssertEqual(answererPair?.local.address, answererHost)
    // `.dtlsConnected` comes only after the peer's certificate matched its SDP fingerprint.
    XCTAssertTrue(
      peers.offererRecorder.events.value.contains {
        if case .dtlsConnected = $0 { return true }
        return false
      })
    XCTAssertTrue(
      peers.answererRecorder.events.value.contains {
        if case .dtlsConnected = $0 { return true }
        return false
      })

    let toAnswerer = TestMedia.packets(ssrc: 0x7475_726E, count: 20, seed: 3)
    let toOfferer = TestMedia.packets(ssrc: 0x6E72_7574, count: 15, seed: 11)
    try peers.send(toAnswerer, from: peers.offerer)
    try peers.send(toOfferer, from: peers.answerer)
    XCTAssertTrue(
      eventually {
        peers.answererRecorder.rtp.value.count == toAnswerer.count
          && peers.offererRecorder.rtp.value.count == toOfferer.count
      })
    XCTAssertEqual(peers.answererRecorder.rtp.value.map(\.packet), toAnswerer)
    XCTAssertEqual(peers.answererRecorder.rtp.value.map(\.ssrc), toAnswerer.map(\.header.ssrc))
    XCTAssertEqual(peers.offererRecorder.rtp.value.map(\.packet), toOfferer)
    XCTAssertEqual(
      peers.offererRecorder.rtp.value.map(\.packet.payload), toOfferer.map(\.payload))

    let (offererStats, answererStats) = peers.loop.submit {
      (peers.offerer.stats, peers.answerer.stats)
    }
    // At least the DTLS flights and every RTP packet went out in Send indications.
    XCTAssertGreaterThan(offererStats.relayedDatagramsSent, toAnswerer.count)
    XCTAssertEqual(offererStats.relayedSendFailures, 0)
    XCTAssertEqual(offererStats.rtpPacketsSent, toAnswerer.count)
    XCTAssertEqual(answererStats.rtpPacketsReceived, toAnswerer.count)
    XCTAssertEqual(offererStats.rtpPacketsReceived, toOfferer.count)
    XCTAssertEqual(offererStats.srtpDrops + answererStats.srtpDrops, 0)
    XCTAssertEqual(answererStats.relayedDatagramsSent, 0)

    // A pseudo socket that names no relay: refused, counted, nothing sent.
    let refused = peers.loop.submit { () -> PeerConnectionError? in
      [UInt8](repeating: 0x80, count: 12).withUnsafeBytes { bytes in
        do throws(PeerConnectionError) {
          try peers.offerer.sendApplicationDatagram(bytes, socket: -9, to: answererHost)
          return nil
        } catch {
          return error
        }
      }
    }
    XCTAssertEqual(refused, .notConnected)
    let failures = peers.loop.submit { peers.offerer.stats.relayedSendFailures }
    XCTAssertEqual(failures, 1)

    // Closing releases the allocation; coturn then reports what it relayed for the peer.
    peers.loop.submit { peers.offerer.close() }
    XCTAssertTrue(eventually { !coturn.peerUsages.isEmpty }, "coturn log: \(coturn.log)")
    let usage = try XCTUnwrap(coturn.peerUsages.last)
    // Packets to and from the peer: checks, DTLS, then the RTP above.
    XCTAssertGreaterThan(usage.sentPackets, toAnswerer.count)
    XCTAssertGreaterThan(usage.receivedPackets, toOfferer.count)
    let payloadBytes = { (packets: [RTPPacket]) in packets.reduce(0) { $0 + $1.payload.count } }
    XCTAssertGreaterThan(usage.sentBytes, payloadBytes(toAnswerer))
    XCTAssertGreaterThan(usage.receivedBytes, payloadBytes(toOfferer))
  }

  /// SDP without trickle: a relay-policy answerer's first answer has no candidate and no
  /// `a=end-of-candidates`; `localDescriptionWithCandidates` after gathering has the relayed
  /// candidate as the default address, and with it the offerer connects through coturn.
  func testRelayOnlyAnswererSDPAfterGatheringConnects() throws {
    let coturn = try CoturnTestServer()
    defer { coturn.stop() }
    let loop = EventLoop(label: "PeerConnectionTURNTests-sdp")
    let offerer = PeerConnection(configuration: .loopback, loop: loop)
    let answerer = PeerConnection(configuration: .relayOnly(through: coturn), loop: loop)
    let offererRecorder = PeerRecorder()
    let answererRecorder = PeerRecorder()
    defer {
      loop.submit {
        offerer.close()
        answerer.close()
      }
      loop.shutdown()
    }
    let audio = SDPOfferParameters.Audio(
      direction: .sendrecv, ssrc: 0x7265_6C01, trackId: "relay-audio", includeG711: false)
    let firstAnswer = try loop.submit {
      offererRecorder.attach(to: offerer)
      answererRecorder.attach(to: answerer)
      let offer = try offerer.createOffer(audio: audio, video: nil)
      try answerer.setRemoteDescription(offer: offer)
      return try answerer.createAnswer()
    }
    XCTAssertFalse(firstAnswer.contains("a=candidate:"))
    XCTAssertFalse(firstAnswer.contains("a=end-of-candidates"))
    XCTAssertTrue(
      eventually { answererRecorder.events.value.contains(.gatheringComplete) },
      "no allocation: \(coturn.log)")
    let relayed = try XCTUnwrap(loop.submit { answerer.localCandidates.first })
    XCTAssertEqual(relayed.type, .relayed)
    let answer = try XCTUnwrap(loop.submit { answerer.localDescriptionWithCandidates() })
    XCTAssertEqual(answer.components(separatedBy: "a=candidate:").count, 2)
    XCTAssertTrue(answer.contains("\r\na=\(relayed)\r\na=end-of-candidates\r\n"))
    XCTAssertTrue(answer.contains("m=audio \(relayed.address.port) "), answer)
    XCTAssertTrue(answer.contains("c=IN IP4 127.0.0.1\r\n"))
    try loop.submit { try offerer.setRemoteDescription(answer: answer) }

    XCTAssertTrue(
      eventually {
        offererRecorder.lastState == .connected && answererRecorder.lastState == .connected
      },
      "states: \(offererRecorder.states) / \(answererRecorder.states)")
    let (offererPair, answererPair) = loop.submit {
      (offerer.stats.selectedPair, answerer.stats.selectedPair)
    }
    XCTAssertEqual(answererPair?.local.type, .relayed)
    XCTAssertEqual(offererPair?.remote.address, relayed.address)
    let media = TestMedia.packets(ssrc: audio.ssrc, count: 10, seed: 5)
    let reply = TestMedia.packets(ssrc: 0x7265_6C02, count: 10, seed: 6)
    try loop.submit {
      for packet in media { try offerer.sendRTP(try packet.serialized()) }
      for packet in reply { try answerer.sendRTP(try packet.serialized()) }
    }
    XCTAssertTrue(
      eventually {
        answererRecorder.rtp.value.count == media.count
          && offererRecorder.rtp.value.count == reply.count
      })
    XCTAssertEqual(answererRecorder.rtp.value.map(\.packet), media)
    XCTAssertEqual(offererRecorder.rtp.value.map(\.packet), reply)
    let relayedSends = loop.submit { answerer.stats.relayedDatagramsSent }
    XCTAssertGreaterThanOrEqual(relayedSends, reply.count)
  }

  /// DTLS that arrives through the relay before any pair is selected (the peer never
  /// nominates) is answered through the same relay: the peer sees every reply come from the
  /// relayed address, and the handshake completes that way.
  func testDTLSBeforeNominationIsAnsweredThroughTheRelay() throws {
    // The far side: a plain socket on the test thread, full ICE and a DTLS client by hand.
    let farSide = try RelayedFarSide(
      label: "PeerConnectionTURNTests",
      peerCredentials: ICECredentials(ufrag: "fars", pwd: "farsidepasswordfarside01"))
    defer { farSide.shutdown() }
    let (loop, connection) = (farSide.loop, farSide.connection)
    let answer = try loop.submit { try connection.setRemoteOffer(farSide.offer) }
    XCTAssertEqual(answer.setup, .passive)
    XCTAssertEqual(answer.candidates, [])
    let relayed = try farSide.relayedCandidate()
    XCTAssertEqual(relayed.type, .relayed)
    let hostAddresses = loop.submit { connection.localAddresses }

    let handshake = try farSide.runICEAndDTLS(answer: answer, relayed: relayed, localRole: .server)
    for error in handshake.dtlsFailures { XCTFail("far side DTLS failed: \(error)") }

    XCTAssertTrue(handshake.validated, "never validated; coturn log: \(farSide.coturn.log)")
    XCTAssertTrue(handshake.keys != nil, "far side DTLS did not connect")
    XCTAssertTrue(
      farSide.localDTLSConnected(role: .server), "events: \(farSide.recorder.events.value)")
    XCTAssertGreaterThan(handshake.checksFromRelay, 0)
    // Every DTLS record (and everything else) reached the far side from the relayed address,
    // none straight from a host socket.
    XCTAssertFalse(handshake.dtlsSources.isEmpty)
    XCTAssertEqual(Set(handshake.dtlsSources), [relayed.address])
    XCTAssertEqual(Set(handshake.sources), [relayed.address])
    XCTAssertTrue(Set(hostAddresses).isDisjoint(with: handshake.sources))
    let stats = loop.submit { connection.stats }
    // The handshake ran on the fallback destination: no pair was ever selected.
    XCTAssertNil(stats.selectedPair)
    XCTAssertEqual(stats.dtlsRole, .server)
    XCTAssertGreaterThan(stats.relayedDatagramsSent, 0)
    XCTAssertEqual(stats.relayedSendFailures, 0)
    XCTAssertEqual(stats.unexpectedDatagrams, 0)
  }
}
