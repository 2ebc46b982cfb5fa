import CWebRTCCore
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// Known-answer packets and DTLS-SRTP key splitting against published vectors.
final class SRTPKnownAnswerTests: XCTestCase {
  /// Protects `plain` with a fresh outbound session and unprotects `expected` with a fresh
  /// inbound one.
  private func assertKnownAnswer(
    profile: SRTPProtectionProfile, key: [UInt8], salt: [UInt8], plain: [UInt8],
    expected: [UInt8], rtcp: Bool = false, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let master = SRTPMasterKey(key: key, salt: salt)
    let outbound = try SRTPSession(profile: profile, masterKey: master, direction: .outbound)
    let inbound = try SRTPSession(profile: profile, masterKey: master, direction: .inbound)
    var packet = plain
    if rtcp { try outbound.protectRTCP(&packet) } else { try outbound.protectRTP(&packet) }
    XCTAssertEqual(Hex.string(packet), Hex.string(expected), file: file, line: line)
    var received = expected
    if rtcp { try inbound.unprotectRTCP(&received) } else { try inbound.unprotectRTP(&received) }
    XCTAssertEqual(received, plain, file: file, line: line)
  }

  /// libsrtp's srtp_validate packet (AES_CM_128_HMAC_SHA1_80), written here so the test means
  /// something without the corpus.
  func testLibsrtpAESCMKnownAnswerInline() throws {
    try assertKnownAnswer(
      profile: .aes128CMHMACSHA1_80,
      key: Hex.bytes("e1f97a0d3e018be0d64fa32c06de4139"),
      salt: Hex.bytes("0ec675ad498afeebb6960b3aabe6"),
      plain: Hex.bytes("800f1234decafbadcafebabeabababababababababababababababab"),
      expected: Hex.bytes(
        "800f1234decafbadcafebabe4e55dc4ce79978d88ca4d215949d2402b78d6acc99ea179b8dbb"))
  }

  /// libsrtp's srtp_validate_gcm packets (test/srtp_driver.c): master key 00..0f, salt a0..ab.
  func testLibsrtpGCMKnownAnswersInline() throws {
    let key = Hex.bytes("000102030405060708090a0b0c0d0e0f")
    let salt = Hex.bytes("a0a1a2a3a4a5a6a7a8a9aaab")
    try assertKnownAnswer(
      profile: .aeadAES128GCM, key: key, salt: salt,
      plain: Hex.bytes("800f1234decafbadcafebabe" + String(repeating: "ab", count: 16)),
      expected: Hex.bytes(
        "800f1234decafbadcafebabec5002ede04cfdd2eb91159e0880aa06ed2976826f796b201df3131a127e8a392"))
    try assertKnownAnswer(
      profile: .aeadAES128GCM, key: key, salt: salt,
      plain: Hex.bytes("81c8000bcafebabe" + String(repeating: "ab", count: 16)),
      expected: Hex.bytes(
        "81c8000bcafebabec98b8b5df0392a55852b6c21ac8e7025c52c6fbea2b3b446ea31123ba88ce61e80000001"),
      rtcp: true)
  }

  func testLibsrtpKnownAnswerFromVectorFile() throws {
    let vectors = try Corpus.json("vectors/srtp-rfc3711-6188-7714.json")
    let kat = try XCTUnwrap(vectors["srtp_packet_kat_aes128_cm_hmac_sha1_80"])
    XCTAssertEqual(kat["roc"]?.int, 0)
    XCTAssertEqual(
      kat["tag_octets"]?.int, SRTPProtectionProfile.aes128CMHMACSHA1_80.rtpTrailerLength)
    try assertKnownAnswer(
      profile: .aes128CMHMACSHA1_80,
      key: Hex.bytes(try XCTUnwrap(kat["master_key"]?.string)),
      salt: Hex.bytes(try XCTUnwrap(kat["master_salt"]?.string)),
      plain: Hex.bytes(try XCTUnwrap(kat["plain_rtp"]?.string)),
      expected: Hex.bytes(try XCTUnwrap(kat["srtp"]?.string)))
  }

