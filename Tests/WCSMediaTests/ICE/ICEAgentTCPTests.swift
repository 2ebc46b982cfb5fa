import XCTest

@testable import WCSProtocols

/// ICE-TCP (RFC 6544) in the Sans-I/O agent: candidates, pairing, checks over a connection.
final class ICEAgentTCPTests: XCTestCase {
  let clientCredentials = ICECredentials(ufrag: "ufC1", pwd: "passwordC-0123456789abcd")
  let serverCredentials = ICECredentials(ufrag: "ufS2", pwd: "passwordS-0123456789abcd")
  let loopback = ICETransportAddress(ip: .loopbackV4, port: 0)
  let listenAddress = ICETransportAddress(ip: .loopbackV4, port: 40_000)
  let clientEphemeral = ICETransportAddress(ip: .loopbackV4, port: 50_000)

  func makeClient(remoteIsLite: Bool = true) -> ICEAgent {
    ICEAgent(
      configuration: ICEAgentConfiguration(
        role: .controlling, remoteIsLite: remoteIsLite, localCredentials: clientCredentials,
        tieBreaker: 1, randomSeed: 7))
  }

  func makeServer() -> ICEAgent {
    ICEAgent(
      configuration: ICEAgentConfiguration(
        mode: .lite, role: .controlled, localCredentials: serverCredentials, tieBreaker: 2,
        randomSeed: 8))
  }

  func passive(_ address: ICETransportAddress, foundation: String = "p") -> ICECandidate {
    ICECandidate(
      foundation: foundation,
      priority: ICECandidate.priority(
        type: .host, localPreference: ICECandidate.tcpLocalPreference(.passive, otherPreference: 0)),
      address: address, type: .host, transport: .tcp, tcpType: .passive)
  }

  func sends(_ outputs: [ICEOutput]) -> [ICEDatagram] {
    outputs.compactMap { if case .send(let datagram) = $0 { datagram } else { nil } }
  }

  func testActiveCandidateIsSignalledWithPortNineAndDirectionPreference() {
    let client = makeClient()
    client.addLocalTCPCandidate(0, address: loopback, tcpType: .active, now: virtualTime(0))
    let candidate = try! XCTUnwrap(client.localCandidates.first)
    // Local preference 2^13 × 6 (active) + 8191 (first base), RFC 6544 §4.2.
    let priority: UInt32 = 126 << 24 | (6 << 13 | 8191) << 8 | 255
    XCTAssertEqual(candidate.priority, priority)
    XCTAssertEqual(candidate.address.port, 9)
    XCTAssertEqual(
      candidate.description, "candidate:t1 1 tcp \(priority) 127.0.0.1 9 typ host tcptype active")
    XCTAssertLessThan(
      ICECandidate.tcpLocalPreference(.passive, otherPreference: 8191),
      ICECandidate.tcpLocalPreference(.active, otherPreference: 0))
  }

  func testActiveCandidatePairsOnlyWithPassiveRemotesEachOnItsOwnConnection() {
    let client = makeClient()
    client.addLocalTCPCandidate(0, address: loopback, tcpType: .active, now: virtualTime(0))
    client.addRemoteCandidate(passive(listenAddress, foundation: "p1"), now: virtualTime(0))
    let second = ICETransportAddress(ip: .loopbackV4, port: 40_001)
    client.addRemoteCandidate(passive(second, foundation: "p2"), now: virtualTime(0))
    client.addRemoteCandidate(
      ICECandidate(
        foundation: "a", priority: 1, address: ICETransportAddress(ip: .loopbackV4, port: 9),
        type: .host, transport: .tcp, tcpType: .active), now: virtualTime(0))
    client.addRemoteCandidate(
      ICECandidate(
        foundation: "u", priority: 1, address: ICETransportAddress(ip: .loopbackV4, port: 7000),
        type: .host), now: virtualTime(0))
    XCTAssertEqual(client.pairs.map(\.pair.remote.address), [listenAddress, second])
    XCTAssertEqual(
      client.pairs.map(\.pair.socket),
      [ICEAgent.firstTCPConnectionSocket, ICEAgent.firstTCPConnectionSocket + 1])
  }

