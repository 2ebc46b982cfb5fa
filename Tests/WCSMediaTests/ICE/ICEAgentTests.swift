import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class ICEAgentTests: XCTestCase {
  let addressA = ICETransportAddress(ip: .v4(0x0A00_0001), port: 5000)
  let addressA6 = ICETransportAddress(ip: .v6(0xFD00_0000_0000_0000, 1), port: 5000)
  let addressB = ICETransportAddress(ip: .v4(0x0A00_0002), port: 6000)
  let credentialsA = ICECredentials(ufrag: "ufA1", pwd: "passwordA-0123456789abcd")
  let credentialsB = ICECredentials(ufrag: "ufB2", pwd: "passwordB-0123456789abcd")

  func makeAgent(
    _ credentials: ICECredentials, role: ICERole, mode: ICEMode = .full, remoteIsLite: Bool = false,
    tieBreaker: UInt64, seed: UInt64
  ) -> ICEAgent {
    ICEAgent(
      configuration: ICEAgentConfiguration(
        mode: mode, role: role, remoteIsLite: remoteIsLite, localCredentials: credentials,
        tieBreaker: tieBreaker, randomSeed: seed))
  }

  /// Binds sockets (A: IPv4 + IPv6, B: IPv4), exchanges candidates, credentials and
  /// end-of-candidates as signalling would.
  func connect(
    _ a: ICEAgent, _ b: ICEAgent, credentialsForA: ICECredentials? = nil,
    signalACandidates: Bool = true
  ) -> VirtualNetwork {
    let network = VirtualNetwork()
    network.add(a)
    network.add(b)
    network.bind(0, socket: 0, address: addressA)
    network.bind(0, socket: 1, address: addressA6)
    network.bind(1, socket: 0, address: addressB)
    if signalACandidates {
      for candidate in a.localCandidates { b.addRemoteCandidate(candidate, now: virtualTime(0)) }
    }
    for candidate in b.localCandidates { a.addRemoteCandidate(candidate, now: virtualTime(0)) }
    a.setRemoteCredentials(credentialsForA ?? credentialsB, now: virtualTime(0))
    b.setRemoteCredentials(credentialsA, now: virtualTime(0))
    a.setRemoteGatheringComplete(now: virtualTime(0))
    b.setRemoteGatheringComplete(now: virtualTime(0))
    return network
  }

  func bothSelected(_ a: ICEAgent, _ b: ICEAgent) -> Bool {
    a.selectedPair != nil && b.selectedPair != nil
  }

  func assertSamePair(
    _ a: ICEAgent, _ b: ICEAgent, file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertEqual(a.selectedPair?.local.address, addressA, file: file, line: line)
    XCTAssertEqual(a.selectedPair?.remote.address, addressB, file: file, line: line)
    XCTAssertEqual(b.selectedPair?.local.address, addressB, file: file, line: line)
    XCTAssertEqual(b.selectedPair?.remote.address, addressA, file: file, line: line)
  }

  func testCandidateAndPairPrioritiesFollowRFC8445() {
    XCTAssertEqual(ICECandidate.priority(type: .host, localPreference: 65535), 2_130_706_431)
    XCTAssertEqual(
      ICECandidate.priority(type: .serverReflexive, localPreference: 65535), 1_694_498_815)
    XCTAssertEqual(ICECandidate.priority(type: .relayed, localPreference: 0, component: 2), 254)
    let local = ICECandidate(foundation: "1", priority: 10, address: addressA, type: .host)
    let remote = ICECandidate(foundation: "2", priority: 20, address: addressB, type: .host)
    let pair = ICECandidatePair(socket: 0, local: local, remote: remote)
    // G = 10 (we control), D = 20: 2^32*10 + 2*20 + 0.
    XCTAssertEqual(pair.priority(localIsControlling: true), (10 << 32) + 40)
    // G = 20, D = 10: 2^32*10 + 2*20 + 1.
    XCTAssertEqual(pair.priority(localIsControlling: false), (10 << 32) + 41)
    XCTAssertEqual(
      local.description, "candidate:1 1 udp 10 10.0.0.1 5000 typ host")
  }

  func testTwoFullAgentsConnectAndSelectTheSamePair() throws {
    let a = makeAgent(credentialsA, role: .controlling, tieBreaker: 10, seed: 1)
    let b = makeAgent(credentialsB, role: .controlled, tieBreaker: 20, seed: 2)
    let network = connect(a, b)
    network.run(until: 5) { bothSelected(a, b) }
    assertSamePair(a, b)
    XCTAssertEqual(network.states(of: 0), [.checking, .connected, .completed])
    XCTAssertEqual(network.states(of: 1), [.checking, .connected, .completed])
    XCTAssertEqual(a.role, .controlling)
    XCTAssertEqual(b.role, .controlled)
    XCTAssertLessThan(network.elapsed, 1)
    // A's IPv6 socket has no IPv6 peer, so nothing is ever sent from it.
    XCTAssertFalse(network.sent(by: 0).contains { $0.socket == 1 })
    // Every datagram is a fingerprinted STUN message; A's checks carry ICE-CONTROLLING and are
    // signed with B's password.
    let keyB = STUNIntegrityKey(shortTermPassword: credentialsB.pwd)
    var sawUseCandidate = false
    for datagram in network.sent(by: 0) {
      let message = try STUNMessage.decode(datagram.bytes)
      XCTAssertTrue(message.hasFingerprint)
      if message.type == .bindingRequest {
        XCTAssertEqual(message.username, "ufB2:ufA1")
        XCTAssertEqual(message.iceControlling, 10)
        XCTAssertNoThrow(try message.verifyIntegrity(key: keyB))
        sawUseCandidate = sawUseCandidate || message.useCandidate
      }
    }
    XCTAssertTrue(sawUseCandidate)
  }

  func testLitePeerIsControlledAndNeverSendsChecks() throws {
    // A was told "controlled" but the peer is lite: a full agent is always controlling then.
    let a = makeAgent(credentialsA, role: .controlled, remoteIsLite: true, tieBreaker: 1, seed: 3)
    let b = makeAgent(credentialsB, role: .controlling, mode: .lite, tieBreaker: 2, seed: 4)
    XCTAssertEqual(a.role, .controlling)
    XCTAssertEqual(b.role, .controlled)
    let network = connect(a, b)
    network.run(until: 5) { bothSelected(a, b) }
    assertSamePair(a, b)
    XCTAssertEqual(network.states(of: 1), [.checking, .connected, .completed])
    let fromB = network.sent(by: 1)
    XCTAssertFalse(fromB.isEmpty)
    for datagram in fromB {
      XCTAssertEqual(try STUNMessage.decode(datagram.bytes).type, .bindingSuccess)
    }
    // The lite side never runs consent either: after a minute it still only answered.
    network.run(until: 60)
    XCTAssertTrue(
      network.sent(by: 1).allSatisfy { (try? STUNMessage.decode($0.bytes).type) == .bindingSuccess }
    )
    XCTAssertEqual(a.state, .completed)
  }

  /// One IPv4 pair with a lite peer: A connects the way the SDK connects to the local server.
  /// With `learnedFromAnswer`, A is made as an offerer is (no `remoteIsLite`, here even
  /// controlled) and told by `setRemoteIsLite` as the answer's `a=ice-lite` would.
  func connectToLitePeer(seed: UInt64, learnedFromAnswer: Bool = false)
    -> (ICEAgent, ICEAgent, VirtualNetwork)
  {
    let a = makeAgent(
      credentialsA, role: learnedFromAnswer ? .controlled : .controlling,
      remoteIsLite: !learnedFromAnswer, tieBreaker: 1, seed: seed)
    let b = makeAgent(credentialsB, role: .controlled, mode: .lite, tieBreaker: 2, seed: seed + 1)
    let network = VirtualNetwork()
    network.add(a)
    network.add(b)
    network.bind(0, socket: 0, address: addressA)
    network.bind(1, socket: 0, address: addressB)
    if learnedFromAnswer { a.setRemoteIsLite(now: virtualTime(0)) }
    for candidate in b.localCandidates { a.addRemoteCandidate(candidate, now: virtualTime(0)) }
    a.setRemoteCredentials(credentialsB, now: virtualTime(0))
    b.setRemoteCredentials(credentialsA, now: virtualTime(0))
    a.setRemoteGatheringComplete(now: virtualTime(0))
    return (a, b, network)
  }

  func selectionTime(of agent: Int, in network: VirtualNetwork) -> Double? {
    network.log.first {
      if $0.agent == agent, case .selectedPair = $0.output { true } else { false }
    }?.time
  }

  func testLitePeerIsNominatedAsSoonAsTheFirstCheckSucceeds() throws {
    for learnedFromAnswer in [false, true] {
      let (a, b, network) = connectToLitePeer(seed: 40, learnedFromAnswer: learnedFromAnswer)
      XCTAssertEqual(a.role, .controlling)
      XCTAssertTrue(a.remoteIsLite)
      network.run(until: 5) { bothSelected(a, b) }
      assertSamePair(a, b)
      // The check and its USE-CANDIDATE repeat in the same instant, no pacing slot (Ta 50 ms)
      // in between.
      XCTAssertEqual(selectionTime(of: 0, in: network), 0)
      XCTAssertEqual(selectionTime(of: 1, in: network), 0)
      let checks = try network.sent(by: 0).map { try STUNMessage.decode($0.bytes) }
      XCTAssertEqual(checks.count, 2)
      XCTAssertEqual(checks.map(\.useCandidate), [false, true])
    }
  }

  /// Connects A to a lite B, losing the first datagram `sender` sends.
  func connectToLitePeerLosingTheFirstDatagram(from sender: ICETransportAddress, seed: UInt64)
    -> (ICEAgent, ICEAgent, VirtualNetwork)
  {
    let (a, b, network) = connectToLitePeer(seed: seed)
    var dropped = 0
    network.isBlocked = { source, _ in
      guard source == sender, dropped == 0 else { return false }
      dropped += 1
      return true
    }
    network.run(until: 5) { bothSelected(a, b) }
    XCTAssertEqual(dropped, 1)
    return (a, b, network)
  }

  func testLostCheckToALitePeerIsRetransmittedAfterTheInitialTimeout() throws {
    let (a, b, network) = connectToLitePeerLosingTheFirstDatagram(from: addressA, seed: 42)
    XCTAssertTrue(bothSelected(a, b))
    let selected = try XCTUnwrap(selectionTime(of: 0, in: network))
    XCTAssertEqual(selected, 0.1, accuracy: 1e-9)
    XCTAssertEqual(selectionTime(of: 1, in: network) ?? -1, 0.1, accuracy: 1e-9)
  }

  func testLitePeerAnswersARetransmittedCheckWhoseResponseWasLost() throws {
    let (a, b, network) = connectToLitePeerLosingTheFirstDatagram(from: addressB, seed: 46)
    XCTAssertTrue(bothSelected(a, b))
    let requests = try network.sent(by: 0).map { try STUNMessage.decode($0.bytes) }
    let responses = try network.sent(by: 1).map { try STUNMessage.decode($0.bytes) }
    // The same transaction twice (RFC 8489 §6.2.1), answered both times; then the nomination.
    XCTAssertEqual(requests.count, 3)
    XCTAssertEqual(requests[0].transactionID, requests[1].transactionID)
    XCTAssertEqual(responses.map(\.transactionID), requests.map(\.transactionID))
    XCTAssertTrue(responses.allSatisfy { $0.type == .bindingSuccess })
    XCTAssertEqual(selectionTime(of: 0, in: network) ?? -1, 0.1, accuracy: 1e-9)
  }

  func testRoundTripTimeComesFromChecksSentOnce() throws {
    let a = makeAgent(credentialsA, role: .controlling, remoteIsLite: true, tieBreaker: 1, seed: 48)
    let b = makeAgent(credentialsB, role: .controlled, mode: .lite, tieBreaker: 2, seed: 49)
    a.addLocalSocket(0, address: addressA, now: virtualTime(0))
    b.addLocalSocket(0, address: addressB, now: virtualTime(0))
    for candidate in b.localCandidates { a.addRemoteCandidate(candidate, now: virtualTime(0)) }
    b.setRemoteCredentials(credentialsA, now: virtualTime(0))
    func checks(from agent: ICEAgent) -> [[UInt8]] {
      agent.takeOutputs().compactMap {
        if case .send(let datagram) = $0 { datagram.bytes } else { nil }
      }
    }
    /// Hands A's datagrams to B at `now` and B's answers back to A at `now`.
    func exchange(_ datagrams: [[UInt8]], at seconds: Double) {
      let now = virtualTime(seconds)
      for bytes in datagrams { b.receive(bytes, from: addressA, socket: 0, now: now) }
      for bytes in checks(from: b) { a.receive(bytes, from: addressB, socket: 0, now: now) }
    }
    a.setRemoteCredentials(credentialsB, now: virtualTime(0))
    let first = checks(from: a)
    XCTAssertEqual(first.count, 1)
    // Lost: the retransmission at 100 ms is answered 10 ms later, which says nothing about the
    // path (it may answer the first copy).
    a.handleTimeout(now: virtualTime(0.1))
    let retransmitted = checks(from: a)
    XCTAssertEqual(retransmitted, first)
    exchange(retransmitted, at: 0.11)
    XCTAssertNil(a.roundTripTime)
    // The nomination went out at once at 0.11, sent once: its answer at 0.14 is a sample.
    let nomination = checks(from: a)
    XCTAssertEqual(nomination.count, 1)
    exchange(nomination, at: 0.14)
    XCTAssertEqual(try XCTUnwrap(a.roundTripTime), .milliseconds(30))
    XCTAssertNotNil(a.selectedPair)
    XCTAssertNil(b.roundTripTime)
  }

  func testFullPeerIsNominatedInTheNextPacingSlot() throws {
    let a = makeAgent(credentialsA, role: .controlling, tieBreaker: 10, seed: 44)
    let b = makeAgent(credentialsB, role: .controlled, tieBreaker: 20, seed: 45)
    let network = connect(a, b)
    network.run(until: 5) { bothSelected(a, b) }
    let selected = try XCTUnwrap(selectionTime(of: 0, in: network))
    XCTAssertGreaterThanOrEqual(
      selected, ICEAgentConfiguration(localCredentials: credentialsA).pacingInterval.seconds)
  }

  func testRoleConflictIsResolvedByTieBreaker() throws {
    for role in [ICERole.controlling, .controlled] {
      let a = makeAgent(credentialsA, role: role, tieBreaker: 100, seed: 5)
      let b = makeAgent(credentialsB, role: role, tieBreaker: 200, seed: 6)
      let network = connect(a, b)
      network.run(until: 5) { bothSelected(a, b) }
      assertSamePair(a, b)
      // The larger tie-breaker (B) ends controlling (RFC 8445 §7.3.1.1).
      XCTAssertEqual(b.role, .controlling, "both \(role)")
      XCTAssertEqual(a.role, .controlled, "both \(role)")
      let roleChanges = network.log.filter {
        if case .roleChanged = $0.output { true } else { false }
      }
      XCTAssertEqual(roleChanges.count, 1, "both \(role)")
    }
  }

  func testConsentLossDisconnectsThenFails() throws {
    let a = makeAgent(credentialsA, role: .controlling, tieBreaker: 1, seed: 7)
    let b = makeAgent(credentialsB, role: .controlled, tieBreaker: 2, seed: 8)
    let network = connect(a, b)
    network.run(until: 5) { bothSelected(a, b) }
    // Consent keeps the connection up while traffic flows.
    network.run(until: 60)
    XCTAssertEqual(a.state, .completed)
    XCTAssertEqual(b.state, .completed)
    let consentRequests = network.sent(by: 0).filter {
      (try? STUNMessage.decode($0.bytes).type) == .bindingRequest
    }
    // About one consent request every 5 s ± 20 % over a minute.
    XCTAssertGreaterThan(consentRequests.count, 10)
    network.dropAll = true
    let dropTime = network.elapsed
    network.run(until: 200) { a.state == .failed && b.state == .failed }
    let times = network.stateTimes(of: 0).filter { $0.0 >= dropTime }
    XCTAssertEqual(times.map(\.1), [.disconnected, .failed])
    let disconnectedAfter = (times.first?.0 ?? 0) - dropTime
    let failedAfter = (times.last?.0 ?? 0) - dropTime
    // Measured from the last response, which came at most one consent interval before the drop.
    XCTAssertTrue((4...10).contains(disconnectedAfter), "disconnected after \(disconnectedAfter)")
    XCTAssertTrue((24...30).contains(failedAfter), "failed after \(failedAfter)")
    XCTAssertEqual(b.state, .failed)
    XCTAssertNil(a.nextDeadline)
  }

  func testConsentRecoversFromShortOutage() throws {
    let a = makeAgent(credentialsA, role: .controlling, tieBreaker: 1, seed: 9)
    let b = makeAgent(credentialsB, role: .controlled, tieBreaker: 2, seed: 10)
    let network = connect(a, b)
    network.run(until: 5) { bothSelected(a, b) }
    network.dropAll = true
    network.run(until: 30) { a.state == .disconnected }
    XCTAssertEqual(a.state, .disconnected)
    network.dropAll = false
    network.run(until: 45) { a.state == .completed }
    XCTAssertEqual(network.states(of: 0).suffix(2), [.disconnected, .completed])
  }

  func testWrongPasswordNeverConnects() throws {
    let a = makeAgent(credentialsA, role: .controlling, tieBreaker: 1, seed: 11)
    let b = makeAgent(credentialsB, role: .controlled, tieBreaker: 2, seed: 12)
    let wrong = ICECredentials(ufrag: credentialsB.ufrag, pwd: "not-the-password-at-all")
    let network = connect(a, b, credentialsForA: wrong)
    network.run(until: 60) { a.state == .failed }
    XCTAssertEqual(a.state, .failed)
    XCTAssertNil(a.selectedPair)
    XCTAssertNil(b.selectedPair)
    XCTAssertNotEqual(b.state, .connected)
    XCTAssertGreaterThan(b.integrityFailures, 0)
    // B answered A's checks with 401 and no MESSAGE-INTEGRITY.
    let errors = network.sent(by: 1).compactMap { try? STUNMessage.decode($0.bytes) }
      .filter { $0.type == .bindingError }
    XCTAssertFalse(errors.isEmpty)
    XCTAssertTrue(errors.allSatisfy { $0.errorCode?.code == 401 && $0.messageIntegrity == nil })
  }

  func testPeerReflexiveCandidateIsLearnedFromIncomingCheck() throws {
    let a = makeAgent(credentialsA, role: .controlling, tieBreaker: 1, seed: 13)
    let b = makeAgent(credentialsB, role: .controlled, tieBreaker: 2, seed: 14)
    // B never hears of A's candidates: it learns A's address from A's check.
    let network = connect(a, b, signalACandidates: false)
    network.run(until: 5) { bothSelected(a, b) }
    assertSamePair(a, b)
    XCTAssertEqual(b.remoteCandidates.map(\.type), [.peerReflexive])
    XCTAssertEqual(b.remoteCandidates.first?.address, addressA)
    // The PRIORITY A sent is the peer-reflexive priority for its first socket.
    XCTAssertEqual(
      b.remoteCandidates.first?.priority,
      ICECandidate.priority(type: .peerReflexive, localPreference: 65535))
  }

  func testServerReflexiveCandidateFromSTUNServer() throws {
    let server = ICETransportAddress(ip: .v4(0xC633_6401), port: 3478)
    let mapped = ICETransportAddress(ip: .v4(0xCB00_7105), port: 40000)
    var configuration = ICEAgentConfiguration(
      localCredentials: credentialsA, tieBreaker: 1, stunServers: [server], randomSeed: 15)
    configuration.software = "WCSApi2"
    let a = ICEAgent(configuration: configuration)
    let network = VirtualNetwork()
    network.add(a)
    network.stunServer = server
    network.mappedAddressForServer = mapped
    network.bind(0, socket: 0, address: addressA)
    a.startGathering(now: virtualTime(0))
    network.run(until: 10) { a.localCandidates.count == 2 }
    network.flush()
    let srflx = try XCTUnwrap(a.localCandidates.last)
    XCTAssertEqual(srflx.type, .serverReflexive)
    XCTAssertEqual(srflx.address, mapped)
    XCTAssertEqual(srflx.relatedAddress, addressA)
    XCTAssertEqual(
      srflx.priority, ICECandidate.priority(type: .serverReflexive, localPreference: 65535))
    let gathering = network.log.map(\.output).filter {
      switch $0 {
      case .localCandidate, .gatheringComplete: true
      default: false
      }
    }
    XCTAssertEqual(
      gathering,
      [.localCandidate(a.localCandidates[0]), .localCandidate(srflx), .gatheringComplete])
  }

  func testUnreachablePeerFailsAfterEndOfCandidates() throws {
    // Without end-of-candidates more candidates may come: the exhausted checklist does not fail.
    let waiting = makeAgent(credentialsA, role: .controlling, tieBreaker: 1, seed: 16)
    let quiet = VirtualNetwork()
    quiet.add(waiting)
    quiet.bind(0, socket: 0, address: addressA)
    waiting.setRemoteCredentials(credentialsB, now: virtualTime(0))
    waiting.addRemoteCandidate(
      ICECandidate(foundation: "9", priority: 1000, address: addressB, type: .host),
      now: virtualTime(0))
    quiet.run(until: 60)
    XCTAssertEqual(waiting.state, .checking)
    XCTAssertNil(waiting.nextDeadline)
    // End-of-candidates then fails it at once.
    waiting.setRemoteGatheringComplete(now: virtualTime(60))
    XCTAssertEqual(waiting.state, .failed)

    let a = makeAgent(credentialsA, role: .controlling, tieBreaker: 1, seed: 16)
    let network = VirtualNetwork()
    network.add(a)
    network.bind(0, socket: 0, address: addressA)
    a.setRemoteCredentials(credentialsB, now: virtualTime(0))
    a.addRemoteCandidate(
      ICECandidate(foundation: "9", priority: 1000, address: addressB, type: .host),
      now: virtualTime(0))
    a.setRemoteGatheringComplete(now: virtualTime(0))
    network.run(until: 60) { a.state == .failed }
    XCTAssertEqual(network.states(of: 0), [.checking, .failed])
    // Seven transmissions with 0.1 s doubling capped at 1.6 s, then a final wait.
    XCTAssertEqual(network.sent(by: 0).count, 7)
    XCTAssertEqual(network.elapsed, 0.1 + 0.2 + 0.4 + 0.8 + 1.6 * 3, accuracy: 1e-9)
  }

  func testMalformedSTUNFromTheNetworkNeverCrashesTheAgent() throws {
    let a = makeAgent(credentialsA, role: .controlling, tieBreaker: 1, seed: 17)
    let b = makeAgent(credentialsB, role: .controlled, tieBreaker: 2, seed: 18)
    let network = connect(a, b)
    var generator = SplitMix64(state: 99)
    let attacker = ICETransportAddress(ip: .v4(0x0A00_0063), port: 666)
    // Garbage before and during the checks.
    for _ in 0..<200 {
      var bytes = (0..<Int.random(in: 0...120, using: &generator)).map { _ in
        UInt8.random(in: 0...255, using: &generator)
      }
      if bytes.count >= 8 {
        bytes[0] &= 0x01
        bytes.replaceSubrange(4..<8, with: [0x21, 0x12, 0xA4, 0x42])
      }
      network.inject(bytes, from: attacker, to: addressB)
      network.inject(bytes, from: attacker, to: addressA)
    }
    network.run(until: 5) { bothSelected(a, b) }
    assertSamePair(a, b)
    // Mutated copies of real traffic, delivered from the real peer's address.
    let real = network.sent(by: 0).map(\.bytes) + network.sent(by: 1).map(\.bytes)
    for _ in 0..<2000 {
      guard var bytes = real.randomElement(using: &generator) else { break }
      let index = Int.random(in: 0..<bytes.count, using: &generator)
      bytes[index] ^= UInt8.random(in: 1...255, using: &generator)
      if Bool.random(using: &generator) { bytes = Array(bytes.prefix(index)) }
      network.inject(bytes, from: addressB, to: addressA)
      network.inject(bytes, from: addressA, to: addressB)
    }
    network.run(until: 20)
    XCTAssertGreaterThan(a.malformedMessages + b.malformedMessages, 1000)
    XCTAssertEqual(a.state, .completed)
    XCTAssertEqual(b.state, .completed)
    assertSamePair(a, b)
  }
}

