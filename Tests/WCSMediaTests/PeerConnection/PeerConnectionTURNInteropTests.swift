import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

extension PeerConnectionInteropTests {
  /// Our relay-only offerer (`ICETransportPolicy.relay`, coturn on 127.0.0.1) against aiortc:
  /// the offer carries only our relayed candidate, aiortc's checks, DTLS and RTP reach us
  /// through coturn and ours reach it the same way; RTP arrives byte-identical both ways.
  func testRelayOnlyOffererToAiortcThroughCoturn() throws {
    try skipUnlessAiortcIsInstalled()
    let coturn = try CoturnTestServer()
    defer { coturn.stop() }
    let peer = try JSONLinesProcess(script: Self.scriptPath)
    defer { peer.stop() }
    let loop = EventLoop(label: "aiortc-turn")
    defer { loop.shutdown() }
    var configuration = PeerConnectionConfiguration.loopback
    configuration.turnServers = [coturn.server]
    configuration.iceTransportPolicy = .relay
    let connection = PeerConnection(configuration: configuration, loop: loop)
    let recorder = PeerRecorder()
    defer { loop.submit { connection.close() } }

    let offer = try loop.submit {
      recorder.attach(to: connection)
      return try connection.createOffer(audio: Self.audio, video: nil)
    }
    XCTAssertFalse(offer.contains("a=candidate:"))
    XCTAssertFalse(offer.contains("a=end-of-candidates"))
    XCTAssertTrue(
      eventually(timeout: 10) { recorder.events.value.contains(.gatheringComplete) },
      "no allocation: \(coturn.log)")
    let relayed = try XCTUnwrap(loop.submit { connection.localCandidates.first })
    XCTAssertEqual(relayed.type, .relayed)
    // aiortc takes no trickle here: it gets the offer again with the relayed candidate, as a
    // browser's offer read after gathering carries it.
    let completeOffer = try XCTUnwrap(loop.submit { connection.localDescriptionWithCandidates() })
    XCTAssertTrue(completeOffer.contains("\r\na=\(relayed)\r\n"), completeOffer)
    XCTAssertTrue(completeOffer.contains("\r\na=end-of-candidates\r\n"))
    XCTAssertTrue(
      completeOffer.contains("m=audio \(relayed.address.port) UDP/TLS/RTP/SAVPF"), completeOffer)
    XCTAssertTrue(completeOffer.contains("c=IN IP4 \(relayed.address.ip)\r\n"))
    XCTAssertEqual(completeOffer.components(separatedBy: "a=candidate:").count, 2)
    try peer.writeLine(["offer": completeOffer])
    let reply = try XCTUnwrap(try peer.readLine(timeout: 20), "aiortc sent no answer")
    let answer = try XCTUnwrap(reply["answer"] as? String, "\(reply)")
    try loop.submit { try connection.setRemoteDescription(answer: answer) }

    XCTAssertTrue(
      eventually(timeout: 20) { recorder.lastState == .connected },
      "\(recorder.states); coturn: \(coturn.log)")
    let stats = loop.submit { connection.stats }
    XCTAssertEqual(stats.selectedPair?.local.type, .relayed)
    XCTAssertEqual(stats.selectedPair?.local.address, relayed.address)
    XCTAssertEqual(stats.dtlsRole, .server, "aiortc answers a=setup:active")

    let ours = (0..<30).map { index in
      RTPPacket(
        header: RTPHeader(
          payloadType: 111, sequenceNumber: UInt16(7000 + index), timestamp: UInt32(960 * index),
          ssrc: Self.audio.ssrc),
        payload: [0xF8, 0xFF, 0xFE, UInt8(index)])
    }
    for packet in ours {
      try loop.submit { try connection.sendRTP(try packet.serialized()) }
      usleep(2000)
    }
    XCTAssertTrue(eventually(timeout: 20) { recorder.rtp.value.count >= 20 }, "no RTP from aiortc")
    let delivered = recorder.rtp.value
    let (received, sent) = try report(from: peer, expectingReceived: ours.count)
    XCTAssertEqual(received, try ours.map { try Self.hex($0.serialized()) })
    let sentSet = Set(sent)
    for item in delivered {
      XCTAssertTrue(sentSet.contains(Self.hex(try item.packet.serialized())))
    }
    let after = loop.submit { connection.stats }
    XCTAssertGreaterThanOrEqual(after.relayedDatagramsSent, ours.count)
    XCTAssertEqual(after.relayedSendFailures, 0)
    try peer.writeLine(["cmd": "close"])
  }
}
