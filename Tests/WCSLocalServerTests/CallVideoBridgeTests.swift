import WCSProtocols
import XCTest

@testable import WCSLocalServer

/// The SIP leg's VP8 video description and the call's video pass-through: rewriting both ways,
/// key frame requests crossing over, hold.
final class CallVideoBridgeTests: XCTestCase {
  /// An offer as baresip (vp8 + fakevideo) writes it, with an audio section first.
  private let baresipOffer = """
    v=0\r
    o=- 1 2 IN IP4 127.0.0.1\r
    s=-\r
    c=IN IP4 127.0.0.1\r
    t=0 0\r
    m=audio 30000 RTP/AVP 0 101\r
    a=rtpmap:101 telephone-event/8000\r
    m=video 30002 RTP/AVP 100 97\r
    c=IN IP4 127.0.0.2\r
    a=rtpmap:97 H264/90000\r
    a=rtpmap:100 VP8/90000\r
    a=rtcp-fb:* ccm fir\r
    a=sendrecv\r

    """

  private func packet(pt: UInt8, ssrc: UInt32, seq: UInt16, ts: UInt32) throws -> [UInt8] {
    try RTPPacket(
      header: RTPHeader(
        marker: true, payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc: ssrc),
      payload: [0x10, 0x00, 0x9d, 0x01, 0x2a]
    ).serialized()
  }

  func testTheVP8SectionIsReadWithItsAddressPortAndFeedback() throws {
    let video = try XCTUnwrap(SIPVideoDescription.parse(baresipOffer))
    XCTAssertEqual(video.address, "127.0.0.2", "the section's own c= line")
    XCTAssertEqual(video.port, 30002)
    XCTAssertEqual(video.rtcpPort, 30003)
    XCTAssertEqual(video.payloadType, 100)
    XCTAssertTrue(video.fullIntraRequest)
    XCTAssertFalse(video.pictureLossIndication)
    XCTAssertFalse(video.holding)
    XCTAssertNil(SIPVideoDescription.parse("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 4 RTP/AVP 0\r\n"))
    XCTAssertNil(
      SIPVideoDescription.parse(
        baresipOffer.replacingOccurrences(of: "m=video 30002", with: "m=video 0")),
      "a rejected section")
    XCTAssertNil(
      SIPVideoDescription.parse(
        baresipOffer.replacingOccurrences(of: "VP8/90000", with: "VP9/90000")),
      "no VP8")
    let answer = SIPVideoDescription.localSection(
      port: 40000, answering: video, direction: "sendrecv")
    XCTAssertEqual(answer.first, "m=video 40000 RTP/AVP 100")
    XCTAssertTrue(answer.contains("a=rtcp-fb:100 nack pli"))
  }

  func testPacketsAreRewrittenEachWayAndKeepTheirGaps() throws {
    var generator = SystemRandomNumberGenerator()
    let sip = try XCTUnwrap(SIPVideoDescription.parse(baresipOffer))
    var bridge = CallVideoBridge(webRTCPayloadType: 120, sip: sip, using: &generator)
    let now = MediaInstant.milliseconds(1000)
    let first = try XCTUnwrap(
      bridge.receiveFromSIP(try packet(pt: 100, ssrc: 77, seq: 10, ts: 9000), now: now))
    let third = try XCTUnwrap(
      bridge.receiveFromSIP(try packet(pt: 100, ssrc: 77, seq: 12, ts: 12000), now: now))
    let a = try RTPPacket.parse(first)
    let c = try RTPPacket.parse(third)
    XCTAssertEqual(a.header.payloadType, 120)
    XCTAssertEqual(a.header.ssrc, bridge.webRTCSSRC)
    XCTAssertEqual(c.header.sequenceNumber &- a.header.sequenceNumber, 2, "the gap stays")
    XCTAssertEqual(c.header.timestamp &- a.header.timestamp, 3000)
    XCTAssertEqual(a.payload, [0x10, 0x00, 0x9d, 0x01, 0x2a])
    XCTAssertNil(
      bridge.receiveFromSIP(try packet(pt: 97, ssrc: 77, seq: 13, ts: 15000), now: now),
      "H.264 is not passed")
    let out = try XCTUnwrap(
      bridge.receiveFromWebRTC(try packet(pt: 120, ssrc: 5, seq: 1, ts: 1), now: now))
    XCTAssertEqual(try RTPPacket.parse(out).header.payloadType, 100)
    XCTAssertEqual(try RTPPacket.parse(out).header.ssrc, bridge.sipSSRC)
    bridge.holding = true
    XCTAssertNil(bridge.receiveFromWebRTC(try packet(pt: 120, ssrc: 5, seq: 2, ts: 2), now: now))
    XCTAssertNil(bridge.receiveFromSIP(try packet(pt: 100, ssrc: 77, seq: 14, ts: 2), now: now))
    XCTAssertEqual(bridge.statistics.packetsToWebRTC, 2)
    XCTAssertEqual(bridge.statistics.packetsToSIP, 1)
    XCTAssertEqual(bridge.statistics.packetsDropped, 1)
  }

