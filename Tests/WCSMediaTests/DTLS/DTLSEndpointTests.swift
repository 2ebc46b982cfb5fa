import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class DTLSEndpointTests: XCTestCase {
  func testHandshakeConnectsBothSidesWithGCMAndSameKeyingMaterial() throws {
    let (link, clientCertificate, serverCertificate) = try DTLSTestLink.make()
    link.start()

    let client = try XCTUnwrap(link.connectedEvent(.client))
    let server = try XCTUnwrap(link.connectedEvent(.server))
    XCTAssertEqual(client.profile, .aeadAES128GCM)
    XCTAssertEqual(server.profile, .aeadAES128GCM)
    XCTAssertEqual(client.keyingMaterial.count, 56)
    XCTAssertEqual(client.keyingMaterial, server.keyingMaterial)
    XCTAssertNotEqual(client.keyingMaterial, [UInt8](repeating: 0, count: 56))
    XCTAssertEqual(link.client.state, .connected)
    XCTAssertEqual(link.server.state, .connected)
    XCTAssertEqual(link.client.peerCertificateFingerprint, serverCertificate.fingerprint)
    XCTAssertEqual(link.server.peerCertificateFingerprint, clientCertificate.fingerprint)
    XCTAssertTrue(link.failures(.client).isEmpty && link.failures(.server).isEmpty)
    XCTAssertTrue(link.emitted.allSatisfy { $0.count <= 1200 })
    // The first datagram is a ClientHello (handshake record 22, message type 1) whose
    // client_version is DTLS 1.2, 0xFEFD (RFC 6347 §4.2.1); its record version may say 1.0.
    let first = try XCTUnwrap(link.emitted.first)
    XCTAssertGreaterThan(first.count, 27)
    XCTAssertEqual(first.first, 22)
    XCTAssertEqual(first[13], 1)
    XCTAssertEqual(Array(first[25...26]), [0xFE, 0xFD])
  }

  func testTwoHandshakesExportDifferentKeys() throws {
    let (first, _, _) = try DTLSTestLink.make()
    let (second, _, _) = try DTLSTestLink.make()
    first.start()
    second.start()
    let a = try XCTUnwrap(first.connectedEvent(.client)).keyingMaterial
    let b = try XCTUnwrap(second.connectedEvent(.client)).keyingMaterial
    XCTAssertNotEqual(a, b)
  }

  func testAESCM80OnlyPeerGives60BytesOfKeyingMaterial() throws {
    let (link, _, _) = try DTLSTestLink.make(serverProfiles: [.aes128CMHMACSHA1_80])
    link.start()
    let client = try XCTUnwrap(link.connectedEvent(.client))
    let server = try XCTUnwrap(link.connectedEvent(.server))
    XCTAssertEqual(client.profile, .aes128CMHMACSHA1_80)
    XCTAssertEqual(server.profile, .aes128CMHMACSHA1_80)
    XCTAssertEqual(client.keyingMaterial.count, 60)
    XCTAssertEqual(client.keyingMaterial, server.keyingMaterial)
  }

  func testNoCommonProfileFails() throws {
    let (link, _, _) = try DTLSTestLink.make(
      clientProfiles: [.aeadAES128GCM], serverProfiles: [.aes128CMHMACSHA1_80])
    link.start()
    XCTAssertNil(link.connectedEvent(.client))
    XCTAssertNil(link.connectedEvent(.server))
    XCTAssertTrue(
      link.failures(.client).contains(.noSRTPProfileNegotiated)
        || link.failures(.server).contains(.noSRTPProfileNegotiated),
      "\(link.clientEvents) \(link.serverEvents)")
  }

  func testFingerprintMismatchFailsAndNeverConnects() throws {
    let clientCertificate = try DTLSCertificate()
    let serverCertificate = try DTLSCertificate()
    let impostor = try DTLSCertificate()
    let client = try DTLSEndpoint(
      role: .client, certificate: clientCertificate, remoteFingerprint: impostor.fingerprint)
    let server = try DTLSEndpoint(
      role: .server, certificate: serverCertificate,
      remoteFingerprint: clientCertificate.fingerprint)
    let link = DTLSTestLink(client: client, server: server)
    link.start()

    XCTAssertNil(link.connectedEvent(.client))
    XCTAssertEqual(
      link.failures(.client),
      [.fingerprintMismatch(expected: impostor.fingerprint, actual: serverCertificate.fingerprint)])
    // The client rejects the certificate inside the handshake, so its alert stops the server too.
    XCTAssertNil(link.connectedEvent(.server), "\(link.serverEvents)")
    guard case .handshakeFailed(let reason) = link.failures(.server).first else {
      return XCTFail("\(link.serverEvents)")
    }
    XCTAssertTrue(reason.contains("bad certificate"), reason)
    guard case .failed = client.state else { return XCTFail("state \(client.state)") }
    XCTAssertThrowsError(try client.send([1, 2, 3], now: link.now)) { error in
      XCTAssertEqual(error as? DTLSError, .notConnected)
    }
  }

  func testLateRemoteFingerprintHoldsConnectedUntilVerified() throws {
    let clientCertificate = try DTLSCertificate()
    let serverCertificate = try DTLSCertificate()
    let client = try DTLSEndpoint(
      role: .client, certificate: clientCertificate, remoteFingerprint: nil)
    let server = try DTLSEndpoint(
      role: .server, certificate: serverCertificate,
      remoteFingerprint: clientCertificate.fingerprint)
    let link = DTLSTestLink(client: client, server: server)
    link.start()

    XCTAssertEqual(client.state, .awaitingRemoteFingerprint)
    XCTAssertNil(link.connectedEvent(.client))
    XCTAssertNotNil(link.connectedEvent(.server))
    // Data the server sends before the client verified it is held back, then released in order.
    link.take(try server.send(Array("early".utf8), now: link.now), from: .server)
    link.deliver()
    XCTAssertFalse(link.clientEvents.contains(.applicationData(Array("early".utf8))))

    link.take(
      client.setRemoteFingerprint(serverCertificate.fingerprint, now: link.now), from: .client)
    let connected = try XCTUnwrap(link.connectedEvent(.client))
    XCTAssertEqual(connected.keyingMaterial, link.connectedEvent(.server)?.keyingMaterial)
    XCTAssertEqual(link.clientEvents.last, .applicationData(Array("early".utf8)))
  }

  func testRemoteFingerprintThatNeverArrivesTimesOut() throws {
    let certificate = try DTLSCertificate.shared
    let client = try DTLSEndpoint(role: .client, certificate: certificate, remoteFingerprint: nil)
    let server = try DTLSEndpoint(
      role: .server, certificate: certificate, remoteFingerprint: certificate.fingerprint)
    let link = DTLSTestLink(client: client, server: server)
    link.start()
    XCTAssertEqual(client.state, .awaitingRemoteFingerprint)
    XCTAssertEqual(client.nextDeadline, link.now + .seconds(30))
    link.advance(by: .seconds(30))
    guard case .timeout = link.failures(.client).first else {
      return XCTFail("\(link.clientEvents)")
    }
    XCTAssertNil(link.connectedEvent(.client))
  }

  func testLateWrongFingerprintFails() throws {
    let clientCertificate = try DTLSCertificate()
    let serverCertificate = try DTLSCertificate()
    let client = try DTLSEndpoint(
      role: .client, certificate: clientCertificate, remoteFingerprint: nil)
    let server = try DTLSEndpoint(
      role: .server, certificate: serverCertificate,
      remoteFingerprint: clientCertificate.fingerprint)
    let link = DTLSTestLink(client: client, server: server)
    link.start()
    let wrong = try serverCertificate.fingerprint(using: .sha1)
    let output = client.setRemoteFingerprint(
      try DTLSFingerprint(algorithm: .sha1, bytes: wrong.bytes.map { $0 ^ 0xFF }), now: link.now)
    XCTAssertEqual(output.events.count, 1)
    guard case .failed(.fingerprintMismatch(_, let actual)) = output.events.first else {
      return XCTFail("\(output.events)")
    }
    XCTAssertEqual(actual, wrong)
    XCTAssertNil(link.connectedEvent(.client))
    // The server had already verified the client; the close_notify tells it the session is over.
    XCTAssertFalse(output.datagrams.isEmpty)
    link.take(output, from: .client)
    link.deliver()
    XCTAssertEqual(link.serverEvents.last, .closed)
  }

  func testSHA384RemoteFingerprintIsVerifiedWithItsOwnAlgorithm() throws {
    let clientCertificate = try DTLSCertificate()
    let serverCertificate = try DTLSCertificate()
    let client = try DTLSEndpoint(
      role: .client, certificate: clientCertificate,
      remoteFingerprint: try serverCertificate.fingerprint(using: .sha384))
    let server = try DTLSEndpoint(
      role: .server, certificate: serverCertificate,
      remoteFingerprint: try clientCertificate.fingerprint(using: .sha512))
    let link = DTLSTestLink(client: client, server: server)
    link.start()
    XCTAssertNotNil(link.connectedEvent(.client))
    XCTAssertNotNil(link.connectedEvent(.server))
  }

  func testSmallMTUFragmentsHandshakeIntoDatagramsThatFit() throws {
    let (link, _, _) = try DTLSTestLink.make(mtu: 600)
    link.start()
    XCTAssertNotNil(link.connectedEvent(.client))
    XCTAssertNotNil(link.connectedEvent(.server))
    XCTAssertTrue(link.emitted.allSatisfy { $0.count <= 600 }, "\(link.emitted.map(\.count))")

    let (small, _, _) = try DTLSTestLink.make(mtu: 256)
    small.start()
    XCTAssertNotNil(small.connectedEvent(.client))
    XCTAssertTrue(small.emitted.allSatisfy { $0.count <= 256 }, "\(small.emitted.map(\.count))")
    // The server's certificate flight alone is larger than 256 bytes, so it must be split.
    XCTAssertGreaterThan(small.emitted.count, link.emitted.count)
  }

  func testMTUBelowOpenSSLMinimumIsRejected() throws {
    XCTAssertThrowsError(
      try DTLSEndpoint(
        role: .client, certificate: try DTLSCertificate.shared, remoteFingerprint: nil, mtu: 100)
    ) { error in
      guard case .setupFailed = error as? DTLSError else { return XCTFail("\(error)") }
    }
  }

  func testApplicationDataBothWays() throws {
    let (link, _, _) = try DTLSTestLink.make()
    link.start()
    let message = Array("SCTP over DTLS".utf8)
    link.take(try link.client.send(message, now: link.now), from: .client)
    link.deliver()
    XCTAssertEqual(link.serverEvents.last, .applicationData(message))
    let reply = [UInt8](repeating: 0xAB, count: 1000)
    link.take(try link.server.send(reply, now: link.now), from: .server)
    link.deliver()
    XCTAssertEqual(link.clientEvents.last, .applicationData(reply))
    XCTAssertTrue(link.emitted.allSatisfy { $0.count <= 1200 })
  }

  func testCloseSendsCloseNotifyAndPeerReportsClosed() throws {
    let (link, _, _) = try DTLSTestLink.make()
    link.start()
    let output = link.client.close(now: link.now)
    XCTAssertFalse(output.datagrams.isEmpty)
    XCTAssertTrue(output.events.isEmpty)
    link.take(output, from: .client)
    link.deliver()
    XCTAssertEqual(link.serverEvents.last, .closed)
    XCTAssertEqual(link.server.state, .closed)
    XCTAssertEqual(link.client.state, .closed)
    XCTAssertNil(link.server.nextDeadline)
    XCTAssertTrue(link.client.receive([22, 0xFE, 0xFD], now: link.now).events.isEmpty)
  }

  func testGarbageDatagramsDoNotBreakTheHandshakeOrTheConnection() throws {
    let (link, _, _) = try DTLSTestLink.make(initialRetransmissionTimeout: .milliseconds(20))
    let garbage: [[UInt8]] = [
      [],
      [0],
      [22],
      [22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF],
      [23, 0xFE, 0xFD] + [UInt8](repeating: 0x41, count: 200),
      [UInt8](repeating: 0xFF, count: 1500),
      [20, 0xFE, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
    ]
    for datagram in garbage { link.inject(datagram, to: .server) }
    link.start()
    for datagram in garbage {
      link.inject(datagram, to: .client)
      link.inject(datagram, to: .server)
    }
    // Plaintext epoch-0 garbage can take record sequence numbers the real flights then reuse
    // (replay window, RFC 6347 §4.1.2.6), so the handshake may need a retransmission (real timer).
    let giveUp = MediaInstant.now() + .seconds(2)
    while link.connectedEvent(.client) == nil && link.failures(.client).isEmpty
      && MediaInstant.now() < giveUp
    {
      Thread.sleep(forTimeInterval: 0.005)
      link.advance(by: .milliseconds(5))
    }
    XCTAssertNotNil(link.connectedEvent(.client), "\(link.clientEvents)")
    XCTAssertNotNil(link.connectedEvent(.server), "\(link.serverEvents)")
    // Records that fail authentication are dropped, so the connection still carries data.
    link.take(try link.client.send([7, 7, 7], now: link.now), from: .client)
    link.deliver()
    XCTAssertEqual(link.serverEvents.last, .applicationData([7, 7, 7]))
  }

  func testGarbageHandshakeToFreshServerFailsCleanlyOrIsIgnored() throws {
    let server = try DTLSEndpoint(
      role: .server, certificate: try DTLSCertificate.shared, remoteFingerprint: nil)
    let now = MediaInstant.now()
    _ = server.start(now: now)
    // A well-formed record header carrying a truncated ClientHello.
    let truncatedHello: [UInt8] = [
      22, 0xFE, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12,
      1, 0, 0, 200, 0, 0, 0, 0, 0, 0, 0, 0,
    ]
    let output = server.receive(truncatedHello, now: now)
    for event in output.events {
      guard case .failed(.handshakeFailed(let reason)) = event else {
        return XCTFail("\(event)")
      }
      XCTAssertFalse(reason.isEmpty)
    }
  }

  func testNextDeadlineIsTheHandshakeTimeoutOrRetransmissionTimer() throws {
    let (link, _, _) = try DTLSTestLink.make()
    link.shouldDrop = { _, _, _ in true }
    link.start()
    let deadline = try XCTUnwrap(link.client.nextDeadline)
    XCTAssertGreaterThan(deadline, link.now)
    XCTAssertLessThanOrEqual(deadline, link.now + .seconds(1))
    XCTAssertEqual(link.server.nextDeadline, link.now + .seconds(30))
  }

  func testHandshakeTimeoutOnTheCallersClock() throws {
    let (link, _, _) = try DTLSTestLink.make()
    link.shouldDrop = { _, _, _ in true }
    link.start()
    link.advance(by: .seconds(29))
    XCTAssertTrue(link.failures(.client).isEmpty)
    link.advance(by: .seconds(1))
    guard case .timeout(_, let elapsed) = link.failures(.client).first else {
      return XCTFail("\(link.clientEvents)")
    }
    XCTAssertEqual(elapsed, .seconds(30))
    XCTAssertEqual(link.failures(.server).count, 1)
    XCTAssertNil(link.client.nextDeadline)
  }

  /// OpenSSL's retransmission timer reads the real clock, so this test sets a 20 ms initial
  /// timeout and waits for it for real (bounded to 2 s) instead of advancing a virtual clock.
  func testLostFirstFlightIsRetransmittedAfterTheTimer() throws {
    let (link, _, _) = try DTLSTestLink.make(initialRetransmissionTimeout: .milliseconds(20))
    link.shouldDrop = { side, index, _ in side == .client && index == 0 }
    link.start()
    XCTAssertNil(link.connectedEvent(.client))
    XCTAssertEqual(link.emitted.count, 1)
    let clientHello = try XCTUnwrap(link.emitted.first)

    let giveUp = MediaInstant.now() + .seconds(2)
    while link.connectedEvent(.client) == nil && MediaInstant.now() < giveUp {
      Thread.sleep(forTimeInterval: 0.005)
      link.advance(by: .milliseconds(5))
    }
    XCTAssertNotNil(link.connectedEvent(.client))
    XCTAssertNotNil(link.connectedEvent(.server))
    XCTAssertGreaterThanOrEqual(link.client.retransmissions, 1)
    // The retransmitted ClientHello carries the same handshake body under a new record sequence
    // number (RFC 6347 §4.2.4): bytes after the 13-byte record header are equal.
    XCTAssertEqual(Array(link.emitted[1].dropFirst(13)), Array(clientHello.dropFirst(13)))
  }

  func testLostServerFlightIsRetransmitted() throws {
    let (link, _, _) = try DTLSTestLink.make(initialRetransmissionTimeout: .milliseconds(20))
    link.shouldDrop = { side, index, _ in side == .server && index == 0 }
    link.start()
    XCTAssertNil(link.connectedEvent(.client))
    let giveUp = MediaInstant.now() + .seconds(2)
    while link.connectedEvent(.server) == nil && MediaInstant.now() < giveUp {
      Thread.sleep(forTimeInterval: 0.005)
      link.advance(by: .milliseconds(5))
    }
    XCTAssertNotNil(link.connectedEvent(.client))
    XCTAssertNotNil(link.connectedEvent(.server))
    XCTAssertEqual(
      link.connectedEvent(.client)?.keyingMaterial, link.connectedEvent(.server)?.keyingMaterial)
  }

  func testLostFinalServerFlightIsRecoveredAfterBothSidesThinkTheyAreDone() throws {
    let (link, _, _) = try DTLSTestLink.make(initialRetransmissionTimeout: .milliseconds(20))
    var droppedFinal = false
    // The server's last flight starts with ChangeCipherSpec (content type 20).
    link.shouldDrop = { side, _, datagram in
      guard side == .server, datagram.first == 20, !droppedFinal else { return false }
      droppedFinal = true
      return true
    }
    link.start()
    XCTAssertTrue(droppedFinal)
    XCTAssertNotNil(link.connectedEvent(.server))
    XCTAssertNil(link.connectedEvent(.client))
    let giveUp = MediaInstant.now() + .seconds(2)
    while link.connectedEvent(.client) == nil && MediaInstant.now() < giveUp {
      Thread.sleep(forTimeInterval: 0.005)
      link.advance(by: .milliseconds(5))
    }
    XCTAssertEqual(
      link.connectedEvent(.client)?.keyingMaterial, link.connectedEvent(.server)?.keyingMaterial)
    XCTAssertEqual(
      link.serverEvents.filter { if case .connected = $0 { true } else { false } }.count, 1)
  }

  func testRetransmissionTimeoutDoublesFromTheInitialUpToTheCap() {
    var timeouts: [UInt32] = []
    var previous: UInt32 = 0
    for _ in 0..<9 {
      previous = DTLSEndpoint.nextRetransmissionTimeout(
        previous: previous, initial: 50_000, maximum: 3_000_000)
      timeouts.append(previous)
    }
    XCTAssertEqual(
      timeouts,
      [50_000, 100_000, 200_000, 400_000, 800_000, 1_600_000, 3_000_000, 3_000_000, 3_000_000])
    // A new flight starts from the initial timeout again.
    XCTAssertEqual(
      DTLSEndpoint.nextRetransmissionTimeout(previous: 0, initial: 50_000, maximum: 3_000_000),
      50_000)
  }

  /// The defaults, on OpenSSL's real clock: the ClientHello's timer is due 50 ms after start
  /// (not OpenSSL's 1 s), and once it expired the retransmitted flight's timer is twice that.
  func testDefaultTimerRetransmitsTheFirstFlightAfterFiftyMillisecondsThenDoubles() throws {
    XCTAssertEqual(DTLSEndpoint.defaultInitialRetransmissionTimeout, .milliseconds(50))
    let certificate = try DTLSCertificate.shared
    let client = try DTLSEndpoint(
      role: .client, certificate: certificate, remoteFingerprint: certificate.fingerprint)
    let start = MediaInstant.now()
    XCTAssertEqual(client.start(now: start).datagrams.count, 1)
    let first = try XCTUnwrap(client.nextDeadline) - start
    // OpenSSL reports a timer with under 15 ms left as expired; the test's own time is spent.
    XCTAssertLessThanOrEqual(first, .milliseconds(50))
    XCTAssertGreaterThan(first, .milliseconds(30))

    Thread.sleep(forTimeInterval: 0.06)
    let now = MediaInstant.now()
    let output = client.handleTimeout(now: now)
    XCTAssertEqual(output.datagrams.count, 1, "the ClientHello again")
    XCTAssertEqual(client.retransmissions, 1)
    let second = try XCTUnwrap(client.nextDeadline) - now
    XCTAssertLessThanOrEqual(second, .milliseconds(100))
    XCTAssertGreaterThan(second, .milliseconds(60))
  }

  func testInitialRetransmissionTimeoutIsTwiceTheRoundTripTimeWithinLimits() throws {
    XCTAssertEqual(
      DTLSEndpoint.initialRetransmissionTimeout(roundTripTime: .microseconds(300)),
      .milliseconds(50))
    XCTAssertEqual(
      DTLSEndpoint.initialRetransmissionTimeout(roundTripTime: .milliseconds(120)),
      .milliseconds(240))
    XCTAssertEqual(
      DTLSEndpoint.initialRetransmissionTimeout(roundTripTime: .seconds(2)), .seconds(3))

    // Set before start, it is the ClientHello's timer.
    let certificate = try DTLSCertificate.shared
    let client = try DTLSEndpoint(
      role: .client, certificate: certificate, remoteFingerprint: certificate.fingerprint)
    client.setInitialRetransmissionTimeout(.milliseconds(240))
    let start = MediaInstant.now()
    _ = client.start(now: start)
    let due = try XCTUnwrap(client.nextDeadline) - start
    XCTAssertLessThanOrEqual(due, .milliseconds(240))
    XCTAssertGreaterThan(due, .milliseconds(200))
  }

  func testTooManyRetransmissionsFailWithTimeout() throws {
    let certificate = try DTLSCertificate.shared
    let client = try DTLSEndpoint(
      role: .client, certificate: certificate, remoteFingerprint: certificate.fingerprint,
      initialRetransmissionTimeout: .milliseconds(20), maxRetransmissions: 2)
    var now = MediaInstant.now()
    var sent = client.start(now: now).datagrams.count
    var events: [DTLSEvent] = []
    let giveUp = MediaInstant.now() + .seconds(2)
    while events.isEmpty && MediaInstant.now() < giveUp {
      Thread.sleep(forTimeInterval: 0.005)
      now = now + .milliseconds(5)
      let output = client.handleTimeout(now: now)
      sent += output.datagrams.count
      events += output.events
    }
    XCTAssertEqual(events.count, 1)
    guard case .failed(.timeout(let retransmissions, _)) = events.first else {
      return XCTFail("\(events)")
    }
    // Normally exactly 2; OpenSSL may resend once more on its own if this thread was descheduled
    // past a timer inside a call.
    XCTAssertGreaterThanOrEqual(retransmissions, 2)
    XCTAssertLessThanOrEqual(retransmissions, 3)
    XCTAssertEqual(retransmissions, client.retransmissions)
    XCTAssertEqual(sent, 1 + retransmissions, "the ClientHello and its retransmissions")
    XCTAssertNil(client.nextDeadline)
  }

  func testServerFallsBackToClientWhenNoClientHelloArrives() throws {
    let clientCertificate = try DTLSCertificate()
    let serverCertificate = try DTLSCertificate()
    // Both sides think they are the server (an answer without a=setup meeting a passive peer).
    let guessing = try DTLSEndpoint(
      role: .server, certificate: clientCertificate,
      remoteFingerprint: serverCertificate.fingerprint, fallbackToClientAfter: .seconds(2))
    let passive = try DTLSEndpoint(
      role: .server, certificate: serverCertificate,
      remoteFingerprint: clientCertificate.fingerprint)
    let link = DTLSTestLink(client: guessing, server: passive)
    link.start()
    XCTAssertTrue(link.emitted.isEmpty)
    XCTAssertEqual(guessing.nextDeadline, link.now + .seconds(2))
    link.advance(by: .milliseconds(1999))
    XCTAssertEqual(guessing.role, .server)
    XCTAssertTrue(link.emitted.isEmpty)
    link.advance(by: .milliseconds(1))
    XCTAssertEqual(guessing.role, .client)
    XCTAssertNotNil(link.connectedEvent(.client))
    XCTAssertNotNil(link.connectedEvent(.server))
  }

  func testServerThatHearsAClientHelloDoesNotFallBack() throws {
    let (base, clientCertificate, serverCertificate) = try DTLSTestLink.make()
    let server = try DTLSEndpoint(
      role: .server, certificate: serverCertificate,
      remoteFingerprint: clientCertificate.fingerprint, fallbackToClientAfter: .seconds(2))
    let link = DTLSTestLink(client: base.client, server: server)
    link.start()
    XCTAssertNotNil(link.connectedEvent(.server))
    link.advance(by: .seconds(3))
    XCTAssertEqual(server.role, .server)
    XCTAssertEqual(server.state, .connected)
  }
}
