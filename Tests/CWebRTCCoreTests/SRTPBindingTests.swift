import CWebRTCCore
import XCTest

/// libsrtp2 through CWebRTCCore: known answers, round trips, authentication and replay checks.
final class SRTPBindingTests: XCTestCase {
  private let cafebabe: UInt32 = 0xcafe_babe

  // MARK: Known answers written into the test

  /// libsrtp's own reference packet (`srtp_validate`), AES_CM_128_HMAC_SHA1_80, SSRC 0xcafebabe.
  func testAESCM128KnownAnswerPacketsMatchLibsrtpReference() throws {
    let keyAndSalt = try hexBytes(
      "e1f97a0d3e018be0d64fa32c06de4139" + "0ec675ad498afeebb6960b3aabe6")
    let plainRTP = try hexBytes("800f1234decafbadcafebabe" + "abababababababababababababababab")
    let srtp = try hexBytes(
      "800f1234decafbadcafebabe" + "4e55dc4ce79978d88ca4d215949d2402b78d6acc99ea179b8dbb")
    let plainRTCP = try hexBytes("81c8000bcafebabe" + "abababababababababababababababab")
    let srtcp = try hexBytes(
      "81c8000bcafebabe" + "7128035be487b9bdbef89041f977a5a880000001993e08cd54d6c1230798")
    try checkKnownAnswer(
      .aesCM128HMACSHA1_80, keyAndSalt: keyAndSalt, plainRTP: plainRTP, srtp: srtp,
      plainRTCP: plainRTCP, srtcp: srtcp)
  }

  /// libsrtp's reference packet for AEAD_AES_128_GCM (`srtp_validate_gcm`), SSRC 0xcafebabe.
  func testAEADAES128GCMKnownAnswerPacketsMatchLibsrtpReference() throws {
    let keyAndSalt = try hexBytes("000102030405060708090a0b0c0d0e0f" + "a0a1a2a3a4a5a6a7a8a9aaab")
    let plainRTP = try hexBytes("800f1234decafbadcafebabe" + "abababababababababababababababab")
    let srtp = try hexBytes(
      "800f1234decafbadcafebabe"
        + "c5002ede04cfdd2eb91159e0880aa06ed2976826f796b201df3131a127e8a392")
    let plainRTCP = try hexBytes("81c8000bcafebabe" + "abababababababababababababababab")
    let srtcp = try hexBytes(
      "81c8000bcafebabe"
        + "c98b8b5df0392a55852b6c21ac8e7025c52c6fbea2b3b446ea31123ba88ce61e80000001")
    try checkKnownAnswer(
      .aeadAES128GCM, keyAndSalt: keyAndSalt, plainRTP: plainRTP, srtp: srtp,
      plainRTCP: plainRTCP, srtcp: srtcp)
  }

  /// RFC 7714 §16.1.1 gives session keys directly (libsrtp always runs the KDF), so the packet is
  /// checked with OpenSSL's AES-GCM: IV = (00 00 || SSRC || ROC || SEQ) XOR salt, AAD = header.
  func testRFC7714AEADAES128GCMPacketWithOpenSSL() throws {
    let salt = try hexBytes("517569642070726f2071756f")
    let plain = try hexBytes(
      "8040f17b8041f8d35501a0b247616c6c696120657374206f6d6e69732064697669736120696e2070617274"
        + "65732074726573")
    let expected = try hexBytes(
      "8040f17b8041f8d35501a0b2f24de3a3fb34de6cacba861c9d7e4bcabe633bd50d294e6f42a5f47a51c7d1"
        + "9b36de3adf8833899d7f27beb16a9152cf765ee4390cce")
    let iv = rtpGCMIV(salt: salt, ssrc: 0x5501_a0b2, roc: 0, seq: 0xf17b)
    XCTAssertEqual(hexString(iv), "51753c6580c2726f20718414")
    let sealed = try OpenSSLCipher.aesGCMSeal(
      key: try hexBytes("000102030405060708090a0b0c0d0e0f"), iv: iv, aad: Array(plain.prefix(12)),
      plaintext: Array(plain.dropFirst(12)))
    XCTAssertEqual(hexString(Array(plain.prefix(12)) + sealed), hexString(expected))
  }

  // MARK: Round trips, authentication, replay

