import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// Every packet type written, parsed back and compared field by field.
final class RTCPRoundTripTests: XCTestCase {
  private func roundTrip(
    _ packets: [RTCPPacket], file: StaticString = #filePath, line: UInt = #line
  )
    throws -> [UInt8]
  {
    let bytes = try RTCPPacket.serializeCompound(packets)
    XCTAssertEqual(bytes.count % 4, 0, file: file, line: line)
    XCTAssertEqual(try RTCPPacket.parseCompound(bytes), packets, file: file, line: line)
    return bytes
  }

  private let block = RTCPReportBlock(
    ssrc: 0x1111_2222, fractionLost: 25, packetsLost: -3, highestSequence: 0x0001_0005,
    jitter: 77, lastSenderReport: 0xABCD_0123, delaySinceLastSenderReport: 65536)

  func testSenderReport() throws {
    let sr = RTCPSenderReport(
      ssrc: 1, ntpTimestamp: 0xE2F1_0000_8000_0000, rtpTimestamp: 90_000, packetCount: 10,
      octetCount: 12_000, reports: [block, block])
    let bytes = try roundTrip([.senderReport(sr)])
    XCTAssertEqual(Array(bytes.prefix(4)), [0x82, 200, 0, 18])
    // Cumulative loss -3 is 0xFFFFFD in 24 bits after fraction 25.
    XCTAssertEqual(Array(bytes[32..<36]), [25, 0xFF, 0xFF, 0xFD])
  }

  func testReceiverReportEmptyAndFull() throws {
    let bytes = try roundTrip([.receiverReport(RTCPReceiverReport(ssrc: 9))])
    XCTAssertEqual(bytes, [0x80, 201, 0, 1, 0, 0, 0, 9])
    _ = try roundTrip([.receiverReport(RTCPReceiverReport(ssrc: 9, reports: [block]))])
  }

  func testSourceDescriptionWithSeveralItems() throws {
    let sdes = RTCPSourceDescription(chunks: [
      RTCPSourceDescriptionChunk(
        ssrc: 5,
        items: [
          RTCPSourceDescriptionItem(type: RTCPSourceDescriptionItem.cname, text: "abc"),
          RTCPSourceDescriptionItem(type: RTCPSourceDescriptionItem.tool, text: "WCSApi2"),
        ]),
      RTCPSourceDescriptionChunk(
        ssrc: 6,
        items: [RTCPSourceDescriptionItem(type: RTCPSourceDescriptionItem.cname, text: "x")]
      ),
    ])
    let bytes = try roundTrip([.sourceDescription(sdes)])
    // Chunk 1: ssrc, 01 03 'abc', 06 07 'WCSApi2', null, pad to 20 octets.
    XCTAssertEqual(
      Hex.string(Array(bytes.prefix(24))),
      "82ca0007" + "00000005" + "0103616263" + "0607574353417069320000")
    XCTAssertEqual(sdes.chunks.first?.cname, "abc")
  }

  func testByeWithAndWithoutReason() throws {
    let bytes = try roundTrip([.bye(RTCPBye(sources: [1, 2], reason: "bye"))])
    XCTAssertEqual(Hex.string(bytes), "82cb0003" + "00000001" + "00000002" + "03627965")
    _ = try roundTrip([.bye(RTCPBye(sources: [7]))])
    _ = try roundTrip([.bye(RTCPBye(sources: [], reason: "long reason text"))])
  }

  func testApplicationDefined() throws {
    let app = RTCPApplicationDefined(
      subtype: 3, ssrc: 0xDEAD, name: Array("WCS1".utf8), data: [1, 2, 3, 4])
    let bytes = try roundTrip([.applicationDefined(app)])
    XCTAssertEqual(Hex.string(bytes), "83cc0003" + "0000dead" + "57435331" + "01020304")
  }

  func testGenericNACKFromList() throws {
    let nack = RTCPGenericNACK(
      senderSSRC: 1, mediaSSRC: 2, lost: [65534, 65535, 0, 15, 16, 40])
    // 65534 is PID; 65535 (+1), 0 (+2), 15 (+17 → new item), 16 (+1 of 15), 40 new.
    XCTAssertEqual(
      nack.items,
      [
        RTCPNACKItem(packetID: 65534, lostBitmask: 0b11),
        RTCPNACKItem(packetID: 15, lostBitmask: 0b1),
        RTCPNACKItem(packetID: 40, lostBitmask: 0),
      ])
    XCTAssertEqual(nack.lostSequenceNumbers, [65534, 65535, 0, 15, 16, 40])
    let bytes = try roundTrip([.genericNACK(nack)])
    XCTAssertEqual(
      Hex.string(bytes), "81cd0005" + "00000001" + "00000002" + "fffe0003000f000100280000")
  }