  /// RFC 7714 §16/§17 give session keys (no KDF), which libsrtp cannot take: every libsrtp
  /// session derives its keys from a master key. So these vectors check the RFC 7714 packet
  /// construction (IV, AAD, trailer) with AES-GCM from OpenSSL; the GCM profile of
  /// `SRTPSession` is checked by the libsrtp GCM known answers above.
  func testRFC7714VectorsWithAESGCM() throws {
    let vectors = try Corpus.json("vectors/srtp-rfc3711-6188-7714.json")
    let rtp = try XCTUnwrap(vectors["rfc7714_16_rtp_aead_aes_gcm"])
    let salt = Hex.bytes(try XCTUnwrap(rtp["session_salt"]?.string))
    let plainRTP = Hex.bytes(try XCTUnwrap(rtp["plain_rtp"]?.string))
    let ssrc = Array(plainRTP[8..<12])
    let sequence = Hex.bytes(try XCTUnwrap(rtp["seq"]?.string))
    XCTAssertEqual(Array(plainRTP[2..<4]), sequence)
    XCTAssertEqual(Hex.string(ssrc), rtp["ssrc"]?.string)
    // IV = (00 00 || SSRC || ROC || SEQ) XOR salt (RFC 7714 §8.1).
    let rtpIV = zip([0, 0] + ssrc + [0, 0, 0, 0] + sequence, salt).map { $0 ^ $1 }
    XCTAssertEqual(Hex.string(rtpIV), rtp["iv"]?.string)
    for (name, cipher) in [
      ("aead_aes_128_gcm", EVP_aes_128_gcm()), ("aead_aes_256_gcm", EVP_aes_256_gcm()),
    ] {
      let entry = try XCTUnwrap(rtp[name])
      let sealed = try gcmSeal(
        cipher: try XCTUnwrap(cipher), key: Hex.bytes(try XCTUnwrap(entry["key"]?.string)),
        iv: rtpIV, aad: Array(plainRTP.prefix(12)), plaintext: Array(plainRTP.dropFirst(12)))
      XCTAssertEqual(Hex.string(Array(plainRTP.prefix(12)) + sealed), entry["srtp"]?.string, name)
    }

    let rtcp = try XCTUnwrap(vectors["rfc7714_17_rtcp_aead_aes_gcm"])
    let rtcpSalt = Hex.bytes(try XCTUnwrap(rtcp["session_salt"]?.string))
    let plainRTCP = Hex.bytes(try XCTUnwrap(rtcp["plain_rtcp"]?.string))
    let index = Hex.bytes(try XCTUnwrap(rtcp["srtcp_index"]?.string))
    // IV = (00 00 || SSRC || 00 00 || 0 || index) XOR salt; AAD = header 8 || E|index (§9.1).
    let rtcpIV = zip([0, 0] + Array(plainRTCP[4..<8]) + [0, 0] + index, rtcpSalt).map { $0 ^ $1 }
    XCTAssertEqual(Hex.string(rtcpIV), rtcp["iv"]?.string)
    var eAndIndex = index
    eAndIndex[0] |= 0x80
    for (name, cipher) in [
      ("aead_aes_128_gcm", EVP_aes_128_gcm()), ("aead_aes_256_gcm", EVP_aes_256_gcm()),
    ] {
      let entry = try XCTUnwrap(rtcp[name])
      let sealed = try gcmSeal(
        cipher: try XCTUnwrap(cipher), key: Hex.bytes(try XCTUnwrap(entry["key"]?.string)),
        iv: rtcpIV, aad: Array(plainRTCP.prefix(8)) + eAndIndex,
        plaintext: Array(plainRTCP.dropFirst(8)))
      XCTAssertEqual(
        Hex.string(Array(plainRTCP.prefix(8)) + sealed + eAndIndex), entry["srtcp"]?.string, name)
    }
  }

