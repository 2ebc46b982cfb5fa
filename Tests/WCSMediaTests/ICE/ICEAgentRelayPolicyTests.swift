import XCTest

@testable import WCSMedia
@testable import WCSProtocols

extension ICEAgentTests {
  /// `ICETransportPolicy.relay`: no host candidate is signalled or paired, raddr hides the
  /// local address, a check sent straight to the host socket is ignored, and the relayed pair
  /// is selected; `relayDatagrams` wraps application bytes for an explicit relay and peer,
  /// with a CreatePermission request first for a new peer IP.
  func testRelayPolicyPairsOnlyTheRelayedCandidate() throws {
    let turnAddress = ICETransportAddress(ip: .v4(0xC000_0264), port: 3478)
    let turn = try FakeTURNServer(address: turnAddress, username: "user", password: "secret")
    var configuration = ICEAgentConfiguration(
      localCredentials: credentialsA, tieBreaker: 1, randomSeed: 29)
    configuration.turnServers = [
      ICETURNServer(address: turnAddress, username: "user", password: "secret")
    ]
    configuration.stunServers = [ICETransportAddress(ip: .v4(0xC000_0265), port: 3478)]
    configuration.transportPolicy = .relay
    let a = ICEAgent(configuration: configuration)
    let b = makeAgent(credentialsB, role: .controlled, tieBreaker: 2, seed: 30)
    let network = VirtualNetwork()
    network.add(a)
    network.add(b)
    network.turnServer = turn
    network.bind(0, socket: 0, address: addressA)
    network.bind(1, socket: 0, address: addressB)
    XCTAssertEqual(a.localCandidates, [])
    a.startGathering(now: virtualTime(0))
    network.run(until: 5) { a.localCandidates.count == 1 }
    network.flush()
    XCTAssertTrue(network.log.contains { $0.agent == 0 && $0.output == .gatheringComplete })
    let relayed = try XCTUnwrap(a.localCandidates.first)
    XCTAssertEqual(a.localCandidates.map(\.type), [.relayed])
    XCTAssertEqual(relayed.relatedAddress, ICETransportAddress(ip: .v4(0), port: 0))
    // Only the TURN server was asked: no server-reflexive request went out.
    XCTAssertEqual(turn.requests.prefix(2).map(\.method), [.allocate, .allocate])
    let localCandidateOutputs = network.log.filter {
      if $0.agent == 0, case .localCandidate = $0.output { return true }
      return false
    }
    XCTAssertEqual(localCandidateOutputs.count, 1)

    // A check straight to the host socket is ignored: no answer, nothing validated.
    let direct = try STUNMessage(
      type: .bindingRequest,
      attributes: [
        .username("\(credentialsA.ufrag):\(credentialsB.ufrag)"), .priority(1),
        .iceControlled(2),
      ]
    ).encode(key: STUNIntegrityKey(shortTermPassword: credentialsA.pwd), fingerprint: true)
    a.setRemoteCredentials(credentialsB, now: network.now)
    XCTAssertEqual(a.receive(direct, from: addressB, socket: 0, now: network.now), .handled)
    XCTAssertFalse(a.isValidated(addressB, socket: 0))
    XCTAssertFalse(
      a.takeOutputs().contains { if case .send = $0 { return true } else { return false } })

    for candidate in b.localCandidates { a.addRemoteCandidate(candidate, now: network.now) }
    b.addRemoteCandidate(relayed, now: network.now)
    b.setRemoteCredentials(credentialsA, now: network.now)
    a.setRemoteGatheringComplete(now: network.now)
    b.setRemoteGatheringComplete(now: network.now)
    XCTAssertTrue(a.pairs.allSatisfy { $0.pair.socket < 0 })
    XCTAssertFalse(a.pairs.isEmpty)
    network.run(until: 20) { bothSelected(a, b) }
    XCTAssertEqual(a.selectedPair?.local.type, .relayed)
    XCTAssertEqual(a.selectedPair?.socket, -1)
    XCTAssertEqual(b.selectedPair?.remote.address, relayed.address)
    XCTAssertTrue(a.pairs.allSatisfy { $0.pair.socket < 0 })

    // Explicit relay and peer: B has a permission already, a new IP needs one first.
    let toB = a.relayDatagrams(Array("dtls".utf8), relay: -1, to: addressB, now: network.now)
    XCTAssertEqual(toB.map(\.destination), [turnAddress])
    XCTAssertEqual(toB.map(\.socket), [0])
    let indication = try STUNMessage.decode(try XCTUnwrap(toB.first).bytes)
    XCTAssertEqual(indication.type, STUNMessageType(method: .send, messageClass: .indication))
    XCTAssertEqual(indication.xorPeerAddress, addressB)
    XCTAssertEqual(indication.data, Array("dtls".utf8))
    let stranger = ICETransportAddress(ip: .v4(0x0A00_0009), port: 7000)
    let toStranger = a.relayDatagrams([1, 2, 3], relay: -1, to: stranger, now: network.now)
    XCTAssertEqual(
      try toStranger.map { try STUNMessage.decode($0.bytes).type },
      [
        STUNMessageType(method: .createPermission, messageClass: .request),
        STUNMessageType(method: .channelBind, messageClass: .request),
        STUNMessageType(method: .send, messageClass: .indication),
      ])
    XCTAssertEqual(a.relayDatagrams([1], relay: -2, to: addressB, now: network.now), [])
    XCTAssertEqual(a.relayDatagrams([1], relay: 0, to: addressB, now: network.now), [])
  }
}