  func testAESCM128RoundTripRecoversEveryPacket() throws {
    try checkRoundTrip(.aesCM128HMACSHA1_80, keyLength: 30, tagLength: 10)
  }

  func testAEADAES128GCMRoundTripRecoversEveryPacket() throws {
    try checkRoundTrip(.aeadAES128GCM, keyLength: 28, tagLength: 16)
  }

  func testTamperedPacketFailsAuthentication() throws {
    for (profile, keyLength) in [
      (SRTPTestSession.Profile.aesCM128HMACSHA1_80, 30), (.aeadAES128GCM, 28),
    ] {
      let key = testKey(keyLength)
      let sender = try SRTPTestSession(profile: profile, keyAndSalt: key, ssrc: nil, outbound: true)
      let receiver = try SRTPTestSession(
        profile: profile, keyAndSalt: key, ssrc: nil, outbound: false)
      let protected = try sender.protect(rtpPacket(seq: 7, ssrc: 0x1234_5678, payloadLength: 40))
      for index in [12, 30, protected.count - 1] {
        var tampered = protected
        tampered[index] ^= 0x01
        XCTAssertThrowsError(try receiver.unprotect(tampered), "\(profile) byte \(index)") {
          XCTAssertEqual(
            ($0 as? SRTPStatusError)?.status, srtp_err_status_auth_fail, "\(profile) byte \(index)")
        }
      }
      // The untouched packet still authenticates after the failures.
      XCTAssertEqual(
        try receiver.unprotect(protected), rtpPacket(seq: 7, ssrc: 0x1234_5678, payloadLength: 40))
    }
  }

  func testReplayedPacketIsRejected() throws {
    for (profile, keyLength) in [
      (SRTPTestSession.Profile.aesCM128HMACSHA1_80, 30), (.aeadAES128GCM, 28),
    ] {
      let key = testKey(keyLength)
      let sender = try SRTPTestSession(profile: profile, keyAndSalt: key, ssrc: nil, outbound: true)
      let receiver = try SRTPTestSession(
        profile: profile, keyAndSalt: key, ssrc: nil, outbound: false)
      let first = try sender.protect(rtpPacket(seq: 100, ssrc: 0xabcd, payloadLength: 20))
      let second = try sender.protect(rtpPacket(seq: 101, ssrc: 0xabcd, payloadLength: 20))
      XCTAssertNoThrow(try receiver.unprotect(first))
      XCTAssertThrowsError(try receiver.unprotect(first), "\(profile)") {
        XCTAssertEqual(($0 as? SRTPStatusError)?.status, srtp_err_status_replay_fail)
      }
      XCTAssertEqual(
        try receiver.unprotect(second), rtpPacket(seq: 101, ssrc: 0xabcd, payloadLength: 20))
      XCTAssertThrowsError(try receiver.unprotect(second), "\(profile)") {
        XCTAssertEqual(($0 as? SRTPStatusError)?.status, srtp_err_status_replay_fail)
      }

      let firstRTCP = try sender.protectRTCP(rtcpPacket(ssrc: 0xabcd))
      XCTAssertEqual(try receiver.unprotectRTCP(firstRTCP), rtcpPacket(ssrc: 0xabcd))
      XCTAssertThrowsError(try receiver.unprotectRTCP(firstRTCP), "\(profile) RTCP") {
        XCTAssertEqual(($0 as? SRTPStatusError)?.status, srtp_err_status_replay_fail)
      }
    }
  }

  // MARK: Corpus vectors