  /// AES-GCM with a 16-octet tag: ciphertext || tag.
  private func gcmSeal(
    cipher: OpaquePointer, key: [UInt8], iv: [UInt8], aad: [UInt8], plaintext: [UInt8]
  ) throws -> [UInt8] {
    let context = try XCTUnwrap(EVP_CIPHER_CTX_new())
    defer { EVP_CIPHER_CTX_free(context) }
    XCTAssertEqual(EVP_EncryptInit_ex(context, cipher, nil, nil, nil), 1)
    XCTAssertEqual(
      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil), 1)
    XCTAssertEqual(EVP_EncryptInit_ex(context, nil, nil, key, iv), 1)
    var outLength: Int32 = 0
    XCTAssertEqual(EVP_EncryptUpdate(context, nil, &outLength, aad, Int32(aad.count)), 1)
    var output = [UInt8](repeating: 0, count: plaintext.count + 16)
    XCTAssertEqual(
      EVP_EncryptUpdate(context, &output, &outLength, plaintext, Int32(plaintext.count)), 1)
    var finalLength: Int32 = 0
    let written = Int(outLength)
    output.withUnsafeMutableBufferPointer { buffer in
      _ = EVP_EncryptFinal_ex(context, buffer.baseAddress.map { $0 + written }, &finalLength)
    }
    var tag = [UInt8](repeating: 0, count: 16)
    XCTAssertEqual(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag), 1)
    return Array(output.prefix(written + Int(finalLength))) + tag
  }

  /// The synthetic DTLS-SRTP exporter example, written here too (RFC 5764 §4.2 layout).
  func testKeyingMaterialSplitInline() throws {
    let material = Hex.bytes(
      "0153f7ee77ea9cc39eeb256d8b0d14c87f4114eda964aa1c654af1f364fb648ce2c97614b368a0c1ab1fac0114651c7badd4dc8fc24b62b264b474cb"
    )
    let client = try SRTPKeyingMaterial.split(
      material, profile: .aes128CMHMACSHA1_80, role: .client)
    XCTAssertEqual(Hex.string(client.local.key), "0153f7ee77ea9cc39eeb256d8b0d14c8")
    XCTAssertEqual(Hex.string(client.local.salt), "e2c97614b368a0c1ab1fac011465")
    XCTAssertEqual(Hex.string(client.remote.key), "7f4114eda964aa1c654af1f364fb648c")
    XCTAssertEqual(Hex.string(client.remote.salt), "1c7badd4dc8fc24b62b264b474cb")
    let server = try SRTPKeyingMaterial.split(
      material, profile: .aes128CMHMACSHA1_80, role: .server)
    XCTAssertEqual(server.local, client.remote)
    XCTAssertEqual(server.remote, client.local)
    XCTAssertThrowsError(
      try SRTPKeyingMaterial.split(
        Array(material.dropLast()), profile: .aes128CMHMACSHA1_80, role: .client)
    ) {
      XCTAssertEqual($0 as? SRTPError, .invalidKeyingMaterialLength(expected: 60, actual: 59))
    }
  }

  func testKeyingMaterialSplitFromVectorFile() throws {
    let vector = try Corpus.json("vectors/dtls-srtp-rfc5764.json")
    let profiles = try XCTUnwrap(vector["protection_profiles"]?.object)
    let names: [SRTPProtectionProfile: String] = [
      .aes128CMHMACSHA1_80: "SRTP_AES128_CM_HMAC_SHA1_80",
      .aes128CMHMACSHA1_32: "SRTP_AES128_CM_HMAC_SHA1_32",
      .aeadAES128GCM: "SRTP_AEAD_AES_128_GCM", .aeadAES256GCM: "SRTP_AEAD_AES_256_GCM",
    ]
    let parameters = try XCTUnwrap(vector["profile_params"]?.object)
    for (profile, name) in names {
      let id = try XCTUnwrap(profiles[name]?.string)
      XCTAssertEqual(UInt16(id.dropFirst(2), radix: 16), profile.rawValue, name)
      let entry = try XCTUnwrap(parameters[name])
      XCTAssertEqual(entry["key"]?.int, profile.keyLength, name)
      XCTAssertEqual(entry["salt"]?.int, profile.saltLength, name)
      XCTAssertEqual(entry["auth_tag"]?.int, profile.rtpTrailerLength, name)
      if let rtcpTag = entry["srtcp_auth_tag"]?.int {
        XCTAssertEqual(rtcpTag + 4, profile.rtcpTrailerLength, name)
      }
    }
    let example = try XCTUnwrap(vector["synthetic_exporter_example"])
    XCTAssertEqual(example["profile"]?.string, "SRTP_AES128_CM_HMAC_SHA1_80")
    let material = Hex.bytes(try XCTUnwrap(example["keying_material_60"]?.string))
    XCTAssertEqual(material.count, 60)
    let client = try SRTPKeyingMaterial.split(
      material, profile: .aes128CMHMACSHA1_80, role: .client)
    XCTAssertEqual(Hex.string(client.local.key), example["client_write_master_key"]?.string)
    XCTAssertEqual(Hex.string(client.remote.key), example["server_write_master_key"]?.string)
    XCTAssertEqual(Hex.string(client.local.salt), example["client_write_master_salt"]?.string)
    XCTAssertEqual(Hex.string(client.remote.salt), example["server_write_master_salt"]?.string)

    // The DTLS client's outbound session talks to the DTLS server's inbound one and back.
    let clientSide = try SRTPSession.pair(
      profile: .aes128CMHMACSHA1_80, keyingMaterial: material, role: .client)
    let serverSide = try SRTPSession.pair(
      profile: .aes128CMHMACSHA1_80, keyingMaterial: material, role: .server)
    let plain = Hex.bytes("800f1234decafbadcafebabeabababababababababababababababab")
    var packet = plain
    try clientSide.outbound.protectRTP(&packet)
    try serverSide.inbound.unprotectRTP(&packet)
    XCTAssertEqual(packet, plain)
    try serverSide.outbound.protectRTP(&packet)
    try clientSide.inbound.unprotectRTP(&packet)
    XCTAssertEqual(packet, plain)
  }
}