extension ICEAgentTests {
  func testRelayedCandidateThroughTURNWhenDirectPathIsBlocked() throws {
    let turnAddress = ICETransportAddress(ip: .v4(0xC000_0264), port: 3478)
    let turn = try FakeTURNServer(address: turnAddress, username: "user", password: "secret")
    var configuration = ICEAgentConfiguration(
      localCredentials: credentialsA, tieBreaker: 1, randomSeed: 19)
    configuration.turnServers = [
      ICETURNServer(address: turnAddress, username: "user", password: "secret")
    ]
    let a = ICEAgent(configuration: configuration)
    let b = makeAgent(credentialsB, role: .controlled, tieBreaker: 2, seed: 20)
    let network = VirtualNetwork()
    network.add(a)
    network.add(b)
    network.turnServer = turn
    let hostA = addressA
    let hostB = addressB
    // No direct path between the two hosts: only the relay works.
    network.isBlocked = { source, destination in
      (source == hostA && destination == hostB) || (source == hostB && destination == hostA)
    }
    network.bind(0, socket: 0, address: addressA)
    network.bind(1, socket: 0, address: addressB)
    a.startGathering(now: virtualTime(0))
    network.run(until: 5) { a.localCandidates.count == 2 }
    network.flush()
    let relayed = try XCTUnwrap(a.localCandidates.last)
    XCTAssertEqual(relayed.type, .relayed)
    XCTAssertEqual(relayed.address, ICETransportAddress(ip: turnAddress.ip, port: 50000))
    XCTAssertEqual(relayed.relatedAddress, addressA)
    XCTAssertEqual(relayed.priority, ICECandidate.priority(type: .relayed, localPreference: 65535))
    // 401 challenge, then the signed retry (RFC 8489 §9.2).
    XCTAssertEqual(turn.requests.prefix(2).map(\.method), [.allocate, .allocate])
    XCTAssertEqual(turn.requests.prefix(2).map(\.signed), [false, true])
    XCTAssertTrue(network.log.contains { $0.output == .gatheringComplete })

    for candidate in a.localCandidates { b.addRemoteCandidate(candidate, now: network.now) }
    for candidate in b.localCandidates { a.addRemoteCandidate(candidate, now: network.now) }
    a.setRemoteCredentials(credentialsB, now: network.now)
    b.setRemoteCredentials(credentialsA, now: network.now)
    a.setRemoteGatheringComplete(now: network.now)
    b.setRemoteGatheringComplete(now: network.now)
    network.run(until: 20) { bothSelected(a, b) }
    XCTAssertEqual(a.selectedPair?.local.type, .relayed)
    XCTAssertEqual(a.selectedPair?.remote.address, addressB)
    XCTAssertEqual(b.selectedPair?.remote.address, relayed.address)
    XCTAssertTrue(turn.requests.contains { $0.method == .createPermission && $0.signed })

    // Application data both ways: A wraps it in a Send indication, B's reply arrives at A in a
    // Data indication.
    let toB = try XCTUnwrap(a.applicationDatagram(Array("hello".utf8), now: network.now))
    XCTAssertEqual(toB.destination, turnAddress)
    network.sendApplication(toB, from: 0)
    let toA = try XCTUnwrap(b.applicationDatagram(Array("world".utf8), now: network.now))
    network.sendApplication(toA, from: 1)
    XCTAssertEqual(network.applicationData.map(\.agent), [1, 0])
    XCTAssertEqual(network.applicationData.first?.result, .notSTUN)
    XCTAssertEqual(network.applicationData.first?.bytes, Array("hello".utf8))
    XCTAssertEqual(
      network.applicationData.last?.result,
      .relayedData(Array("world".utf8), peer: addressB, relay: -1))

    // The allocation is refreshed before its 600 s lifetime ends, and consent keeps going.
    network.run(until: 700)
    XCTAssertTrue(turn.requests.contains { $0.method == .refresh })
    XCTAssertEqual(a.state, .completed)
  }
}

