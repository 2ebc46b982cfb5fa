import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class RTPPacketTests: XCTestCase {
  /// URI → name used in expected.json "extensions".
  private let extensionNames = [
    "urn:ietf:params:rtp-hdrext:sdes:mid": "mid",
    "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time": "abs_send_time",
  ]

  func testCorpusPacketsParseToExpectedValues() throws {
    let expected = try Corpus.json("rtp-rtcp/expected.json")
    let entries = try XCTUnwrap(expected.object).filter { $0.value["kind"]?.string == "rtp" }
    XCTAssertEqual(entries.count, 6)
    for (name, entry) in entries {
      let bytes = try Corpus.bytes("rtp-rtcp/\(name)")
      let packet = try RTPPacket.parse(bytes)
      XCTAssertEqual(Int(bytes[0] >> 6), entry["version"]?.int, name)
      XCTAssertEqual(packet.header.marker ? 1 : 0, entry["marker"]?.int, name)
      XCTAssertEqual(Int(packet.header.payloadType), entry["payload_type"]?.int, name)
      XCTAssertEqual(Int(packet.header.sequenceNumber), entry["sequence_number"]?.int, name)
      XCTAssertEqual(UInt64(packet.header.timestamp), entry["timestamp"]?.uint64, name)
      XCTAssertEqual(
        packet.header.csrcs.map(UInt64.init),
        try XCTUnwrap(entry["csrc"]?.array).compactMap(\.uint64),
        name)
      XCTAssertEqual(packet.payload.count, entry["payload_len"]?.int, name)
      XCTAssertEqual(packet.paddingSize, entry["padding_size"]?.int ?? 0, name)
      if let extmap = entry["extmap"]?.object {
        let extensions = try XCTUnwrap(entry["extensions"]?.object, name)
        XCTAssertEqual(extmap.count, extensions.count, name)
        for (idText, uri) in extmap {
          let id = try XCTUnwrap(UInt8(idText))
          let key = try XCTUnwrap(extensionNames[try XCTUnwrap(uri.string)], "unknown URI")
          let element = try XCTUnwrap(packet.header.headerExtension?.element(id: id), name)
          switch key {
          case "mid":
            XCTAssertEqual(String(decoding: element.value, as: UTF8.self), extensions[key]?.string)
          default:
            XCTAssertEqual(element.value.count, 3)
            let value = element.value.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            XCTAssertEqual(value, extensions[key]?.uint64, name)
          }
        }
      } else {
        XCTAssertNil(packet.header.headerExtension, name)
      }
      // Parsed values written back give the same octets, except padding content: the writer
      // pads with zeros, the corpus sender with random octets; the count octet must match.
      let written = try packet.serialized()
      XCTAssertEqual(written.count, bytes.count, name)
      let unpadded = bytes.count - packet.paddingSize
      XCTAssertEqual(Array(written.prefix(unpadded)), Array(bytes.prefix(unpadded)), name)
      XCTAssertEqual(written.last, bytes.last, name)
    }
  }

  func testCorpusTruncationsFailWithTypedErrors() throws {
    let csrc = try Corpus.bytes("rtp-rtcp/aiortc-rtp_with_csrc.bin")
    for length in 0..<12 {
      XCTAssertThrowsError(try RTPPacket.parse(Array(csrc.prefix(length)))) {
        XCTAssertEqual($0 as? RTPParseError, .truncatedFixedHeader(available: length))
      }
    }
    for length in 12...19 {
      XCTAssertThrowsError(try RTPPacket.parse(Array(csrc.prefix(length)))) {
        XCTAssertEqual(
          $0 as? RTPParseError, .truncatedCSRCList(csrcCount: 2, available: length - 12))
      }
    }
    let mid = try Corpus.bytes("rtp-rtcp/aiortc-rtp_with_sdes_mid.bin")
    for length in 12...15 {
      XCTAssertThrowsError(try RTPPacket.parse(Array(mid.prefix(length)))) {
        XCTAssertEqual($0 as? RTPParseError, .truncatedExtensionHeader(available: length - 12))
      }
    }
    for length in 16...19 {
      XCTAssertThrowsError(try RTPPacket.parse(Array(mid.prefix(length)))) {
        XCTAssertEqual(
          $0 as? RTPParseError, .truncatedExtensionData(declared: 4, available: length - 16))
      }
    }
    let padding = try Corpus.bytes("rtp-rtcp/aiortc-rtp_only_padding.bin")
    XCTAssertThrowsError(try RTPPacket.parse(Array(padding.prefix(12)) + [0x02])) {
      XCTAssertEqual($0 as? RTPParseError, .invalidPadding(count: 2, available: 1))
    }
    XCTAssertThrowsError(try RTPPacket.parse(Array(padding.prefix(12)) + [0x00])) {
      XCTAssertEqual($0 as? RTPParseError, .invalidPadding(count: 0, available: 1))
    }
    var version3 = try Corpus.bytes("rtp-rtcp/aiortc-rtp.bin")
    version3[0] = 0xC0
    XCTAssertThrowsError(try RTPPacket.parse(version3)) {
      XCTAssertEqual($0 as? RTPParseError, .invalidVersion(3))
    }
  }

  /// Hand-encoded: V=2 X=1 CC=1, M=1 PT=111, one-byte extension with IDs 1 (1 octet) and
  /// 3 (3 octets) padded to 8 octets (RFC 8285 §4.2). Also in the test without the corpus.
  func testOneByteExtensionHeaderBytes() throws {
    let header = RTPHeader(
      marker: true, payloadType: 111, sequenceNumber: 0x1234, timestamp: 0xDEAD_BEEF,
      ssrc: 0x0102_0304, csrcs: [0xAABB_CCDD],
      headerExtension: .oneByte([
        RTPHeaderExtensionElement(id: 1, value: [0x01]),
        RTPHeaderExtensionElement(id: 3, value: [0x10, 0x20, 0x30]),
      ]))
    let expected = Hex.bytes("91ef1234deadbeef01020304aabbccdd bede0002 1001 32102030 0000")
    var buffer = [UInt8](repeating: 0xFF, count: 64)
    let written = try buffer.withUnsafeMutableBytes { try header.write(to: $0) }
    XCTAssertEqual(written, 28)
    XCTAssertEqual(header.serializedLength, 28)
    XCTAssertEqual(Array(buffer.prefix(written)), expected)
    let parsed = try expected.withUnsafeBytes { try RTPHeader.parse($0) }
    XCTAssertEqual(parsed.header, header)
    XCTAssertEqual(parsed.headerLength, 28)
    XCTAssertEqual(parsed.payloadRange, 28..<28)
  }

  func testTwoByteExtensionWithPaddingRoundTrips() throws {
    let header = RTPHeader(
      payloadType: 96, sequenceNumber: 65535, timestamp: 90_000, ssrc: 0xCAFE_BABE,
      headerExtension: .twoByte(
        appBits: 0,
        [
          RTPHeaderExtensionElement(id: 1, value: []),
          RTPHeaderExtensionElement(id: 200, value: [0xAA, 0xBB]),
        ]))
    let packet = RTPPacket(header: header, payload: [1, 2, 3, 4, 5], paddingSize: 3)
    let bytes = try packet.serialized()
    XCTAssertEqual(
      bytes,
      Hex.bytes("b060ffff00015f90cafebabe 10000002 0100c802aabb0000 0102030405 000003"))
    let parsed = try RTPPacket.parse(bytes)
    XCTAssertEqual(parsed, packet)
    XCTAssertEqual(parsed.header.headerExtension?.element(id: 200)?.value, [0xAA, 0xBB])
  }

  func testGenericExtensionRoundTrips() throws {
    let header = RTPHeader(
      payloadType: 0, sequenceNumber: 1, timestamp: 2, ssrc: 3,
      headerExtension: .generic(profile: 0xABCD, data: [1, 2, 3, 4]))
    let packet = RTPPacket(header: header, payload: [9])
    XCTAssertEqual(try RTPPacket.parse(try packet.serialized()), packet)
  }

  func testOneByteExtensionStopsAtReservedID15AndSkipsPadding() throws {
    let bytes = Hex.bytes("9000000100000002 00000003 bede0002 00 10aa f0 ff ff ff ff")
    let parsed = try RTPPacket.parse(bytes)
    XCTAssertEqual(parsed.header.headerExtension, .oneByte([.init(id: 1, value: [0xAA])]))
    XCTAssertEqual(parsed.payload, [])
  }

  func testOneByteElementRunningPastBlockIsRejected() throws {
    // ID 2 announces 4 octets, only 3 remain in the one-word block.
    let bytes = Hex.bytes("900000010000000200000003 bede0001 23aabbcc")
    XCTAssertThrowsError(try RTPPacket.parse(bytes)) {
      XCTAssertEqual(
        $0 as? RTPParseError, .truncatedExtensionElement(id: 2, declared: 4, available: 3))
    }
  }

  func testWriterRejectsBadInputWithoutWriting() throws {
    var small = [UInt8](repeating: 0, count: 11)
    let header = RTPHeader(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0)
    XCTAssertThrowsError(try small.withUnsafeMutableBytes { try header.write(to: $0) }) {
      XCTAssertEqual($0 as? RTPWriteError, .bufferTooSmall(needed: 12, available: 11))
    }
    var big = [UInt8](repeating: 0, count: 200)
    let tooMany = RTPHeader(
      payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0, csrcs: Array(0..<16))
    XCTAssertThrowsError(try big.withUnsafeMutableBytes { try tooMany.write(to: $0) }) {
      XCTAssertEqual($0 as? RTPWriteError, .tooManyCSRCs(16))
    }
    let badID = RTPHeader(
      payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0,
      headerExtension: .oneByte([.init(id: 15, value: [1])]))
    XCTAssertThrowsError(try big.withUnsafeMutableBytes { try badID.write(to: $0) }) {
      XCTAssertEqual($0 as? RTPWriteError, .invalidExtensionElement(id: 15, length: 1))
    }
  }

  /// Every prefix and many single-octet mutations of the corpus packets either parse or throw.
  func testMalformedInputNeverCrashes() throws {
    var generator = SplitMix64(seed: 7)
    let files = [
      "aiortc-rtp.bin", "aiortc-rtp_with_csrc.bin", "aiortc-rtp_with_sdes_mid.bin",
      "aiortc-rtp_only_padding_with_header_extensions.bin",
    ]
    var inputs: [[UInt8]] = [Hex.bytes("900000010000000200000003 bede0001 23aabbcc")]
    for file in files {
      if let bytes = try? Corpus.bytes("rtp-rtcp/\(file)") { inputs.append(bytes) }
    }
    var parsed = 0
    for input in inputs {
      for length in 0...input.count where (try? RTPPacket.parse(Array(input.prefix(length)))) != nil
      {
        parsed += 1
      }
      for _ in 0..<500 {
        var mutated = input
        let index = Int(generator.next() % UInt64(mutated.count))
        mutated[index] = UInt8(truncatingIfNeeded: generator.next())
        if (try? RTPPacket.parse(mutated)) != nil { parsed += 1 }
      }
    }
    XCTAssertGreaterThan(parsed, 0)
  }
}
