import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// Real RTCP from aiortc (shared corpus) driving a send stream: its NACK is served from history,
/// its RR is reported.
final class StreamCorpusTests: XCTestCase {
  /// `aiortc-rtcp_rtpfb.bin`: generic NACK from 0x8B4477BB about media SSRC 0xF71DEEE4.
  private let nackVector = Hex.bytes(
    "81cd000c8b4477bbf71deee4000c00000020004000360000004c0000006e1000008e000000b7000800df1000010f000001240000"
  )
  private let nackedSequenceNumbers: [UInt16] = [
    12, 32, 39, 54, 76, 110, 123, 142, 183, 187, 223, 236, 271, 292,
  ]

  private func assertNACKServed(_ bytes: [UInt8]) throws {
    var stream = RTPSendStream(
      configuration: .init(
        ssrc: 0xF71D_EEE4, payloadType: 0, clockRate: 8000, cname: "corpus",
        initialSequenceNumber: 0, timestampOffset: 0),
      now: virtualTime(0), wallClock: NTPTimestamp(seconds: 3_900_000_000))
    for index in 0..<300 {
      _ = stream.send(
        PacketizedPayload(
          payload: [UInt8(index & 0xFF)], marker: false, timestamp: UInt32(index * 160)),
        now: virtualTime(Double(index) * 0.005))
    }
    var resent: [UInt16] = []
    for packet in try RTCPPacket.parseCompound(bytes) {
      for retransmission in stream.handle(packet, now: virtualTime(1.6)).packets {
        let parsed = try RTPPacket.parse(retransmission)
        XCTAssertEqual(parsed.payload, [UInt8(parsed.header.sequenceNumber & 0xFF)])
        resent.append(parsed.header.sequenceNumber)
      }
    }
    XCTAssertEqual(resent, nackedSequenceNumbers)
  }

  func testInlineNACKVectorIsServedFromHistory() throws {
    try assertNACKServed(nackVector)
  }

  func testCorpusNACKIsServedFromHistory() throws {
    let bytes = try Corpus.bytes("rtp-rtcp/aiortc-rtcp_rtpfb.bin")
    XCTAssertEqual(bytes, nackVector)
    try assertNACKServed(bytes)
  }

  func testCorpusReceiverReportReachesTheSender() throws {
    let bytes = try Corpus.bytes("rtp-rtcp/aiortc-rtcp_rr.bin")
    var stream = RTPSendStream(
      configuration: .init(ssrc: 1_200_895_919, payloadType: 0, clockRate: 8000, cname: "corpus"),
      now: virtualTime(0), wallClock: NTPTimestamp(seconds: 3_900_000_000))
    var events: [RTPSendStream.Event] = []
    for packet in try RTCPPacket.parseCompound(bytes) {
      events += stream.handle(packet, now: virtualTime(1)).events
    }
    XCTAssertEqual(
      events,
      [
        .receptionReport(
          RTCPReportBlock(ssrc: 1_200_895_919, highestSequence: 630, jitter: 1906))
      ])
    XCTAssertNil(stream.roundTripTime, "LSR 0: no RTT")
  }
}
