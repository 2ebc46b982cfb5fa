import Foundation
import WCSMedia
import XCTest

@testable import WCSLocalServer

/// The relay's own RTCP: a malformed sub-packet in what a player sends does not hide the
/// feedback beside it, and every report the relay sends carries an SDES CNAME (RFC 3550 §6.1).
final class RelayRTCPTests: XCTestCase {
  /// The CNAME chunks of the SDES packets in `compounds`, by SSRC.
  static func cnames(_ compounds: [[RTCPPacket]]) -> [UInt32: String] {
    var result: [UInt32: String] = [:]
    for case .sourceDescription(let description) in compounds.joined() {
      for chunk in description.chunks { result[chunk.ssrc] = chunk.cname }
    }
    return result
  }

  func testAMalformedSubPacketDoesNotHideThePLIBesideIt() throws {
    let session = try RelayLossRecoveryTests.Session(publisherRTX: false, playerRTX: false)
    defer { session.close() }
    try session.sendFromPublisher(Array(session.videoPackets.prefix(5)))
    session.received.wait { session.video($0).count == 5 }
    // RR, then an RR whose padding bit is set with a padding count of 0 (RFC 3550 §6.4.1:
    // invalid), then a PLI: strictly parsed, the whole compound would be refused.
    var bytes = try RTCPPacket.serializeCompound([
      .receiverReport(RTCPReceiverReport(ssrc: 0x4444))
    ])
    bytes += [0xA0, 201, 0x00, 0x01, 0x00, 0x00, 0x44, 0x00]
    bytes += try RTCPPacket.serializeCompound([
      .pictureLossIndication(
        RTCPPictureLossIndication(senderSSRC: 0x4444, mediaSSRC: session.playerVideoSSRC))
    ])
    XCTAssertThrowsError(try RTCPPacket.parseCompound(bytes))
    let playerPC = session.playerPC
    try session.loop.submit { try playerPC.sendRTCP(bytes) }
    let deadline = Date().addingTimeInterval(10)
    var requests = 0
    while requests == 0, Date() < deadline {
      usleep(10_000)
      requests = session.engine.legStatistics()["play-1"]?.keyFrameRequests ?? 0
    }
    XCTAssertEqual(requests, 1, "the PLI after the malformed packet was taken")
  }

  func testTheRelaysReportsCarryTheCNAMEOfTheAnswer() throws {
    let session = try RelayLossRecoveryTests.Session(publisherRTX: false, playerRTX: false)
    defer { session.close() }
    let downstream = Collector<[RTCPPacket]>()
    let playerPC = session.playerPC
    session.loop.submit {
      playerPC.onRTCP = { downstream.append((try? RTCPPacket.parseCompound($0)) ?? []) }
    }
    try session.sendFromPublisher(Array(session.videoPackets.prefix(5)))
    session.received.wait { session.video($0).count == 5 }

    // Publisher leg: the relay's RR comes with a CNAME chunk for the RR's own SSRC.
    let upstream = session.upstreamRTCP.wait { compounds in
      compounds.contains { compound in
        guard case .receiverReport(let report)? = compound.first else { return false }
        return Self.cnames([compound])[report.ssrc] == "wcs-cam"
      }
    }
    XCTAssertFalse(upstream.isEmpty)

    // Player leg: the SR for the video SSRC names the CNAME the answer signalled for it.
    let answer = try SDPParser.parse(session.playerAnswer).description
    let signalled = try XCTUnwrap(
      answer.media.first { $0.media == "video" }?.ssrcAttributes.first {
        $0.ssrc == session.playerVideoSSRC && $0.attribute == "cname"
      }?.value)
    XCTAssertEqual(signalled, "wcs-cam")
    downstream.wait { compounds in
      compounds.contains { compound in
        guard case .senderReport(let report)? = compound.first,
          report.ssrc == session.playerVideoSSRC
        else { return false }
        return Self.cnames([compound])[report.ssrc] == signalled
      }
    }
  }

  func testACNAMEIsCutToTheLengthAnSDESItemHolds() throws {
    let long = String(repeating: "é", count: 200)  // 400 UTF-8 bytes
    let cname = LocalServerRelayEngine.cname(streamName: long)
    XCTAssertLessThanOrEqual(cname.utf8.count, 255)
    XCTAssertEqual(cname, "wcs-" + String(repeating: "é", count: 125))
    let packets = LocalServerRelayEngine.withSourceDescription(
      [.receiverReport(RTCPReceiverReport(ssrc: 7))], cname: cname)
    let parsed = try RTCPPacket.parseCompound(try RTCPPacket.serializeCompound(packets))
    XCTAssertEqual(Self.cnames([parsed]), [7: cname])
  }
}