  func testKeyFrameRequestsCrossOverAsPLIOrFIR() throws {
    var generator = SystemRandomNumberGenerator()
    let firOnly = try XCTUnwrap(SIPVideoDescription.parse(baresipOffer))
    var bridge = CallVideoBridge(webRTCPayloadType: 120, sip: firOnly, using: &generator)
    XCTAssertNil(bridge.keyFrameRequestForSIP(), "no SIP source to name yet")
    _ = bridge.receiveFromSIP(
      try packet(pt: 100, ssrc: 77, seq: 1, ts: 1), now: .milliseconds(0))
    let firstFIR = try XCTUnwrap(bridge.keyFrameRequestForSIP())
    let secondFIR = try XCTUnwrap(bridge.keyFrameRequestForSIP())
    let entries = [firstFIR, secondFIR].compactMap { bytes -> RTCPFullIntraRequestEntry? in
      for case .fullIntraRequest(let fir) in RTCPPacket.parseCompoundLeniently(bytes).packets {
        return fir.entries.first
      }
      return nil
    }
    XCTAssertEqual(entries.map(\.ssrc), [77, 77])
    XCTAssertEqual(entries[1].sequenceNumber &- entries[0].sequenceNumber, 1)

    var pliToo = firOnly
    pliToo.pictureLossIndication = true
    var other = CallVideoBridge(webRTCPayloadType: 120, sip: pliToo, using: &generator)
    _ = other.receiveFromSIP(try packet(pt: 100, ssrc: 99, seq: 1, ts: 1), now: .milliseconds(0))
    let pli = RTCPPacket.parseCompoundLeniently(try XCTUnwrap(other.keyFrameRequestForSIP()))
    XCTAssertTrue(
      pli.packets.contains(
        .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: other.rtcpSSRC, mediaSSRC: 99))
      ))

    func request(_ packet: RTCPPacket) throws -> [UInt8] {
      try RTCPPacket.serializeCompound([.receiverReport(RTCPReceiverReport(ssrc: 3)), packet])
    }
    XCTAssertTrue(
      bridge.sipAsksForKeyFrame(
        try request(
          .pictureLossIndication(
            RTCPPictureLossIndication(senderSSRC: 3, mediaSSRC: bridge.sipSSRC)))))
    XCTAssertTrue(
      bridge.sipAsksForKeyFrame(
        try request(
          .fullIntraRequest(
            RTCPFullIntraRequest(
              senderSSRC: 3,
              entries: [RTCPFullIntraRequestEntry(ssrc: bridge.sipSSRC, sequenceNumber: 1)])))))
    XCTAssertFalse(
      bridge.sipAsksForKeyFrame(
        try request(
          .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 3, mediaSSRC: 12345)))),
      "a request for another source")
    XCTAssertTrue(
      bridge.webRTCAsksForKeyFrame(
        try request(
          .pictureLossIndication(
            RTCPPictureLossIndication(senderSSRC: 3, mediaSSRC: bridge.webRTCSSRC)))))
    XCTAssertEqual(bridge.statistics.keyFrameRequestsFromSIP, 2)
    XCTAssertEqual(bridge.statistics.keyFrameRequestsToSIP, 2)
  }
}
