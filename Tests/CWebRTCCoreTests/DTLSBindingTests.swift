import CWebRTCCore
import XCTest

/// OpenSSL DTLS 1.2 with the use_srtp extension between two in-memory endpoints (RFC 5764).
final class DTLSBindingTests: XCTestCase {
  /// RFC 5764 §4.2 and RFC 7714 §14.2 values, used when the corpus is absent.
  private struct ProfileFacts {
    var exporterLabel = "EXTRACTOR-dtls_srtp"
    var gcmID: UInt = 0x0007
    var gcmKeyingLength = 2 * (16 + 12)
    var aesCMID: UInt = 0x0001
    var aesCMKeyingLength = 2 * (16 + 14)
  }

  func testHandshakeNegotiatesAEADAES128GCMAndBothSidesExportTheSameKeys() throws {
    let facts = try profileFacts()
    let (client, server) = try handshake(
      profiles: "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80")

    XCTAssertEqual(client.protocolVersion, "DTLSv1.2")
    XCTAssertEqual(client.selectedSRTPProfile?.id, facts.gcmID)
    XCTAssertEqual(server.selectedSRTPProfile?.id, facts.gcmID)
    XCTAssertEqual(client.selectedSRTPProfile?.name, "SRTP_AEAD_AES_128_GCM")

    let clientKeys = try client.exportKeyingMaterial(
      label: facts.exporterLabel, length: facts.gcmKeyingLength)
    let serverKeys = try server.exportKeyingMaterial(
      label: facts.exporterLabel, length: facts.gcmKeyingLength)
    XCTAssertEqual(clientKeys.count, 56)
    XCTAssertEqual(clientKeys, serverKeys)
    XCTAssertNotEqual(clientKeys, [UInt8](repeating: 0, count: 56))
    // A different label gives different material, so the exporter really used the label.
    XCTAssertNotEqual(
      try client.exportKeyingMaterial(label: "EXTRACTOR-other", length: 56), clientKeys)

    try assertFingerprintsCross(client, server)
  }

  func testHandshakeWithOnlyAESCM128NegotiatesItAndExports60Octets() throws {
    let facts = try profileFacts()
    let (client, server) = try handshake(profiles: "SRTP_AES128_CM_SHA1_80")
    XCTAssertEqual(client.selectedSRTPProfile?.id, facts.aesCMID)
    XCTAssertEqual(server.selectedSRTPProfile?.id, facts.aesCMID)
    let clientKeys = try client.exportKeyingMaterial(
      label: facts.exporterLabel, length: facts.aesCMKeyingLength)
    XCTAssertEqual(clientKeys.count, 60)
    XCTAssertEqual(
      clientKeys,
      try server.exportKeyingMaterial(label: facts.exporterLabel, length: facts.aesCMKeyingLength))
    try assertFingerprintsCross(client, server)
  }

  /// Keys exported by the handshake drive libsrtp: client_write keys protect, the server
  /// unprotects with the same (RFC 5764 §4.2 key layout).
  func testExportedGCMKeysProtectAndUnprotectWithLibsrtp() throws {
    let facts = try profileFacts()
    let (client, server) = try handshake(profiles: "SRTP_AEAD_AES_128_GCM")
    let clientMaterial = try client.exportKeyingMaterial(label: facts.exporterLabel, length: 56)
    let serverMaterial = try server.exportKeyingMaterial(label: facts.exporterLabel, length: 56)
    // client_write_key(16) | server_write_key(16) | client_write_salt(12) | server_write_salt(12)
    let clientWrite = Array(clientMaterial[0..<16]) + Array(clientMaterial[32..<44])
    let serverSideClientWrite = Array(serverMaterial[0..<16]) + Array(serverMaterial[32..<44])
    let sender = try SRTPTestSession(
      profile: .aeadAES128GCM, keyAndSalt: clientWrite, ssrc: nil, outbound: true)
    let receiver = try SRTPTestSession(
      profile: .aeadAES128GCM, keyAndSalt: serverSideClientWrite, ssrc: nil, outbound: false)
    let rtp: [UInt8] = [0x80, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9] + Array(repeating: 0x42, count: 30)
    XCTAssertEqual(try receiver.unprotect(try sender.protect(rtp)), rtp)
  }