  func testActiveAndLitePassiveAgentsConnectOverOneConnectionThenItsCloseFails() throws {
    let client = makeClient()
    let server = makeServer()
    server.addLocalTCPCandidate(0, address: listenAddress, tcpType: .passive, now: virtualTime(0))
    client.addLocalTCPCandidate(0, address: loopback, tcpType: .active, now: virtualTime(0))
    for candidate in server.localCandidates {
      client.addRemoteCandidate(candidate, now: virtualTime(0))
    }
    client.setRemoteCredentials(serverCredentials, now: virtualTime(0))
    server.setRemoteCredentials(clientCredentials, now: virtualTime(0))
    client.setRemoteGatheringComplete(now: virtualTime(0))
    client.startGathering(now: virtualTime(0))
    let serverConnection = 2 * ICEAgent.firstTCPConnectionSocket
    var clientConnection: ICESocketID?
    var now = virtualTime(0)
    while now < virtualTime(2), client.selectedPair == nil || server.selectedPair == nil {
      for datagram in sends(client.takeOutputs()) {
        XCTAssertTrue(ICEAgent.isTCPConnection(datagram.socket))
        XCTAssertEqual(datagram.destination, listenAddress)
        if clientConnection == nil {
          clientConnection = datagram.socket
          XCTAssertTrue(
            server.addTCPConnection(serverConnection, base: 0, remote: clientEphemeral))
        }
        server.receive(datagram.bytes, from: clientEphemeral, socket: serverConnection, now: now)
      }
      for datagram in sends(server.takeOutputs()) {
        XCTAssertEqual(datagram.socket, serverConnection)
        XCTAssertEqual(datagram.destination, clientEphemeral)
        client.receive(
          datagram.bytes, from: listenAddress, socket: try XCTUnwrap(clientConnection), now: now)
      }
      now += .milliseconds(10)
      client.handleTimeout(now: now)
    }
    XCTAssertEqual(client.selectedPair?.socket, clientConnection)
    XCTAssertEqual(client.selectedPair?.remote.address, listenAddress)
    XCTAssertEqual(client.selectedPair?.local.tcpType, .active)
    XCTAssertEqual(server.selectedPair?.socket, serverConnection)
    XCTAssertEqual(server.selectedPair?.remote.transport, .tcp)
    XCTAssertEqual(server.selectedPair?.remote.type, .peerReflexive)
    XCTAssertTrue(client.isValidated(listenAddress, socket: try XCTUnwrap(clientConnection)))
    XCTAssertEqual(client.applicationDatagram([1, 2, 3], now: now)?.socket, clientConnection)

    client.tcpConnectionClosed(try XCTUnwrap(clientConnection), now: now)
    XCTAssertEqual(client.state, .failed)
  }

  func testAcceptedConnectionNeedsAKnownPassiveBase() {
    let server = makeServer()
    server.addLocalTCPCandidate(0, address: listenAddress, tcpType: .passive, now: virtualTime(0))
    let id = 2 * ICEAgent.firstTCPConnectionSocket
    XCTAssertFalse(server.addTCPConnection(id, base: 5, remote: clientEphemeral))
    XCTAssertFalse(server.addTCPConnection(3, base: 0, remote: clientEphemeral))
    XCTAssertTrue(server.addTCPConnection(id, base: 0, remote: clientEphemeral))
    XCTAssertFalse(server.addTCPConnection(id, base: 0, remote: clientEphemeral))
  }

  func testConnectionClosedBeforeAnswerFailsTheOnlyPair() {
    let client = makeClient()
    client.addLocalTCPCandidate(0, address: loopback, tcpType: .active, now: virtualTime(0))
    client.addRemoteCandidate(passive(listenAddress), now: virtualTime(0))
    client.setRemoteCredentials(serverCredentials, now: virtualTime(0))
    client.setRemoteGatheringComplete(now: virtualTime(0))
    client.startGathering(now: virtualTime(0))
    let first = sends(client.takeOutputs())
    XCTAssertEqual(first.count, 1)
    XCTAssertEqual(client.state, .checking)
    client.tcpConnectionClosed(ICEAgent.firstTCPConnectionSocket, now: virtualTime(0.01))
    XCTAssertEqual(client.state, .failed)
    XCTAssertNil(client.nextDeadline)
  }

  func testUDPOnlyAgentFacingATCPOnlyLitePeerFailsOnceGatheringIsDone() {
    let client = makeClient()
    client.addLocalSocket(
      0, address: ICETransportAddress(ip: .loopbackV4, port: 6000), now: virtualTime(0))
    client.addRemoteCandidate(passive(listenAddress), now: virtualTime(0))
    client.setRemoteCredentials(serverCredentials, now: virtualTime(0))
    client.setRemoteGatheringComplete(now: virtualTime(0))
    XCTAssertEqual(client.state, .new)
    client.startGathering(now: virtualTime(0))
    XCTAssertTrue(client.pairs.isEmpty)
    XCTAssertEqual(client.state, .failed)
  }
}