  func testCorpusSRTPKnownAnswerPackets() throws {
    guard let corpus = try Corpus.vectors("srtp-rfc3711-6188-7714.json") else {
      throw XCTSkip("../shared/corpus is absent")
    }
    let cases: [(String, SRTPTestSession.Profile)] = [
      ("srtp_packet_kat_aes128_cm_hmac_sha1_80", .aesCM128HMACSHA1_80),
      ("srtp_packet_kat_aes256_cm_hmac_sha1_80", .aesCM256HMACSHA1_80),
    ]
    for (name, profile) in cases {
      guard let key: String = corpusValue(corpus, name, "master_key"),
        let salt: String = corpusValue(corpus, name, "master_salt"),
        let plain: String = corpusValue(corpus, name, "plain_rtp"),
        let srtp: String = corpusValue(corpus, name, "srtp"),
        let tagOctets: Int = corpusValue(corpus, name, "tag_octets")
      else { continue }
      let keyAndSalt = try hexBytes(key + salt)
      let plainBytes = try hexBytes(plain)
      let sender = try SRTPTestSession(
        profile: profile, keyAndSalt: keyAndSalt, ssrc: cafebabe, outbound: true)
      let protected = try sender.protect(plainBytes)
      XCTAssertEqual(hexString(protected), srtp.lowercased(), name)
      XCTAssertEqual(protected.count, plainBytes.count + tagOctets, name)
      let receiver = try SRTPTestSession(
        profile: profile, keyAndSalt: keyAndSalt, ssrc: cafebabe, outbound: false)
      XCTAssertEqual(try receiver.unprotect(try hexBytes(srtp)), plainBytes, name)
    }
  }

  func testCorpusRFC7714GCMVectorsWithOpenSSL() throws {
    guard let corpus = try Corpus.vectors("srtp-rfc3711-6188-7714.json") else {
      throw XCTSkip("../shared/corpus is absent")
    }
    let rtpName = "rfc7714_16_rtp_aead_aes_gcm"
    if let saltHex: String = corpusValue(corpus, rtpName, "session_salt"),
      let seqHex: String = corpusValue(corpus, rtpName, "seq"),
      let ssrcHex: String = corpusValue(corpus, rtpName, "ssrc"),
      let roc: Int = corpusValue(corpus, rtpName, "roc"),
      let ivHex: String = corpusValue(corpus, rtpName, "iv"),
      let plainHex: String = corpusValue(corpus, rtpName, "plain_rtp")
    {
      let salt = try hexBytes(saltHex)
      let iv = rtpGCMIV(
        salt: salt, ssrc: try bigEndian(hexBytes(ssrcHex)), roc: UInt32(roc),
        seq: UInt16(try bigEndian(hexBytes(seqHex))))
      XCTAssertEqual(hexString(iv), ivHex.lowercased())
      let plain = try hexBytes(plainHex)
      for variant in ["aead_aes_128_gcm", "aead_aes_256_gcm"] {
        guard let key: String = corpusValue(corpus, rtpName, variant, "key"),
          let srtp: String = corpusValue(corpus, rtpName, variant, "srtp")
        else { continue }
        let sealed = try OpenSSLCipher.aesGCMSeal(
          key: try hexBytes(key), iv: iv, aad: Array(plain.prefix(12)),
          plaintext: Array(plain.dropFirst(12)))
        XCTAssertEqual(hexString(Array(plain.prefix(12)) + sealed), srtp.lowercased(), variant)
      }
    }

    let rtcpName = "rfc7714_17_rtcp_aead_aes_gcm"
    if let saltHex: String = corpusValue(corpus, rtcpName, "session_salt"),
      let indexHex: String = corpusValue(corpus, rtcpName, "srtcp_index"),
      let ivHex: String = corpusValue(corpus, rtcpName, "iv"),
      let plainHex: String = corpusValue(corpus, rtcpName, "plain_rtcp")
    {
      let salt = try hexBytes(saltHex)
      let plain = try hexBytes(plainHex)
      let index = try hexBytes(indexHex)
      let ssrc = bigEndian(Array(plain[4..<8]))
      // RFC 7714 §9.1: IV = 00 00 || SSRC || 00 00 || 0 || SRTCP index, XOR salt.
      var iv = [UInt8](repeating: 0, count: 12)
      iv[2..<6] = ArraySlice(withUnsafeBytes(of: ssrc.bigEndian) { Array($0) })
      iv[8..<12] = ArraySlice(index)
      for position in 0..<12 { iv[position] ^= salt[position] }
      XCTAssertEqual(hexString(iv), ivHex.lowercased())
      var eIndex = index
      eIndex[0] |= 0x80
      for variant in ["aead_aes_128_gcm", "aead_aes_256_gcm"] {
        guard let key: String = corpusValue(corpus, rtcpName, variant, "key"),
          let srtcp: String = corpusValue(corpus, rtcpName, variant, "srtcp")
        else { continue }
        let sealed = try OpenSSLCipher.aesGCMSeal(
          key: try hexBytes(key), iv: iv, aad: Array(plain.prefix(8)) + eIndex,
          plaintext: Array(plain.dropFirst(8)))
        XCTAssertEqual(
          hexString(Array(plain.prefix(8)) + sealed + eIndex), srtcp.lowercased(), variant)
      }
    }
  }

