import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// The aiortc RTCP packets of ../shared/corpus/rtp-rtcp parse to the values in expected.json.
final class RTCPCorpusTests: XCTestCase {
  private func assertReports(
    _ reports: [RTCPReportBlock], _ expected: CorpusJSON?, _ name: String
  ) throws {
    let list = try XCTUnwrap(expected?.array, name)
    XCTAssertEqual(reports.count, list.count, name)
    for (report, entry) in zip(reports, list) {
      XCTAssertEqual(UInt64(report.ssrc), entry["ssrc"]?.uint64, name)
      XCTAssertEqual(Int(report.fractionLost), entry["fraction_lost"]?.int, name)
      XCTAssertEqual(Int(report.packetsLost), entry["packets_lost"]?.int, name)
      XCTAssertEqual(UInt64(report.highestSequence), entry["highest_sequence"]?.uint64, name)
      XCTAssertEqual(UInt64(report.jitter), entry["jitter"]?.uint64, name)
      XCTAssertEqual(UInt64(report.lastSenderReport), entry["lsr"]?.uint64, name)
      XCTAssertEqual(UInt64(report.delaySinceLastSenderReport), entry["dlsr"]?.uint64, name)
    }
  }

  private func assertPacket(_ packet: RTCPPacket, _ entry: CorpusJSON, _ name: String) throws {
    let type = try XCTUnwrap(entry["type"]?.string)
    switch (type, packet) {
    case ("SR", .senderReport(let sr)):
      XCTAssertEqual(UInt64(sr.ssrc), entry["ssrc"]?.uint64, name)
      XCTAssertEqual(sr.ntpTimestamp, entry["ntp_timestamp"]?.uint64, name)
      XCTAssertEqual(UInt64(sr.rtpTimestamp), entry["rtp_timestamp"]?.uint64, name)
      XCTAssertEqual(UInt64(sr.packetCount), entry["packet_count"]?.uint64, name)
      XCTAssertEqual(UInt64(sr.octetCount), entry["octet_count"]?.uint64, name)
      try assertReports(sr.reports, entry["reports"], name)
    case ("RR", .receiverReport(let rr)):
      XCTAssertEqual(UInt64(rr.ssrc), entry["ssrc"]?.uint64, name)
      try assertReports(rr.reports, entry["reports"], name)
    case ("SDES", .sourceDescription(let sdes)):
      let chunks = try XCTUnwrap(entry["chunks"]?.array)
      XCTAssertEqual(sdes.chunks.count, chunks.count, name)
      for (chunk, expected) in zip(sdes.chunks, chunks) {
        XCTAssertEqual(UInt64(chunk.ssrc), expected["ssrc"]?.uint64, name)
        let items = try XCTUnwrap(expected["items"]?.array)
        XCTAssertEqual(chunk.items.count, items.count, name)
        for (item, pair) in zip(chunk.items, items) {
          let fields = try XCTUnwrap(pair.array)
          XCTAssertEqual(Int(item.type), fields.first?.int, name)
          XCTAssertEqual(item.text, fields.last?.string, name)
        }
      }
    case ("BYE", .bye(let bye)):
      XCTAssertEqual(
        bye.sources.map(UInt64.init), try XCTUnwrap(entry["sources"]?.array).compactMap(\.uint64),
        name)
      XCTAssertNil(bye.reason, name)
    case ("PSFB", .pictureLossIndication(let pli)):
      XCTAssertEqual(entry["fmt"]?.int, Int(RTCPPictureLossIndication.format), name)
      XCTAssertEqual(UInt64(pli.senderSSRC), entry["ssrc"]?.uint64, name)
      XCTAssertEqual(UInt64(pli.mediaSSRC), entry["media_ssrc"]?.uint64, name)
      XCTAssertEqual(entry["fci"]?.string, "", name)
    case ("RTPFB", .genericNACK(let nack)):
      XCTAssertEqual(entry["fmt"]?.int, Int(RTCPGenericNACK.format), name)
      XCTAssertEqual(UInt64(nack.senderSSRC), entry["ssrc"]?.uint64, name)
      XCTAssertEqual(UInt64(nack.mediaSSRC), entry["media_ssrc"]?.uint64, name)
      XCTAssertEqual(
        nack.lostSequenceNumbers.map(Int.init),
        try XCTUnwrap(entry["nack_lost_seqs"]?.array).compactMap(\.int), name)
    default:
      XCTFail("\(name): expected \(type), parsed \(packet)")
    }
  }

