import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class RTCPLenientCompoundTests: XCTestCase {
  let receiverReport = RTCPPacket.receiverReport(RTCPReceiverReport(ssrc: 0x1111_1111))
  let pli = RTCPPacket.pictureLossIndication(
    RTCPPictureLossIndication(senderSSRC: 0x2222_2222, mediaSSRC: 0x3333_3333))

  func testMalformedSubPacketIsSkippedAndTheRestKept() throws {
    var bytes = try RTCPPacket.serializeCompound([receiverReport])
    // An RR claiming two report blocks (48 octets) in a body of one SSRC: a sane length, a
    // malformed body.
    let badReport: [UInt8] = [0x82, 201, 0x00, 0x01, 0xAA, 0xAA, 0xAA, 0xAA]
    // A PLI with P=1 and a padding count of 0 (RFC 3550 §6.4.1: the count includes itself).
    let badPadding: [UInt8] =
      [0xA1, 206, 0x00, 0x03] + [UInt8](repeating: 0x44, count: 8) + [
        0, 0, 0, 0,
      ]
    bytes += badReport + badPadding
    bytes += try RTCPPacket.serializeCompound([pli])

    let compound = RTCPPacket.parseCompoundLeniently(bytes)
    XCTAssertEqual(compound.packets, [receiverReport, pli])
    XCTAssertEqual(compound.skipped.map(\.offset), [8, 16])
    XCTAssertEqual(compound.skipped.map(\.packetType), [201, 206])
    XCTAssertEqual(compound.skipped.last?.error, .invalidPadding(packetType: 206, count: 0))
    guard case .invalidLength(packetType: 201, _) = compound.skipped.first?.error else {
      return XCTFail("\(compound.skipped)")
    }
    XCTAssertNil(compound.stoppedBy)
    // The strict parser still rejects the whole compound.
    XCTAssertThrowsError(try RTCPPacket.parseCompound(bytes))
  }

  func testLengthRunningPastTheEndStopsTheParseThere() throws {
    var bytes = try RTCPPacket.serializeCompound([pli, receiverReport])
    let goodLength = bytes.count
    // An SR header announcing 17 words (68 octets) with 8 octets left.
    bytes += [0x80, 200, 0x00, 0x10, 1, 2, 3, 4]
    bytes += try RTCPPacket.serializeCompound([receiverReport])
    let compound = RTCPPacket.parseCompoundLeniently(bytes)
    XCTAssertEqual(compound.packets, [pli, receiverReport])
    XCTAssertEqual(compound.skipped, [])
    XCTAssertEqual(
      compound.stoppedBy,
      .truncatedPacket(packetType: 200, declared: 68, available: bytes.count - goodLength))

    let wrongVersion = RTCPPacket.parseCompoundLeniently([0x40, 201, 0, 1, 0, 0, 0, 0])
    XCTAssertEqual(wrongVersion.packets, [])
    XCTAssertEqual(wrongVersion.stoppedBy, .invalidVersion(1))
    XCTAssertEqual(
      RTCPPacket.parseCompoundLeniently([]).stoppedBy, .truncatedHeader(offset: 0, available: 0))
  }
}