  func testCorpusAESCMKeystreamAndKeyDerivationWithOpenSSL() throws {
    guard let corpus = try Corpus.vectors("srtp-rfc3711-6188-7714.json") else {
      throw XCTSkip("../shared/corpus is absent")
    }
    // RFC 3711 B.2: the AES-CM keystream blocks, keyed by their 16-bit block counter.
    let b2 = "rfc3711_B2_aes_cm_keystream"
    if let key: String = corpusValue(corpus, b2, "session_key"),
      let iv: String = corpusValue(corpus, b2, "session_salt_shifted"),
      let blocks: [String: String] = corpusValue(corpus, b2, "blocks")
    {
      XCTAssertEqual(blocks.count, 6)
      for (counterHex, expected) in blocks {
        var block = try hexBytes(iv)
        block[14...15] = ArraySlice(try hexBytes(counterHex))
        let output = try OpenSSLCipher.aesECB(key: try hexBytes(key), blocks: block)
        XCTAssertEqual(hexString(output), expected.lowercased(), "B.2 block \(counterHex)")
      }
    }

    // RFC 3711 B.3: key derivation with AES-128.
    let b3 = "rfc3711_B3_kdf_aes128"
    if let keyHex: String = corpusValue(corpus, b3, "master_key"),
      let saltHex: String = corpusValue(corpus, b3, "master_salt"),
      let cipherKey: String = corpusValue(corpus, b3, "label_00_cipher_key"),
      let cipherSalt: String = corpusValue(corpus, b3, "label_02_cipher_salt"),
      let authKey: String = corpusValue(corpus, b3, "label_01_auth_key_94_octets"),
      let ivs: [String: String] = corpusValue(corpus, b3, "aes_cm_inputs")
    {
      let key = try hexBytes(keyHex)
      let salt = try hexBytes(saltHex)
      XCTAssertEqual(
        hexString(OpenSSLCipher.srtpKDFIV(masterSalt: salt, label: 0)),
        ivs["cipher_key"]?.lowercased())
      XCTAssertEqual(
        hexString(OpenSSLCipher.srtpKDFIV(masterSalt: salt, label: 1)),
        ivs["auth_key_first_block"]?.lowercased())
      XCTAssertEqual(
        hexString(OpenSSLCipher.srtpKDFIV(masterSalt: salt, label: 2)),
        ivs["cipher_salt"]?.lowercased())
      try checkKDF(key: key, salt: salt, label: 0, expected: cipherKey, "B.3 cipher key")
      try checkKDF(key: key, salt: salt, label: 1, expected: authKey, "B.3 auth key")
      try checkKDF(key: key, salt: salt, label: 2, expected: cipherSalt, "B.3 salt")
    }

    // RFC 6188 §7.2 and §7.4: key derivation with AES-256 and AES-192.
    for name in ["rfc6188_7_2_kdf_aes256", "rfc6188_7_4_kdf_aes192"] {
      guard let keyHex: String = corpusValue(corpus, name, "master_key"),
        let saltHex: String = corpusValue(corpus, name, "master_salt"),
        let cipherKey: String = corpusValue(corpus, name, "cipher_key"),
        let cipherSalt: String = corpusValue(corpus, name, "cipher_salt"),
        let authKey: String = corpusValue(corpus, name, "auth_key_20")
      else { continue }
      let key = try hexBytes(keyHex)
      let salt = try hexBytes(saltHex)
      try checkKDF(key: key, salt: salt, label: 0, expected: cipherKey, "\(name) cipher key")
      try checkKDF(key: key, salt: salt, label: 1, expected: authKey, "\(name) auth key")
      try checkKDF(key: key, salt: salt, label: 2, expected: cipherSalt, "\(name) salt")
    }
  }

  // MARK: Helpers

