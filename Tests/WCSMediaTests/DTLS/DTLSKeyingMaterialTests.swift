import CWebRTCCore
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// Checks the exported SRTP keying material against an independent TLS 1.2 PRF (RFC 5246 §5)
/// computed here with HMAC-SHA256, so a wrong label, context or length would show.
final class DTLSKeyingMaterialTests: XCTestCase {
  /// RFC 5764 §4.1.2 and RFC 7714 §14.2 name one registry: each DTLS profile keys the SRTP
  /// profile of its id, with the lengths of RFC 3711 and RFC 7714 §12.
  func testEachProfileKeysTheSRTPProfileOfItsID() {
    let lengths: [DTLSSRTPProfile: (key: Int, salt: Int, exported: Int)] = [
      .aes128CMHMACSHA1_80: (16, 14, 60), .aes128CMHMACSHA1_32: (16, 14, 60),
      .aeadAES128GCM: (16, 12, 56), .aeadAES256GCM: (32, 12, 88),
    ]
    for profile in DTLSSRTPProfile.allCases {
      XCTAssertEqual(profile.srtpProfile.rawValue, profile.rawValue, "\(profile)")
      XCTAssertEqual(profile.keyLength, lengths[profile]?.key, "\(profile)")
      XCTAssertEqual(profile.saltLength, lengths[profile]?.salt, "\(profile)")
      XCTAssertEqual(profile.keyingMaterialLength, lengths[profile]?.exported, "\(profile)")
    }
  }

  func testPRFMatchesThePublishedTLS12Vector() {
    // IETF TLS WG PRF(SHA-256) vector (corpus vectors/dtls-srtp-rfc5764.json).
    let output = prf(
      secret: hex("9bbe436ba940f017b17652849a71db35"), label: "test label",
      seed: hex("a0ba9f936cda311827a6f796ffd5198c"), count: 100)
    XCTAssertEqual(
      output,
      hex(
        "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a6b301791e90d35c9c9a46b4e"
          + "14baf9af0fa022f7077def17abfd3797c0564bab4fbc91666e9def9b97fce34f796789baa48082d122ee42"
          + "c5a72e5a5110fff70187347b66"))
  }

  func testSyntheticExporterExampleSplitsIntoRoleKeys() throws {
    // Corpus "synthetic_exporter_example" (computed, not from an RFC).
    let material = prf(
      secret: hex(
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f"
      ),
      label: "EXTRACTOR-dtls_srtp",
      seed: hex("404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f")
        + hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"),
      count: 60)
    XCTAssertEqual(
      material,
      hex(
        "0153f7ee77ea9cc39eeb256d8b0d14c87f4114eda964aa1c654af1f364fb648ce2c97614b368a0c1ab1fac01"
          + "14651c7badd4dc8fc24b62b264b474cb"))
    let keys = try DTLSSRTPKeyingMaterial(profile: .aes128CMHMACSHA1_80, bytes: material)
    XCTAssertEqual(keys.clientWriteKey, hex("0153f7ee77ea9cc39eeb256d8b0d14c8"))
    XCTAssertEqual(keys.serverWriteKey, hex("7f4114eda964aa1c654af1f364fb648c"))
    XCTAssertEqual(keys.clientWriteSalt, hex("e2c97614b368a0c1ab1fac011465"))
    XCTAssertEqual(keys.serverWriteSalt, hex("1c7badd4dc8fc24b62b264b474cb"))
    XCTAssertEqual(keys.outbound(for: .client).key, keys.inbound(for: .server).key)
    XCTAssertEqual(keys.outbound(for: .server).salt, keys.serverWriteSalt)
    XCTAssertThrowsError(try DTLSSRTPKeyingMaterial(profile: .aeadAES128GCM, bytes: material))
  }

  func testEndpointExportIsThePRFOfTheSessionMasterSecret() throws {
    let (link, _, _) = try DTLSTestLink.make()
    link.start()
    let connected = try XCTUnwrap(link.connectedEvent(.client))

    let ssl = link.client.ssl
    var clientRandom = [UInt8](repeating: 0, count: 32)
    var serverRandom = [UInt8](repeating: 0, count: 32)
    var master = [UInt8](repeating: 0, count: 48)
    XCTAssertEqual(SSL_get_client_random(ssl, &clientRandom, 32), 32)
    XCTAssertEqual(SSL_get_server_random(ssl, &serverRandom, 32), 32)
    XCTAssertEqual(SSL_SESSION_get_master_key(SSL_get_session(ssl), &master, 48), 48)

    let suiteDigest = SSL_CIPHER_get_handshake_digest(SSL_get_current_cipher(ssl))
    XCTAssertNotNil(suiteDigest)
    let expected = prf(
      secret: master, label: "EXTRACTOR-dtls_srtp", seed: clientRandom + serverRandom, count: 56,
      digest: suiteDigest)
    XCTAssertEqual(connected.keyingMaterial, expected)
    let keys = try DTLSSRTPKeyingMaterial(
      profile: connected.profile, bytes: connected.keyingMaterial)
    XCTAssertEqual(keys.clientWriteKey.count, 16)
    XCTAssertEqual(keys.clientWriteSalt.count, 12)
  }

  /// TLS 1.2 PRF (RFC 5246 §5) with P_hash over `digest` (SHA-256 unless the cipher suite says
  /// otherwise, e.g. SHA-384 for the AES-256-GCM suites).
  private func prf(
    secret: [UInt8], label: String, seed: [UInt8], count: Int, digest: OpaquePointer? = EVP_sha256()
  ) -> [UInt8] {
    let labelSeed = Array(label.utf8) + seed
    var output: [UInt8] = []
    var a = labelSeed
    while output.count < count {
      a = hmac(digest, secret, a)
      output += hmac(digest, secret, a + labelSeed)
    }
    return Array(output.prefix(count))
  }

  private func hmac(_ digest: OpaquePointer?, _ key: [UInt8], _ data: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 64)
    var length: UInt32 = 0
    _ = HMAC(digest, key, Int32(key.count), data, data.count, &out, &length)
    return Array(out.prefix(Int(length)))
  }

  private func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex)
    {
      bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
      index = next
    }
    return bytes
  }
}
