import XCTest

@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// RFC 8122 §5: a peer may signal several `a=fingerprint` lines; its certificate matching any
/// one of them is accepted.
final class DTLSMultipleFingerprintTests: XCTestCase {
  /// A started handshake whose client expects `expected(serverCertificate)` (none: the
  /// fingerprint comes later).
  func startLink(
    clientExpects expected: (DTLSCertificate) throws -> [DTLSFingerprint]
  ) throws -> (DTLSTestLink, client: DTLSEndpoint, serverCertificate: DTLSCertificate) {
    let clientCertificate = try DTLSCertificate()
    let serverCertificate = try DTLSCertificate()
    let fingerprints = try expected(serverCertificate)
    let client = try DTLSEndpoint(
      role: .client, certificate: clientCertificate, remoteFingerprint: fingerprints.first,
      additionalRemoteFingerprints: Array(fingerprints.dropFirst()))
    let server = try DTLSEndpoint(
      role: .server, certificate: serverCertificate,
      remoteFingerprint: clientCertificate.fingerprint)
    let link = DTLSTestLink(client: client, server: server)
    link.start()
    return (link, client, serverCertificate)
  }

  func testSecondFingerprintMatchingDuringTheHandshakeConnects() throws {
    let impostor = try DTLSCertificate()
    let (link, client, _) = try startLink {
      [impostor.fingerprint, try $0.fingerprint(using: .sha384)]
    }
    XCTAssertEqual(link.failures(.client), [])
    XCTAssertNotNil(link.connectedEvent(.client), "\(link.clientEvents)")
    XCTAssertNotNil(link.connectedEvent(.server), "\(link.serverEvents)")
    XCTAssertEqual(client.remoteFingerprints.count, 2)
  }

  func testSecondFingerprintMatchingAfterTheHandshakeConnects() throws {
    let (link, client, serverCertificate) = try startLink { _ in [] }
    XCTAssertEqual(client.state, .awaitingRemoteFingerprint)
    let wrong = try DTLSCertificate().fingerprint
    link.take(
      client.setRemoteFingerprints([wrong, serverCertificate.fingerprint], now: link.now),
      from: .client)
    XCTAssertNotNil(link.connectedEvent(.client), "\(link.clientEvents)")
  }

  func testNoMatchingFingerprintFailsNamingTheFirst() throws {
    let first = try DTLSCertificate().fingerprint
    let second = try DTLSCertificate().fingerprint(using: .sha512)
    let (link, _, serverCertificate) = try startLink { _ in [first, second] }
    XCTAssertNil(link.connectedEvent(.client))
    XCTAssertEqual(
      link.failures(.client),
      [.fingerprintMismatch(expected: first, actual: serverCertificate.fingerprint)])
  }

  func testSDPFingerprintsOfTheSectionAreAllReadAndUnsupportedHashesSkipped() throws {
    let certificate = try DTLSCertificate()
    let sha256 = PeerConnection.sdpFingerprint(certificate.fingerprint)
    let sha1 = PeerConnection.sdpFingerprint(try certificate.fingerprint(using: .sha1))
    let md5 = CertificateFingerprint(hashFunction: "md5", bytes: Array(repeating: 0xAB, count: 16))
    let text =
      "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
      + "a=fingerprint:sha-512 \(String(repeating: "00:", count: 63))00\r\n"
      + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\n"
      + "\(SDPWriter.line(for: .fingerprint(md5)))\r\n"
      + "\(SDPWriter.line(for: .fingerprint(sha1)))\r\n"
      + "\(SDPWriter.line(for: .fingerprint(sha256)))\r\n"
    let sdp = try SDPParser.parse(text).description
    let found = SDPAttribute.fingerprints(media: sdp.media[0], session: sdp)
    // Media level overrides the session's sha-512 line.
    XCTAssertEqual(found, [md5, sha1, sha256])
    XCTAssertEqual(
      try PeerConnection.dtlsFingerprints(found),
      [try certificate.fingerprint(using: .sha1), certificate.fingerprint])
    XCTAssertThrowsError(try PeerConnection.dtlsFingerprints([md5]))
  }
}