  private func checkKnownAnswer(
    _ profile: SRTPTestSession.Profile, keyAndSalt: [UInt8], plainRTP: [UInt8], srtp: [UInt8],
    plainRTCP: [UInt8], srtcp: [UInt8], file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let sender = try SRTPTestSession(
      profile: profile, keyAndSalt: keyAndSalt, ssrc: cafebabe, outbound: true)
    XCTAssertEqual(
      hexString(try sender.protect(plainRTP)), hexString(srtp), "SRTP", file: file, line: line)
    XCTAssertEqual(
      hexString(try sender.protectRTCP(plainRTCP)), hexString(srtcp), "SRTCP", file: file,
      line: line)
    let receiver = try SRTPTestSession(
      profile: profile, keyAndSalt: keyAndSalt, ssrc: cafebabe, outbound: false)
    XCTAssertEqual(try receiver.unprotect(srtp), plainRTP, file: file, line: line)
    XCTAssertEqual(try receiver.unprotectRTCP(srtcp), plainRTCP, file: file, line: line)
  }

  private func checkRoundTrip(_ profile: SRTPTestSession.Profile, keyLength: Int, tagLength: Int)
    throws
  {
    let key = testKey(keyLength)
    let sender = try SRTPTestSession(profile: profile, keyAndSalt: key, ssrc: nil, outbound: true)
    let receiver = try SRTPTestSession(
      profile: profile, keyAndSalt: key, ssrc: nil, outbound: false)
    // Crossing 0xffff checks the rollover counter on both sides.
    for seq in (0..<40).map({ UInt16(truncatingIfNeeded: 0xfff0 + $0) }) {
      let plain = rtpPacket(seq: seq, ssrc: 0x0102_0304, payloadLength: 20 + Int(seq % 50))
      let protected = try sender.protect(plain)
      XCTAssertEqual(protected.count, plain.count + tagLength)
      XCTAssertEqual(Array(protected.prefix(12)), Array(plain.prefix(12)), "header stays clear")
      XCTAssertNotEqual(
        Array(protected[12..<plain.count]), Array(plain.dropFirst(12)), "payload is encrypted")
      XCTAssertEqual(try receiver.unprotect(protected), plain)
    }
    let rtcp = rtcpPacket(ssrc: 0x0102_0304)
    let protectedRTCP = try sender.protectRTCP(rtcp)
    XCTAssertEqual(protectedRTCP.count, rtcp.count + 4 + tagLength)
    XCTAssertEqual(try receiver.unprotectRTCP(protectedRTCP), rtcp)
  }

  private func checkKDF(
    key: [UInt8], salt: [UInt8], label: UInt8, expected: String, _ message: String
  ) throws {
    let expectedBytes = try hexBytes(expected)
    let derived = try OpenSSLCipher.srtpKDF(
      masterKey: key, masterSalt: salt, label: label, length: expectedBytes.count)
    XCTAssertEqual(hexString(derived), hexString(expectedBytes), message)
  }

  private func testKey(_ length: Int) -> [UInt8] {
    (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
  }

  private func rtpPacket(seq: UInt16, ssrc: UInt32, payloadLength: Int) -> [UInt8] {
    let timestamp = UInt32(seq) &* 960
    var packet: [UInt8] = [0x80, 111, UInt8(seq >> 8), UInt8(truncatingIfNeeded: seq)]
    packet += withUnsafeBytes(of: timestamp.bigEndian) { Array($0) }
    packet += withUnsafeBytes(of: ssrc.bigEndian) { Array($0) }
    packet += (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0 &+ Int(seq)) }
    return packet
  }

  /// An RTCP receiver report with no report blocks (RFC 3550 §6.4.2).
  private func rtcpPacket(ssrc: UInt32) -> [UInt8] {
    [0x80, 201, 0x00, 0x01] + withUnsafeBytes(of: ssrc.bigEndian) { Array($0) }
  }

  private func rtpGCMIV(salt: [UInt8], ssrc: UInt32, roc: UInt32, seq: UInt16) -> [UInt8] {
    var iv: [UInt8] = [0, 0]
    iv += withUnsafeBytes(of: ssrc.bigEndian) { Array($0) }
    iv += withUnsafeBytes(of: roc.bigEndian) { Array($0) }
    iv += withUnsafeBytes(of: seq.bigEndian) { Array($0) }
    return zip(iv, salt).map { $0 ^ $1 }
  }

  private func bigEndian(_ bytes: [UInt8]) -> UInt32 {
    bytes.reduce(0) { $0 << 8 | UInt32($1) }
  }
}