  func testCorpusPacketsParseToExpectedValues() throws {
    let expectedJSON = try Corpus.json("rtp-rtcp/expected.json")
    let expected = try XCTUnwrap(expectedJSON.object)
    let valid = expected.filter { $0.value["kind"]?.string == "rtcp" && $0.value["packets"] != nil }
    XCTAssertEqual(valid.count, 8)
    for (name, entry) in valid {
      let bytes = try Corpus.bytes("rtp-rtcp/\(name)")
      let packets = try RTCPPacket.parseCompound(bytes)
      let expectedPackets = try XCTUnwrap(entry["packets"]?.array)
      XCTAssertEqual(packets.count, expectedPackets.count, name)
      for (packet, expectedPacket) in zip(packets, expectedPackets) {
        try assertPacket(packet, expectedPacket, name)
        XCTAssertEqual(UInt64(bytes[1]), expectedPacket["pt"]?.uint64, name)
        if expectedPacket["padding"]?.bool == true {
          XCTAssertNotEqual(bytes[0] & 0x20, 0, name)
        }
        if let reserialized = expectedPacket["reserialized_without_padding"]?.string {
          XCTAssertEqual(Hex.string(try RTCPPacket.serializeCompound([packet])), reserialized)
        }
      }
      if expectedPackets.allSatisfy({ $0["padding"] == nil }) {
        XCTAssertEqual(try RTCPPacket.serializeCompound(packets), bytes, "\(name) rewritten")
      }
    }
  }

  func testCorpusInvalidPacketsAreRejected() throws {
    let expectedJSON = try Corpus.json("rtp-rtcp/expected.json")
    let expected = try XCTUnwrap(expectedJSON.object)
    let invalid = expected.filter { $0.key.hasSuffix(".bin") && $0.value["must_fail"] != nil }
    XCTAssertEqual(invalid.count, 7)
    for (name, _) in invalid {
      let bytes = try Corpus.bytes("rtp-rtcp/\(name)")
      XCTAssertThrowsError(try RTCPPacket.parseCompound(bytes), name) { error in
        XCTAssertTrue(error is RTCPParseError, name)
      }
    }
    // The reasons, one by one.
    let reasons: [(String, RTCPParseError)] = [
      ("aiortc-rtcp_sdes_item_truncated.bin", .sdesItemTruncated),
      ("aiortc-rtcp_sdes_source_truncated.bin", .sdesSourceTruncated),
    ]
    for (name, reason) in reasons {
      XCTAssertThrowsError(try RTCPPacket.parseCompound(try Corpus.bytes("rtp-rtcp/\(name)"))) {
        XCTAssertEqual($0 as? RTCPParseError, reason, name)
      }
    }
    for (name, type) in [
      ("aiortc-rtcp_bye_invalid.bin", 203), ("aiortc-rtcp_rr_invalid.bin", 201),
      ("aiortc-rtcp_sr_invalid.bin", 200), ("aiortc-rtcp_rtpfb_invalid.bin", 205),
      ("aiortc-rtcp_psfb_invalid.bin", 206),
    ] {
      XCTAssertThrowsError(try RTCPPacket.parseCompound(try Corpus.bytes("rtp-rtcp/\(name)"))) {
        guard case .invalidLength(let packetType, _) = $0 as? RTCPParseError else {
          return XCTFail("\(name): \($0)")
        }
        XCTAssertEqual(Int(packetType), type, name)
      }
    }
  }