  /// The client arms its retransmission timer with its first flight (RFC 6347 §4.2.4: 1 s
  /// initial value in OpenSSL) and stops it once the handshake completes.
  func testClientRetransmissionTimerRunsDuringHandshakeOnly() throws {
    let client = try DTLSTestEndpoint(
      isClient: true, srtpProfiles: "SRTP_AEAD_AES_128_GCM", commonName: "wcs-client")
    let server = try DTLSTestEndpoint(
      isClient: false, srtpProfiles: "SRTP_AEAD_AES_128_GCM", commonName: "wcs-server")
    XCTAssertNil(client.retransmissionTimeout, "no timer before the first flight")
    XCTAssertFalse(try client.advanceHandshake())
    let clientHello = client.takeOutgoing()
    XCTAssertEqual(clientHello.first, 22, "a DTLS handshake record (RFC 6347 §4.1)")
    let timeout = try XCTUnwrap(client.retransmissionTimeout)
    XCTAssertLessThanOrEqual(timeout, 1_000_000)

    server.receive(clientHello)
    var done = false
    for _ in 0..<10 where !done {
      client.receive(server.takeOutgoing())
      let clientDone = try client.advanceHandshake()
      server.receive(client.takeOutgoing())
      done = try server.advanceHandshake() && clientDone
    }
    XCTAssertTrue(done)
    XCTAssertNil(client.retransmissionTimeout, "timer stopped after the handshake")
  }

  // MARK: Helpers

  private func handshake(profiles: String) throws -> (DTLSTestEndpoint, DTLSTestEndpoint) {
    let client = try DTLSTestEndpoint(
      isClient: true, srtpProfiles: profiles, commonName: "wcs-client")
    let server = try DTLSTestEndpoint(
      isClient: false, srtpProfiles: profiles, commonName: "wcs-server")
    var clientDone = false
    var serverDone = false
    // A lossless handshake takes 2 round trips; the bound only stops a broken one from spinning.
    for _ in 0..<10 {
      clientDone = try client.advanceHandshake()
      server.receive(client.takeOutgoing())
      serverDone = try server.advanceHandshake()
      client.receive(server.takeOutgoing())
      if clientDone && serverDone { break }
    }
    XCTAssertTrue(clientDone, "client handshake finished")
    XCTAssertTrue(serverDone, "server handshake finished")
    return (client, server)
  }

  private func assertFingerprintsCross(
    _ client: DTLSTestEndpoint, _ server: DTLSTestEndpoint, line: UInt = #line
  ) throws {
    let clientFingerprint = try client.localFingerprint
    let serverFingerprint = try server.localFingerprint
    XCTAssertEqual(clientFingerprint.count, 32, line: line)
    XCTAssertNotEqual(clientFingerprint, serverFingerprint, line: line)
    XCTAssertEqual(try server.peerFingerprint, clientFingerprint, line: line)
    XCTAssertEqual(try client.peerFingerprint, serverFingerprint, line: line)
  }

  private func profileFacts() throws -> ProfileFacts {
    var facts = ProfileFacts()
    guard let corpus = try Corpus.vectors("dtls-srtp-rfc5764.json") else { return facts }
    if let label: String = corpusValue(corpus, "exporter_label") { facts.exporterLabel = label }
    if let gcm: String = corpusValue(corpus, "protection_profiles", "SRTP_AEAD_AES_128_GCM"),
      let id = UInt(gcm.dropFirst(2), radix: 16)
    {
      facts.gcmID = id
    }
    if let aesCM: String = corpusValue(
      corpus, "protection_profiles", "SRTP_AES128_CM_HMAC_SHA1_80"),
      let id = UInt(aesCM.dropFirst(2), radix: 16)
    {
      facts.aesCMID = id
    }
    if let key: Int = corpusValue(corpus, "profile_params", "SRTP_AEAD_AES_128_GCM", "key"),
      let salt: Int = corpusValue(corpus, "profile_params", "SRTP_AEAD_AES_128_GCM", "salt")
    {
      facts.gcmKeyingLength = 2 * (key + salt)
    }
    if let key: Int = corpusValue(corpus, "profile_params", "SRTP_AES128_CM_HMAC_SHA1_80", "key"),
      let salt: Int = corpusValue(corpus, "profile_params", "SRTP_AES128_CM_HMAC_SHA1_80", "salt")
    {
      facts.aesCMKeyingLength = 2 * (key + salt)
    }
    return facts
  }
}