  func testPictureLossIndicationAndFullIntraRequest() throws {
    let pli = try roundTrip([.pictureLossIndication(.init(senderSSRC: 1, mediaSSRC: 2))])
    XCTAssertEqual(Hex.string(pli), "81ce0002" + "00000001" + "00000002")
    let fir = RTCPFullIntraRequest(
      senderSSRC: 1, entries: [.init(ssrc: 0xAABB_CCDD, sequenceNumber: 9)])
    let bytes = try roundTrip([.fullIntraRequest(fir)])
    XCTAssertEqual(
      Hex.string(bytes), "84ce0004" + "00000001" + "00000000" + "aabbccdd" + "09000000")
  }

  func testUnknownTypesAndFormatsStayRaw() throws {
    let xr = RTCPRawPacket(packetType: 207, count: 0, body: [0, 0, 0, 1, 9, 9, 9, 9])
    let unknownFeedback = RTCPRawPacket(
      packetType: 205, count: 3, body: [0, 0, 0, 1, 0, 0, 0, 2, 0xAA, 0xBB, 0xCC, 0xDD])
    let otherALFB = RTCPRawPacket(
      packetType: 206, count: 15, body: [0, 0, 0, 1, 0, 0, 0, 0] + Array("ABCD".utf8))
    _ = try roundTrip([.raw(xr), .raw(unknownFeedback), .raw(otherALFB)])
    // A raw body that is not word-aligned is written with RFC 3550 padding and read back.
    let odd = RTCPRawPacket(packetType: 210, count: 1, body: [1, 2, 3, 4, 5])
    let bytes = try roundTrip([.raw(odd)])
    XCTAssertEqual(Hex.string(bytes), "a1d20002" + "01020304" + "05000003")
  }

  func testFullCompoundWalksEveryPacket() throws {
    let packets: [RTCPPacket] = [
      .senderReport(
        RTCPSenderReport(
          ssrc: 1, ntpTimestamp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5, reports: [block]
        )),
      .sourceDescription(
        RTCPSourceDescription(chunks: [
          .init(ssrc: 1, items: [.init(type: RTCPSourceDescriptionItem.cname, text: "cname-1")])
        ])),
      .genericNACK(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 9, lost: [1, 2, 3])),
      .pictureLossIndication(.init(senderSSRC: 1, mediaSSRC: 9)),
      .receiverEstimatedMaxBitrate(.init(senderSSRC: 1, bitrate: 300_000, ssrcs: [9, 10])),
      .transportWideFeedback(
        RTCPTransportWideFeedback(
          senderSSRC: 1, mediaSSRC: 9, baseSequenceNumber: 5, referenceTime: -2,
          feedbackPacketCount: 1, packets: [.receivedSmallDelta(3), .notReceived])),
      .bye(RTCPBye(sources: [1], reason: "done")),
    ]
    _ = try roundTrip(packets)
  }

  func testWriteCompoundIntoCallerBuffer() throws {
    var buffer = [UInt8](repeating: 0, count: 8)
    let packets: [RTCPPacket] = [.receiverReport(RTCPReceiverReport(ssrc: 9))]
    let written = try buffer.withUnsafeMutableBytes {
      try RTCPPacket.writeCompound(packets, to: $0)
    }
    XCTAssertEqual(written, 8)
    XCTAssertEqual(buffer, [0x80, 201, 0, 1, 0, 0, 0, 9])
    var small = [UInt8](repeating: 0, count: 7)
    XCTAssertThrowsError(
      try small.withUnsafeMutableBytes { try RTCPPacket.writeCompound(packets, to: $0) }
    ) {
      XCTAssertEqual($0 as? RTCPWriteError, .bufferTooSmall(needed: 8, available: 7))
    }
  }

  func testWriterRejectsOutOfRangeLists() {
    let tooMany = RTCPReceiverReport(ssrc: 1, reports: Array(repeating: block, count: 32))
    XCTAssertThrowsError(try RTCPPacket.serializeCompound([.receiverReport(tooMany)])) {
      XCTAssertEqual($0 as? RTCPWriteError, .tooManyItems(packetType: 201, count: 32))
    }
    let badName = RTCPApplicationDefined(subtype: 0, ssrc: 1, name: [1, 2, 3], data: [])
    XCTAssertThrowsError(try RTCPPacket.serializeCompound([.applicationDefined(badName)]))
  }
}
