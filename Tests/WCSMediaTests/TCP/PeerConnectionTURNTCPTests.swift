import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// Connects a relay-only offerer (`configuration`, through `coturn`) to a loopback answerer,
/// checks that the pair is relayed, then sends `toAnswerer` and `toOfferer` and checks they
/// arrive byte-identical. Returns the peers, still connected (the caller shuts them down).
func connectRelayOnlyAndExchangeRTP(
  through coturn: CoturnTestServer, configuration: PeerConnectionConfiguration,
  toAnswerer: [RTPPacket], toOfferer: [RTPPacket], file: StaticString = #filePath,
  line: UInt = #line
) throws -> LoopbackPeers {
  XCTAssertTrue(coturn.waitUntilListening(), "coturn did not listen: \(coturn.log)")
  let peers = LoopbackPeers(offererConfiguration: configuration)
  let offer = try peers.loop.submit { try peers.offerer.localDescriptionForOffer() }
  XCTAssertEqual(offer.candidates, [], file: file, line: line)
  try peers.loop.submit {
    let answer = try peers.answerer.setRemoteOffer(offer)
    try peers.offerer.setRemoteAnswer(answer)
  }
  XCTAssertTrue(
    eventually { peers.offererRecorder.events.value.contains(.gatheringComplete) },
    "no allocation: \(coturn.log)", file: file, line: line)
  let local = peers.loop.submit { peers.offerer.localCandidates }
  XCTAssertEqual(local.map(\.type), [.relayed], "coturn: \(coturn.log)", file: file, line: line)
  let relayed = try XCTUnwrap(local.first, file: file, line: line)
  XCTAssertNotEqual(relayed.address, coturn.server.address, file: file, line: line)
  peers.loop.submit {
    peers.answerer.addRemoteCandidate(relayed)
    peers.answerer.setRemoteEndOfCandidates()
  }
  let pair = try peers.connectedPair(file: file, line: line)
  XCTAssertEqual(pair.local.type, .relayed, file: file, line: line)
  XCTAssertLessThan(pair.socket, 0, file: file, line: line)
  try peers.send(toAnswerer, from: peers.offerer)
  try peers.send(toOfferer, from: peers.answerer)
  XCTAssertTrue(
    eventually {
      peers.answererRecorder.rtp.value.count == toAnswerer.count
        && peers.offererRecorder.rtp.value.count == toOfferer.count
    }, file: file, line: line)
  XCTAssertEqual(peers.answererRecorder.rtp.value.map(\.packet), toAnswerer, file: file, line: line)
  XCTAssertEqual(peers.offererRecorder.rtp.value.map(\.packet), toOfferer, file: file, line: line)
  // The media went in ChannelData (RFC 8656 §12): the relay bound a channel to the answerer.
  let channels = peers.loop.submit { peers.offerer.agent?.relays.map(\.client.boundChannels) }
  XCTAssertEqual(channels, [1], file: file, line: line)
  return peers
}

/// A relay-only PeerConnection whose TURN server is reached over TCP (RFC 8656 §3.1): coturn
/// on 127.0.0.1 with UDP listening off (`--no-udp`), so only the TCP leg can allocate.
final class PeerConnectionTURNTCPTests: XCTestCase {
  /// Allocation, checks, DTLS and RTP both ways run over the TCP connection to coturn; RTP
  /// arrives byte-identical on both sides and coturn reports a TCP allocation.
  func testRelayOnlyOffererConnectsThroughTURNOverTCP() throws {
    let coturn = try CoturnTestServer(transport: .tcp)
    defer { coturn.stop() }
    let toAnswerer = TestMedia.packets(ssrc: 0x7463_7031, count: 40, seed: 5)
    let toOfferer = TestMedia.packets(ssrc: 0x7463_7032, count: 25, seed: 9)
    let peers = try connectRelayOnlyAndExchangeRTP(
      through: coturn, configuration: .relayOnly(through: coturn), toAnswerer: toAnswerer,
      toOfferer: toOfferer)
    defer { peers.shutdown() }
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
    // Every RTP packet went over the TCP leg: its payload, the 12-byte RTP header, the 10-byte
    // SRTP tag and the 4-byte ChannelData header at least.
    XCTAssertGreaterThan(sent, toAnswerer.reduce(0) { $0 + $1.payload.count + 26 })
    XCTAssertGreaterThan(received, toOfferer.reduce(0) { $0 + $1.payload.count })
    XCTAssertEqual(failures, 0)
    XCTAssertTrue(coturn.log.contains("TCP"), coturn.log)
    peers.loop.submit { peers.offerer.close() }
    XCTAssertTrue(eventually { !coturn.peerUsages.isEmpty }, "coturn log: \(coturn.log)")
  }