  func testEveryProperPrefixOfReceiverReportIsTruncated() throws {
    let bytes = try Corpus.bytes("rtp-rtcp/aiortc-rtcp_rr.bin")
    for length in 0..<bytes.count {
      XCTAssertThrowsError(try RTCPPacket.parseCompound(Array(bytes.prefix(length)))) {
        switch $0 as? RTCPParseError {
        case .truncatedHeader, .truncatedPacket: break
        default: XCTFail("prefix \(length): \($0)")
        }
      }
    }
  }

  func testByePaddingCountZeroIsInvalid() throws {
    let bytes = try Corpus.bytes("rtp-rtcp/aiortc-rtcp_bye_padding.bin")
    XCTAssertThrowsError(try RTCPPacket.parseCompound(Array(bytes.prefix(4)) + [0, 0, 0, 0])) {
      XCTAssertEqual($0 as? RTCPParseError, .invalidPadding(packetType: 203, count: 0))
    }
  }

  func testCompoundSenderReportThenSourceDescription() throws {
    let sr = try Corpus.bytes("rtp-rtcp/aiortc-rtcp_sr.bin")
    let sdes = try Corpus.bytes("rtp-rtcp/aiortc-rtcp_sdes.bin")
    let packets = try RTCPPacket.parseCompound(sr + sdes)
    XCTAssertEqual(packets.count, 2)
    guard case .senderReport(let report) = packets.first,
      case .sourceDescription(let description) = packets.last
    else { return XCTFail("\(packets)") }
    XCTAssertEqual(report.ssrc, 1_831_097_322)
    XCTAssertEqual(description.chunks.first?.cname, "{63f459ea-41fe-4474-9d33-9707c9ee79d1}")
    XCTAssertEqual(try RTCPPacket.serializeCompound(packets), sr + sdes)
  }

  func testVersion3IsRejected() throws {
    var bytes = try Corpus.bytes("rtp-rtcp/aiortc-rtcp_rr.bin")
    bytes[0] = 0xC0 | (bytes[0] & 0x3F)
    XCTAssertThrowsError(try RTCPPacket.parseCompound(bytes)) {
      XCTAssertEqual($0 as? RTCPParseError, .invalidVersion(3))
    }
  }

  func testNACKItemsBuiltFromCorpusListMatchCorpusBytes() throws {
    let bytes = try Corpus.bytes("rtp-rtcp/aiortc-rtcp_rtpfb.bin")
    guard case .genericNACK(let parsed) = try RTCPPacket.parseCompound(bytes).first else {
      return XCTFail("not a NACK")
    }
    let rebuilt = RTCPGenericNACK(
      senderSSRC: parsed.senderSSRC, mediaSSRC: parsed.mediaSSRC,
      lost: parsed.lostSequenceNumbers)
    XCTAssertEqual(rebuilt.lostSequenceNumbers, parsed.lostSequenceNumbers)
    XCTAssertEqual(try RTCPPacket.serializeCompound([.genericNACK(rebuilt)]), bytes)
  }

  func testMalformedInputNeverCrashes() throws {
    var generator = SplitMix64(seed: 11)
    let names = [
      "aiortc-rtcp_sr.bin", "aiortc-rtcp_rr.bin", "aiortc-rtcp_sdes.bin", "aiortc-rtcp_bye.bin",
      "aiortc-rtcp_rtpfb.bin", "aiortc-rtcp_psfb_pli.bin",
    ]
    var inputs: [[UInt8]] = []
    for name in names { inputs.append(try Corpus.bytes("rtp-rtcp/\(name)")) }
    inputs.append(RTCPTransportWideFeedbackTests.handEncodedVector)
    inputs.append(RTCPFeedbackTests.handEncodedREMB)
    var accepted = 0
    for input in inputs {
      for length in 0...input.count
      where (try? RTCPPacket.parseCompound(Array(input.prefix(length)))) != nil {
        accepted += 1
      }
      for _ in 0..<500 {
        var mutated = input
        for _ in 0..<2 {
          let index = Int(generator.next() % UInt64(mutated.count))
          mutated[index] = UInt8(truncatingIfNeeded: generator.next())
        }
        if (try? RTCPPacket.parseCompound(mutated)) != nil { accepted += 1 }
      }
    }
    XCTAssertGreaterThan(accepted, 0)
  }
}
