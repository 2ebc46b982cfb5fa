import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class SRTPSessionTests: XCTestCase {
  private func masterKey(_ profile: SRTPProtectionProfile, seed: UInt8 = 1) -> SRTPMasterKey {
    SRTPMasterKey(
      key: (0..<profile.keyLength).map { UInt8(truncatingIfNeeded: Int($0) * 7 + Int(seed)) },
      salt: (0..<profile.saltLength).map { UInt8(truncatingIfNeeded: Int($0) * 13 + Int(seed)) })
  }

  private func sessions(_ profile: SRTPProtectionProfile) throws -> (SRTPSession, SRTPSession) {
    let key = masterKey(profile)
    return (
      try SRTPSession(profile: profile, masterKey: key, direction: .outbound),
      try SRTPSession(profile: profile, masterKey: key, direction: .inbound)
    )
  }

  private func rtpPacket(sequenceNumber: UInt16, timestamp: UInt32, payloadLength: Int = 100)
    throws -> [UInt8]
  {
    let header = RTPHeader(
      marker: false, payloadType: 111, sequenceNumber: sequenceNumber, timestamp: timestamp,
      ssrc: 0x1234_5678)
    let payload = (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0 &+ Int(sequenceNumber)) }
    return try RTPPacket(header: header, payload: payload).serialized()
  }

  func testRoundTripEveryProfile() throws {
    for profile in SRTPProtectionProfile.allCases {
      let (outbound, inbound) = try sessions(profile)
      let plain = try rtpPacket(sequenceNumber: 1000, timestamp: 48_000)
      var packet = plain
      try outbound.protectRTP(&packet)
      XCTAssertEqual(packet.count, plain.count + profile.rtpTrailerLength, "\(profile)")
      XCTAssertEqual(Array(packet.prefix(12)), Array(plain.prefix(12)), "header stays clear")
      XCTAssertNotEqual(Array(packet[12..<plain.count]), Array(plain[12...]), "\(profile)")
      try inbound.unprotectRTP(&packet)
      XCTAssertEqual(packet, plain, "\(profile)")

      let rtcpPlain = try RTCPPacket.serializeCompound([
        .senderReport(
          RTCPSenderReport(
            ssrc: 0x1234_5678, ntpTimestamp: 1, rtpTimestamp: 2, packetCount: 3, octetCount: 4)),
        .sourceDescription(
          RTCPSourceDescription(chunks: [
            .init(ssrc: 0x1234_5678, items: [.init(type: 1, text: "cname")])
          ])),
      ])
      var rtcp = rtcpPlain
      try outbound.protectRTCP(&rtcp)
      XCTAssertEqual(rtcp.count, rtcpPlain.count + profile.rtcpTrailerLength, "\(profile)")
      // E flag set: the SRTCP index word after the payload has its top bit on (RFC 3711 §3.4).
      XCTAssertEqual(rtcp[rtcpPlain.count] & 0x80, 0x80, "\(profile)")
      try inbound.unprotectRTCP(&rtcp)
      XCTAssertEqual(rtcp, rtcpPlain, "\(profile)")
      XCTAssertEqual(outbound.counters.processed, 2)
      XCTAssertEqual(inbound.counters.processed, 2)
    }
  }

  func testRolloverCounterAcrossSequenceWrap() throws {
    let (outbound, inbound) = try sessions(.aeadAES128GCM)
    var sequenceNumber: UInt16 = 0xFFF0
    var timestamp: UInt32 = 0xFFFF_F000
    var count = 0
    while true {
      let plain = try rtpPacket(sequenceNumber: sequenceNumber, timestamp: timestamp)
      var packet = plain
      try outbound.protectRTP(&packet)
      try inbound.unprotectRTP(&packet)
      XCTAssertEqual(packet, plain, "seq \(sequenceNumber)")
      count += 1
      if sequenceNumber == 0x0010 { break }
      sequenceNumber &+= 1
      timestamp &+= 960
    }
    XCTAssertEqual(count, 33)
    XCTAssertEqual(inbound.counters, SRTPCounters(processed: 33))
    // A sender that never wrapped (ROC 0) protects seq 0x0011 with index 0x0011; the receiver,
    // now at ROC 1, computes index 0x10011 and the tag fails: the rollover counter was used.
    let stale = try SRTPSession(
      profile: .aeadAES128GCM, masterKey: masterKey(.aeadAES128GCM), direction: .outbound)
    var packet = try rtpPacket(sequenceNumber: 0x0011, timestamp: timestamp &+ 960)
    try stale.protectRTP(&packet)
    XCTAssertThrowsError(try inbound.unprotectRTP(&packet)) {
      XCTAssertEqual($0 as? SRTPError, .authenticationFailed)
    }
  }

  func testTamperedPacketFailsAuthenticationAndIsCounted() throws {
    for profile in SRTPProtectionProfile.allCases {
      let (outbound, inbound) = try sessions(profile)
      let plain = try rtpPacket(sequenceNumber: 7, timestamp: 0)
      var protected = plain
      try outbound.protectRTP(&protected)
      for index in [1, 20, protected.count - 1] {
        var tampered = protected
        tampered[index] ^= 0x01
        XCTAssertThrowsError(try inbound.unprotectRTP(&tampered), "\(profile) byte \(index)") {
          XCTAssertEqual($0 as? SRTPError, .authenticationFailed)
        }
      }
      XCTAssertEqual(inbound.counters.authenticationFailures, 3, "\(profile)")
      try inbound.unprotectRTP(&protected)
      XCTAssertEqual(protected, plain, "the genuine packet still passes")

      var rtcp = try RTCPPacket.serializeCompound([.receiverReport(.init(ssrc: 5))])
      try outbound.protectRTCP(&rtcp)
      rtcp[9] ^= 0x80
      XCTAssertThrowsError(try inbound.unprotectRTCP(&rtcp)) {
        XCTAssertEqual($0 as? SRTPError, .authenticationFailed)
      }
      XCTAssertEqual(inbound.counters.authenticationFailures, 4, "\(profile)")
    }
  }

  func testReplayIsRejectedAndCounted() throws {
    let (outbound, inbound) = try sessions(.aes128CMHMACSHA1_80)
    var packet = try rtpPacket(sequenceNumber: 500, timestamp: 0)
    try outbound.protectRTP(&packet)
    var first = packet
    try inbound.unprotectRTP(&first)
    XCTAssertThrowsError(try inbound.unprotectRTP(&packet)) {
      XCTAssertEqual($0 as? SRTPError, .replayed)
    }
    // Far older than the 1024-packet window.
    var old = try rtpPacket(sequenceNumber: 600, timestamp: 0)
    var newer = try rtpPacket(sequenceNumber: 600 + 2000, timestamp: 0)
    // libsrtp also refuses to protect an index twice or out of window, so protect in order.
    try outbound.protectRTP(&old)
    try outbound.protectRTP(&newer)
    try inbound.unprotectRTP(&newer)
    XCTAssertThrowsError(try inbound.unprotectRTP(&old)) {
      XCTAssertEqual($0 as? SRTPError, .replayed)
    }
    var rtcp = try RTCPPacket.serializeCompound([.receiverReport(.init(ssrc: 5))])
    try outbound.protectRTCP(&rtcp)
    var copy = rtcp
    try inbound.unprotectRTCP(&copy)
    XCTAssertThrowsError(try inbound.unprotectRTCP(&rtcp)) {
      XCTAssertEqual($0 as? SRTPError, .replayed)
    }
    XCTAssertEqual(inbound.counters, SRTPCounters(processed: 3, replays: 3))
  }

  /// A NACK answered without RTX resends the packet as first sent (RFC 4585 §6.2.1): the
  /// outbound session protects the same index again to the same bytes, the receiver that lost
  /// the first copy accepts it once, and a replay of it is still refused.
  func testPlainResendIsProtectedAgainAndAcceptedOnce() throws {
    for profile in [SRTPProtectionProfile.aes128CMHMACSHA1_80, .aeadAES128GCM] {
      let (outbound, inbound) = try sessions(profile)
      var protected: [UInt16: [UInt8]] = [:]
      for sequenceNumber in UInt16(100)..<110 {
        var packet = try rtpPacket(sequenceNumber: sequenceNumber, timestamp: 3000)
        try outbound.protectRTP(&packet)
        protected[sequenceNumber] = packet
        // 104 is lost on the way.
        if sequenceNumber != 104 { try inbound.unprotectRTP(&packet) }
      }
      var resend = try rtpPacket(sequenceNumber: 104, timestamp: 3000)
      try outbound.protectRTP(&resend)
      XCTAssertEqual(resend, protected[104], "\(profile)")
      var replay = resend
      try inbound.unprotectRTP(&resend)
      XCTAssertEqual(resend, try rtpPacket(sequenceNumber: 104, timestamp: 3000))
      XCTAssertThrowsError(try inbound.unprotectRTP(&replay)) {
        XCTAssertEqual($0 as? SRTPError, .replayed)
      }
      XCTAssertEqual(inbound.counters, SRTPCounters(processed: 10, replays: 1))
      XCTAssertEqual(outbound.counters.processed, 11)
    }
  }

  /// A retransmission behind 1000 newer packets is inside the 1024-packet window both ways.
  func testLateRetransmissionInsideTheWindowIsAccepted() throws {
    let (outbound, inbound) = try sessions(.aes128CMHMACSHA1_80)
    var late = try rtpPacket(sequenceNumber: 7, timestamp: 0)
    try outbound.protectRTP(&late)
    for sequenceNumber in UInt16(8)...1007 {
      var packet = try rtpPacket(sequenceNumber: sequenceNumber, timestamp: 0, payloadLength: 20)
      try outbound.protectRTP(&packet)
      try inbound.unprotectRTP(&packet)
    }
    var resend = try rtpPacket(sequenceNumber: 7, timestamp: 0)
    try outbound.protectRTP(&resend)
    XCTAssertEqual(resend, late)
    try inbound.unprotectRTP(&resend)
    XCTAssertEqual(inbound.counters, SRTPCounters(processed: 1001))
    // Past the window, the sender refuses the index rather than sending what cannot be accepted.
    for sequenceNumber in UInt16(1008)...1100 {
      var packet = try rtpPacket(sequenceNumber: sequenceNumber, timestamp: 0, payloadLength: 20)
      try outbound.protectRTP(&packet)
    }
    var tooOld = try rtpPacket(sequenceNumber: 7, timestamp: 0)
    XCTAssertThrowsError(try outbound.protectRTP(&tooOld))
  }

  /// ssrc_any_*: each SSRC gets its own stream on first use, with its own replay window, so
  /// the same sequence number on two SSRCs is not a replay.
  func testStreamsPerSSRCAreCreatedOnDemand() throws {
    let (outbound, inbound) = try sessions(.aeadAES256GCM)
    for ssrc: UInt32 in [0xAAAA_0001, 0xBBBB_0002, 0xCCCC_0003] {
      let header = RTPHeader(payloadType: 96, sequenceNumber: 42, timestamp: 0, ssrc: ssrc)
      let plain = try RTPPacket(header: header, payload: [1, 2, 3]).serialized()
      var packet = plain
      try outbound.protectRTP(&packet)
      try inbound.unprotectRTP(&packet)
      XCTAssertEqual(packet, plain)
    }
    XCTAssertEqual(inbound.counters, SRTPCounters(processed: 3))
  }

  func testBufferWithoutTailRoomIsRefusedUntouched() throws {
    let (outbound, _) = try sessions(.aeadAES128GCM)
    let plain = try rtpPacket(sequenceNumber: 1, timestamp: 1)
    var buffer = plain + [UInt8](repeating: 0, count: 15)
    XCTAssertThrowsError(
      try buffer.withUnsafeMutableBytes { try outbound.protectRTP($0, length: plain.count) }
    ) {
      XCTAssertEqual(
        $0 as? SRTPError, .bufferTooSmall(needed: plain.count + 16, available: plain.count + 15))
    }
    XCTAssertEqual(Array(buffer.prefix(plain.count)), plain)
    buffer.append(0)
    let length = try buffer.withUnsafeMutableBytes {
      try outbound.protectRTP($0, length: plain.count)
    }
    XCTAssertEqual(length, plain.count + 16)
  }

  func testMisuseIsATypedError() throws {
    let (outbound, inbound) = try sessions(.aes128CMHMACSHA1_32)
    var packet = try rtpPacket(sequenceNumber: 1, timestamp: 1)
    XCTAssertThrowsError(try inbound.protectRTP(&packet)) {
      XCTAssertEqual($0 as? SRTPError, .wrongDirection)
    }
    XCTAssertThrowsError(try outbound.unprotectRTP(&packet)) {
      XCTAssertEqual($0 as? SRTPError, .wrongDirection)
    }
    var short: [UInt8] = [0x80, 0, 0, 1]
    XCTAssertThrowsError(try inbound.unprotectRTP(&short)) {
      XCTAssertEqual($0 as? SRTPError, .packetTooShort(length: 4))
    }
    XCTAssertThrowsError(
      try SRTPSession(
        profile: .aeadAES256GCM, masterKey: SRTPMasterKey(key: [1], salt: [2]),
        direction: .inbound)
    ) {
      XCTAssertEqual(
        $0 as? SRTPError, .invalidKeyLength(expectedKey: 32, expectedSalt: 12, key: 1, salt: 1))
    }
    XCTAssertEqual(SRTPStatus(rawValue: 2).name, "srtp_err_status_bad_param")
    XCTAssertEqual(SRTPStatus(rawValue: 27).name, "srtp_err_status_pkt_idx_adv")
  }

  func testProfileParameters() {
    XCTAssertEqual(SRTPProtectionProfile.aeadAES128GCM.rawValue, 0x0007)
    XCTAssertEqual(SRTPProtectionProfile.aes128CMHMACSHA1_80.rawValue, 0x0001)
    XCTAssertEqual(SRTPProtectionProfile.aes128CMHMACSHA1_32.rawValue, 0x0002)
    XCTAssertEqual(SRTPProtectionProfile.aeadAES256GCM.rawValue, 0x0008)
    XCTAssertEqual(SRTPProtectionProfile.aes128CMHMACSHA1_80.keyingMaterialLength, 60)
    XCTAssertEqual(SRTPProtectionProfile.aeadAES128GCM.keyingMaterialLength, 56)
    XCTAssertEqual(SRTPProtectionProfile.aeadAES256GCM.keyingMaterialLength, 88)
  }
}

extension SRTPCounters {
  init(processed: UInt64 = 0, authenticationFailures: UInt64 = 0, replays: UInt64 = 0) {
    self.init()
    self.processed = processed
    self.authenticationFailures = authenticationFailures
    self.replays = replays
  }
}