extension ICEAgentTests {
  /// Sends one request to a fresh controlling agent (tie-breaker 10) and returns its answer.
  private func answer(to request: STUNMessage, key: STUNIntegrityKey?) throws -> STUNMessage {
    let agent = makeAgent(credentialsA, role: .controlling, tieBreaker: 10, seed: 21)
    agent.addLocalSocket(0, address: addressA, now: virtualTime(0))
    _ = agent.takeOutputs()
    let bytes = try request.encode(key: key, fingerprint: true)
    XCTAssertEqual(agent.receive(bytes, from: addressB, socket: 0, now: virtualTime(0)), .handled)
    let sends = agent.takeOutputs().compactMap {
      if case .send(let datagram) = $0 { datagram } else { nil }
    }
    XCTAssertEqual(sends.count, 1)
    XCTAssertEqual(sends.first?.destination, addressB)
    return try STUNMessage.decode(try XCTUnwrap(sends.first).bytes)
  }

  func testIncomingRequestsAreAnsweredAsRFC8445Says() throws {
    let key = STUNIntegrityKey(shortTermPassword: credentialsA.pwd)
    let username = STUNAttribute.username("ufA1:ufB2")
    let agentKey = key

    let success = try answer(
      to: STUNMessage(
        type: .bindingRequest, attributes: [username, .priority(7), .iceControlled(99)]),
      key: key)
    XCTAssertEqual(success.type, .bindingSuccess)
    XCTAssertEqual(success.xorMappedAddress, addressB)
    XCTAssertTrue(success.hasFingerprint)
    XCTAssertNoThrow(try success.verifyIntegrity(key: agentKey))

    let missingUsername = try answer(
      to: STUNMessage(type: .bindingRequest, attributes: [.priority(7)]), key: key)
    XCTAssertEqual(missingUsername.errorCode?.code, 400)

    let wrongUfrag = try answer(
      to: STUNMessage(type: .bindingRequest, attributes: [.username("nope:ufB2")]), key: key)
    XCTAssertEqual(wrongUfrag.errorCode?.code, 401)

    let unknown = try answer(
      to: STUNMessage(
        type: .bindingRequest,
        attributes: [username, .unknown(type: 0x0031, value: [1, 2, 3, 4])]), key: key)
    XCTAssertEqual(unknown.errorCode?.code, 420)
    XCTAssertTrue(unknown.attributes.contains(.unknownAttributes([0x0031])))

    // We are controlling with the larger tie-breaker: the other controlling agent gets 487.
    let conflict = try answer(
      to: STUNMessage(type: .bindingRequest, attributes: [username, .iceControlling(5)]),
      key: key)
    XCTAssertEqual(conflict.errorCode?.code, 487)
    XCTAssertNoThrow(try conflict.verifyIntegrity(key: agentKey))

    // With the smaller tie-breaker we switch to controlled and answer with success.
    let yielded = try answer(
      to: STUNMessage(type: .bindingRequest, attributes: [username, .iceControlling(50)]),
      key: key)
    XCTAssertEqual(yielded.type, .bindingSuccess)
  }
}
