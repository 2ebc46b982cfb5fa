import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// REMB and transport-wide feedback against octets computed by hand from the specifications.
final class RTCPFeedbackTests: XCTestCase {
  /// REMB (draft-alvestrand-rmcat-remb-03 §2.2): V=2 FMT=15, PT=206, length 5 words;
  /// sender 0x01020304, media 0, 'REMB', Num SSRC 1, 1 000 000 bit/s = 250 000 << 2 →
  /// exp 2, mantissa 0x3D090 → 24 bits 0x0BD090; SSRC 0x0A0B0C0D.
  static let handEncodedREMB = Hex.bytes(
    "8fce0005 01020304 00000000 52454d42 01 0bd090 0a0b0c0d")

  func testREMBHandEncodedBytes() throws {
    let remb = RTCPReceiverEstimatedMaxBitrate(
      senderSSRC: 0x0102_0304, bitrate: 1_000_000, ssrcs: [0x0A0B_0C0D])
    XCTAssertEqual(
      try RTCPPacket.serializeCompound([.receiverEstimatedMaxBitrate(remb)]), Self.handEncodedREMB)
    XCTAssertEqual(
      try RTCPPacket.parseCompound(Self.handEncodedREMB), [.receiverEstimatedMaxBitrate(remb)])
    XCTAssertEqual(RTCPReceiverEstimatedMaxBitrate.identifier, 0x5245_4D42)
  }

  func testREMBExponentMantissaRoundsDown() throws {
    let split = RTCPReceiverEstimatedMaxBitrate.exponentAndMantissa(for: 0x7FFFF)
    XCTAssertEqual(split.exponent, 1)
    XCTAssertEqual(split.mantissa, 0x3FFFF)
    let remb = RTCPReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 0x7FFFF, ssrcs: [])
    let parsed = try RTCPPacket.parseCompound(
      try RTCPPacket.serializeCompound([.receiverEstimatedMaxBitrate(remb)]))
    guard case .receiverEstimatedMaxBitrate(let decoded) = parsed.first else {
      return XCTFail("\(parsed)")
    }
    XCTAssertEqual(decoded.bitrate, 0x7FFFE)
    XCTAssertEqual(RTCPReceiverEstimatedMaxBitrate.exponentAndMantissa(for: 0x3FFFF).exponent, 0)
  }

  func testREMBWithHugeExponentSaturates() throws {
    // exp 63, mantissa 0x3FFFF: would overflow 64 bits.
    let bytes = Hex.bytes("8fce0004 00000001 00000000 52454d42 00 ffffff")
    guard case .receiverEstimatedMaxBitrate(let remb) = try RTCPPacket.parseCompound(bytes).first
    else { return XCTFail("not REMB") }
    XCTAssertEqual(remb.bitrate, .max)
  }

  func testREMBWithTooManySSRCsIsRejected() {
    let bytes = Hex.bytes("8fce0004 00000001 00000000 52454d42 02 0bd090")
    XCTAssertThrowsError(try RTCPPacket.parseCompound(bytes)) {
      guard case .invalidLength(206, _) = $0 as? RTCPParseError else { return XCTFail("\($0)") }
    }
  }
}

final class RTCPTransportWideFeedbackTests: XCTestCase {
  /// draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1, by hand:
  /// base 100, 5 packets: small 4, small 8, not received, large -4, small 0 → symbols
  /// 1 1 0 2 1, which need a 2-bit status vector: 11 01 01 00 10 01 00 = 0xD490;
  /// deltas 04 08 fffc 00; reference time 0x000102, fb count 7. FCI 15 octets + 8 octets of
  /// SSRCs + 4 header = 27, so one padding octet (P=1, count 01): length 6 words.
  static let handEncodedVector = Hex.bytes(
    "afcd0006 01020304 05060708 0064 0005 000102 07 d490 04 08 fffc 00 01")

  private let vectorPacket = RTCPTransportWideFeedback(
    senderSSRC: 0x0102_0304, mediaSSRC: 0x0506_0708, baseSequenceNumber: 100,
    referenceTime: 0x102, feedbackPacketCount: 7,
    packets: [
      .receivedSmallDelta(4), .receivedSmallDelta(8), .notReceived,
      .receivedLargeOrNegativeDelta(-4), .receivedSmallDelta(0),
    ])

  func testTwoBitStatusVectorHandEncoded() throws {
    XCTAssertEqual(
      try RTCPPacket.serializeCompound([.transportWideFeedback(vectorPacket)]),
      Self.handEncodedVector)
    XCTAssertEqual(
      try RTCPPacket.parseCompound(Self.handEncodedVector), [.transportWideFeedback(vectorPacket)])
    XCTAssertEqual(
      vectorPacket.packets.map(\.receiveDeltaMicroseconds), [1000, 2000, nil, -1000, 0])
  }