  /// A TURN server that accepts the TCP connection and never answers: one Allocate is
  /// written and not retransmitted (the allocation waits for Ti, RFC 8489 §6.2.2); closing the
  /// connection meanwhile closes the stream and leaves no descriptor open.
  func testSilentTURNServerOverTCPGetsOneRequestAndNoLeak() throws {
    let (listener, server) = try loopbackTCPSocket(listening: 4)
    defer { close(listener) }
    let loop = EventLoop(label: "turn-tcp-silent")
    defer { loop.shutdown() }
    var configuration = PeerConnectionConfiguration.loopback
    configuration.turnServers = [
      ICETURNServer(address: server, username: "u", password: "p", transport: .tcp)
    ]
    configuration.iceTransportPolicy = .relay
    let before = openDescriptorCount
    let connection = PeerConnection(configuration: configuration, loop: loop)
    let recorder = PeerRecorder()
    _ = try loop.submit {
      recorder.attach(to: connection)
      return try connection.localDescriptionForOffer()
    }
    let accepted = accept(listener, nil, nil)
    defer { close(accepted) }
    XCTAssertGreaterThanOrEqual(accepted, 0)
    // What the client wrote in 1.5 s, well past UDP's retransmission times (0.25, 0.5, ...).
    usleep(1_500_000)
    var buffer = [UInt8](repeating: 0, count: 4096)
    let read = recv(accepted, &buffer, buffer.count, Int32(MSG_DONTWAIT))
    XCTAssertGreaterThan(read, 20)
    var framer = ICEStreamFramer(framing: .turn)
    let messages = try framer.receive(buffer.prefix(max(read, 0)))
    XCTAssertEqual(messages.count, 1, "one Allocate, not retransmitted")
    XCTAssertEqual(
      try messages.first.map { try STUNMessage.decode($0).type },
      STUNMessageType(method: .allocate, messageClass: .request))
    XCTAssertFalse(recorder.events.value.contains(.gatheringComplete))
    loop.submit { connection.close() }
    XCTAssertEqual(loop.submit { connection.turnStreams.map(\.socket.isClosed) }, [true])
    let after = openDescriptorCount
    // The accepted end is still open here (closed by the defer): one more than before.
    XCTAssertEqual(after, before + 1)
  }

  /// A TURN server whose TCP port refuses the connection: the relay fails at once,
  /// gathering completes with no candidate and no descriptor is left open.
  func testUnreachableTURNOverTCPFailsGatheringWithoutLeakingSockets() throws {
    let loop = EventLoop(label: "turn-tcp-refused")
    defer { loop.shutdown() }
    let refusing = try loopbackTCPSocket(listening: nil)
    defer { close(refusing.descriptor) }
    let port = refusing.address.port
    var configuration = PeerConnectionConfiguration.loopback
    configuration.turnServers = [
      ICETURNServer(
        address: ICETransportAddress(ip: .loopbackV4, port: port), username: "u",
        password: "p", transport: .tcp)
    ]
    configuration.iceTransportPolicy = .relay
    let before = openDescriptorCount
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
    let after = openDescriptorCount
    XCTAssertEqual(after, before)
  }
}

/// TURN over TLS (`turns:`, RFC 8656 §3.1) with coturn's self-signed certificate for
/// 127.0.0.1: verified against it as CA, refused against the system store.
final class PeerConnectionTURNTLSTests: XCTestCase {
  func testRelayOnlyOffererConnectsThroughTURNOverTLSWithAVerifiedCertificate() throws {
    let coturn = try CoturnTestServer(transport: .tls)
    defer { coturn.stop() }
    var configuration = PeerConnectionConfiguration.relayOnly(through: coturn)
    configuration.turnTLSOptions = TLSClientOptions(caFile: coturn.certificateFile.path)
    let peers = try connectRelayOnlyAndExchangeRTP(
      through: coturn, configuration: configuration,
      toAnswerer: TestMedia.packets(ssrc: 0x746C_7331, count: 30, seed: 7),
      toOfferer: TestMedia.packets(ssrc: 0x746C_7332, count: 20, seed: 8))
    defer { peers.shutdown() }
    let version = peers.loop.submit { peers.offerer.turnStreams.first?.tls?.protocolVersion }
    XCTAssertTrue(version == "TLSv1.3" || version == "TLSv1.2", "\(String(describing: version))")
  }

  /// With verification turned off (`TLSClientOptions.verifyCertificates = false`, for tests
  /// only) the self-signed server is taken without a CA file.
  func testVerificationOptOutTakesASelfSignedTURNServer() throws {
    let coturn = try CoturnTestServer(transport: .tls)
    defer { coturn.stop() }
    var configuration = PeerConnectionConfiguration.relayOnly(through: coturn)
    configuration.turnTLSOptions = TLSClientOptions(verifyCertificates: false)
    let peers = try connectRelayOnlyAndExchangeRTP(
      through: coturn, configuration: configuration,
      toAnswerer: TestMedia.packets(ssrc: 0x746C_7333, count: 10, seed: 12),
      toOfferer: TestMedia.packets(ssrc: 0x746C_7334, count: 10, seed: 13))
    peers.shutdown()
  }

  /// The same server checked against the system store: its certificate is refused, the
  /// relay fails with the verdict and gathering ends without a candidate.
  func testSelfSignedTURNServerIsRefusedByDefault() throws {
    let coturn = try CoturnTestServer(transport: .tls)
    defer { coturn.stop() }
    XCTAssertTrue(coturn.waitUntilListening(), "coturn did not listen: \(coturn.log)")
    let loop = EventLoop(label: "turn-tls-refused")
    defer { loop.shutdown() }
    let connection = PeerConnection(
      configuration: .relayOnly(through: coturn), loop: loop)
    let recorder = PeerRecorder()
    _ = try loop.submit {
      recorder.attach(to: connection)
      return try connection.localDescriptionForOffer()
    }
    XCTAssertTrue(eventually { recorder.events.value.contains(.gatheringComplete) })
    XCTAssertEqual(loop.submit { connection.localCandidates }, [])
    let stream = loop.submit {
      connection.turnStreams.map { ($0.socket.isClosed, $0.tls?.isEstablished) }
    }
    XCTAssertEqual(stream.map(\.0), [true])
    XCTAssertEqual(stream.map(\.1), [false])
    loop.submit { connection.close() }
  }
}
