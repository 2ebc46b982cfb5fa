import Foundation
import TestSupport
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// SDK sessions register through Debian's kamailio (registrar, in-memory location, digest auth
/// with static passwords) on 127.0.0.1, and calls between them, or from baresip, are routed by
/// kamailio to the registered contact. Skipped when kamailio is not installed.
extension SIPCallEndToEndTests {
  private func startKamailio() throws -> KamailioProcess {
    guard KamailioProcess.isInstalled else { throw XCTSkip("kamailio is not installed") }
    do {
      return try KamailioProcess(users: ["1001": "secret-1001", "1002": "secret-1002"])
    } catch let failure as KamailioProcess.StartFailure {
      throw XCTSkip(failure.description)
    }
  }

  private func registered(_ session: FPWCSApi2Session) async throws {
    try await session.connect()
    try await waitFor("REGISTERED", timeout: 10) {
      session.getStatus() == .fpwcsSessionStatusRegistered
    }
  }

  func testTwoSessionsRegisterThroughKamailioAndACallBetweenThemCarriesAudio() async throws {
    let kamailio = try startKamailio()
    defer { kamailio.stop() }
    let server = try startServer()
    defer { server.stop() }
    let registrar = UInt16(kamailio.port)
    let alice = try gatewaySession(
      server, login: "1001", sipPort: registrar, password: "secret-1001")
    defer { alice.disconnect() }
    let bob = try gatewaySession(server, login: "1002", sipPort: registrar, password: "secret-1002")
    defer { bob.disconnect() }
    let incoming = Locked<[FPWCSApi2Call]>([])
    bob.onIncomingCallCallback { call in
      if let call { incoming.withLock { $0.append(call) } }
    }
    try await registered(alice)
    try await registered(bob)
    XCTAssertTrue(kamailio.output.contains("registered sip:1001@127.0.0.1"), kamailio.output)
    XCTAssertTrue(kamailio.output.contains("registered sip:1002@127.0.0.1"))

    let call = try makeCall(alice, "1002")
    let connected = Task { try await call.connect() }
    try await waitFor("the incoming call", timeout: 15) { !incoming.value.isEmpty }
    XCTAssertTrue(
      kamailio.output.contains("routing INVITE for sip:1002@127.0.0.1"),
      "the INVITE went through kamailio")
    let answered = try XCTUnwrap(incoming.value.first)
    XCTAssertEqual(answered.getCaller(), "1001")
    answered.setLocalConstraints(virtualMicrophone())
    try await answered.connect()
    try await connected.value
    XCTAssertEqual(call.getStatus(), .fpwcsCallStatusEstablished)
    try await waitFor("audio bridged on both SIP legs", timeout: 10) {
      let legs = server.sipLegStatistics()
      return legs.count == 2
        && legs.allSatisfy { $0.packetsToSIP > 25 && $0.packetsToWebRTC > 25 }
    }
    call.hangup()
    try await waitFor("FINISH on both sides") {
      call.getStatus() == .fpwcsCallStatusFinish && answered.getStatus().isTerminal
    }
  }

  func testAWrongPasswordIsRefusedByKamailioAndTheSessionStaysUnregistered() async throws {
    let kamailio = try startKamailio()
    defer { kamailio.stop() }
    let server = try startServer()
    defer { server.stop() }
    let session = try gatewaySession(
      server, login: "1001", sipPort: UInt16(kamailio.port), password: "wrong")
    defer { session.disconnect() }
    try await session.connect()
    try await waitFor("UNREGISTERED", timeout: 15) {
      session.getStatus() == .fpwcsSessionStatusUnregistered
    }
    XCTAssertFalse(kamailio.output.contains("registered sip:1001"))
    let tries = kamailio.output.components(separatedBy: "REGISTER sip:1001@127.0.0.1 auth=1001")
    XCTAssertEqual(tries.count - 1, 3, "the gateway gives up after three challenged tries")
  }

  func testBaresipCallsARegisteredSessionThroughKamailio() async throws {
    let kamailio = try startKamailio()
    defer { kamailio.stop() }
    let server = try startServer()
    defer { server.stop() }
    let session = try gatewaySession(
      server, login: "1001", sipPort: UInt16(kamailio.port), password: "secret-1001")
    defer { session.disconnect() }
    let incoming = Locked<[FPWCSApi2Call]>([])
    session.onIncomingCallCallback { call in
      if let call { incoming.withLock { $0.append(call) } }
    }
    try await registered(session)
    let peer = try BaresipPeer.start(answer: true, dial: "sip:1001@127.0.0.1:\(kamailio.port)")
    defer { peer.stop() }
    try await waitFor("the incoming call", timeout: 15) { !incoming.value.isEmpty }
    let call = try XCTUnwrap(incoming.value.first)
    XCTAssertEqual(call.getCaller(), "baresip")
    try await call.connect()
    try await waitFor("baresip's tone reaches the gateway", timeout: 10) {
      server.sipLegStatistics().first.map { $0.recentSamples.count >= 4000 } ?? false
    }
    let samples = try XCTUnwrap(server.sipLegStatistics().first).recentSamples
    XCTAssertEqual(Tone.dominantFrequency(samples, rate: 8000), 880, accuracy: 20)
    call.hangup()
    try await waitFor("FINISH") { call.getStatus() == .fpwcsCallStatusFinish }
  }
}