  /// Run-length chunk: 20 small-delta packets from base 65535 → 0 01 0000000010100 = 0x2014;
  /// twenty deltas of 01; reference time -1 (0xFFFFFF), fb count 255. Body 38 + 4 = 42 octets,
  /// two padding octets 00 02: length 10 words.
  func testRunLengthChunkHandEncoded() throws {
    let packet = RTCPTransportWideFeedback(
      senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 65535, referenceTime: -1,
      feedbackPacketCount: 255, packets: Array(repeating: .receivedSmallDelta(1), count: 20))
    let expected = Hex.bytes(
      "afcd000a 00000001 00000002 ffff 0014 ffffff ff 2014" + String(repeating: "01", count: 20)
        + "0002")
    XCTAssertEqual(try RTCPPacket.serializeCompound([.transportWideFeedback(packet)]), expected)
    XCTAssertEqual(try RTCPPacket.parseCompound(expected), [.transportWideFeedback(packet)])
  }

  /// One-bit status vector: symbols 1 0 1, fourteen 0, 1 (18 packets from base 10). The first
  /// chunk is a 1-bit vector of 14 (1 0 1 0 0 0 0 0 0 0 0 0 0 0 → 0xA800); the 4 left
  /// (0 0 0 1) fit another 1-bit vector (0x8400). Deltas 01 02 03. 8 + 8 + 4 + 3 = 23 octets of
  /// body + 4 of header: one padding octet (P=1, count 01), length 6 words.
  func testOneBitVectorsHandEncoded() throws {
    let packets: [RTCPTransportWideFeedback.PacketStatus] =
      [.receivedSmallDelta(1), .notReceived, .receivedSmallDelta(2)]
      + Array(repeating: .notReceived, count: 14) + [.receivedSmallDelta(3)]
    let packet = RTCPTransportWideFeedback(
      senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 10, referenceTime: 0,
      feedbackPacketCount: 0, packets: packets)
    let expected = Hex.bytes("afcd0006 00000001 00000002 000a 0012 000000 00 a800 8400 010203 01")
    XCTAssertEqual(try RTCPPacket.serializeCompound([.transportWideFeedback(packet)]), expected)
    XCTAssertEqual(try RTCPPacket.parseCompound(expected), [.transportWideFeedback(packet)])
  }

  func testParsesChunksWrittenByOtherEncoders() throws {
    // A run of 3 received-large chunked as run-length (0x4003) followed by a 1-bit vector
    // listing more symbols than the status count (trailing symbols ignored).
    let bytes = Hex.bytes(
      "8fcd0007 00000001 00000002 0000 0005 000000 01 4003 bfff 0001 0002 0003 01 02")
    let packets = try RTCPPacket.parseCompound(bytes)
    guard case .transportWideFeedback(let feedback) = packets.first else {
      return XCTFail("\(packets)")
    }
    XCTAssertEqual(
      feedback.packets,
      [
        .receivedLargeOrNegativeDelta(1), .receivedLargeOrNegativeDelta(2),
        .receivedLargeOrNegativeDelta(3), .receivedSmallDelta(1), .receivedSmallDelta(2),
      ])
  }

  func testInconsistentFeedbackIsRejected() {
    // Status count 5 but one run-length chunk of 2 and nothing else.
    let missingChunks = Hex.bytes("8fcd0005 00000001 00000002 0000 0005 000000 00 2002 0101")
    XCTAssertThrowsError(try RTCPPacket.parseCompound(missingChunks)) {
      guard case .invalidTransportFeedback = $0 as? RTCPParseError else { return XCTFail("\($0)") }
    }
    // Two received packets but only one delta octet.
    let missingDelta = Hex.bytes("8fcd0005 00000001 00000002 0000 0002 000000 00 4002 0100")
    XCTAssertThrowsError(try RTCPPacket.parseCompound(missingDelta)) {
      guard case .invalidTransportFeedback = $0 as? RTCPParseError else { return XCTFail("\($0)") }
    }
    // Reserved symbol 11 in a run-length chunk.
    let reserved = Hex.bytes("8fcd0005 00000001 00000002 0000 0001 000000 00 6001 0000")
    XCTAssertThrowsError(try RTCPPacket.parseCompound(reserved)) {
      guard case .invalidTransportFeedback = $0 as? RTCPParseError else { return XCTFail("\($0)") }
    }
  }

  func testRandomStatusListsRoundTrip() throws {
    var generator = SplitMix64(seed: 3)
    for _ in 0..<200 {
      let count = Int(generator.next() % 300) + 1
      var packets: [RTCPTransportWideFeedback.PacketStatus] = []
      var current = generator.next() % 3
      for _ in 0..<count {
        if generator.next() % 4 == 0 { current = generator.next() % 3 }
        switch current {
        case 0: packets.append(.notReceived)
        case 1: packets.append(.receivedSmallDelta(UInt8(truncatingIfNeeded: generator.next())))
        default:
          packets.append(.receivedLargeOrNegativeDelta(Int16(truncatingIfNeeded: generator.next())))
        }
      }
      let packet = RTCPTransportWideFeedback(
        senderSSRC: 1, mediaSSRC: 2,
        baseSequenceNumber: UInt16(truncatingIfNeeded: generator.next()),
        referenceTime: Int32(truncatingIfNeeded: generator.next() % 0x100_0000) - 0x80_0000,
        feedbackPacketCount: UInt8(truncatingIfNeeded: generator.next()), packets: packets)
      let bytes = try RTCPPacket.serializeCompound([.transportWideFeedback(packet)])
      XCTAssertEqual(try RTCPPacket.parseCompound(bytes), [.transportWideFeedback(packet)])
    }
  }
}
