import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

final class TransportWideCCTests: XCTestCase {
  /// A generator's feedback survives RTCP encoding and parsing unchanged, small, large and
  /// negative deltas and losses included, and the sender reads back the arrival times.
  func testFeedbackRoundTripsThroughRTCP() throws {
    var generator = TransportFeedbackGenerator(interval: 100_000)
    // Arrivals in µs: 1 ms apart, one 80 ms gap (large delta), one reordered, one lost (#3).
    let arrivals: [(UInt16, Int64)] = [
      (0, 1_000_000), (1, 1_001_000), (2, 1_002_000), (5, 1_082_000), (4, 1_081_000),
    ]
    for (sequenceNumber, time) in arrivals {
      generator.onPacketReceived(transportSequenceNumber: sequenceNumber, arrivalTime: time)
    }
    let descriptions = generator.flush()
    let description = try XCTUnwrap(descriptions.first)
    XCTAssertEqual(description.packetStatuses.count, 6)
    XCTAssertEqual(description.packetStatuses[3], .notReceived)

    let rtcp = TransportWideCC.feedback(description, senderSSRC: 7, mediaSSRC: 9)
    let bytes = try RTCPPacket.serializeCompound([.transportWideFeedback(rtcp)])
    guard case .transportWideFeedback(let parsed) = try RTCPPacket.parseCompound(bytes).first
    else { return XCTFail("not a transport-wide feedback") }
    XCTAssertEqual(parsed, rtcp)
    let back = TransportWideCC.description(of: parsed)
    XCTAssertEqual(back, description)
    let feedback = back.packetFeedbacks()
    XCTAssertEqual(feedback.map(\.transportSequenceNumber), [0, 1, 2, 3, 4, 5])
    XCTAssertNil(feedback[3].arrivalTime)
    let times = feedback.compactMap(\.arrivalTime)
    XCTAssertEqual(times[1] - times[0], .milliseconds(1))
    XCTAssertEqual(times[3] - times[2], .milliseconds(79))  // #4 arrived 79 ms after #2
  }

  /// The sequence number rides in a one-byte header extension element with the negotiated
  /// id (RFC 8285), and the id is read from the answer's `a=extmap`.
  func testSequenceNumberExtensionAndNegotiatedID() throws {
    var header = RTPHeader(
      marker: false, payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3)
    TransportWideCC.stamp(&header, id: 3, sequenceNumber: 0xABCD)
    let packet = RTPPacket(header: header, payload: [1, 2, 3])
    let parsed = try RTPPacket.parse(try packet.serialized())
    XCTAssertEqual(TransportWideCC.sequenceNumber(in: parsed.header, id: 3), 0xABCD)
    XCTAssertNil(TransportWideCC.sequenceNumber(in: parsed.header, id: 5))

    let answer = try SDPParser.parse(
      [
        "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0",
        "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=rtpmap:96 VP8/90000",
        "a=extmap:5 \(TransportWideCC.uri)", "",
      ].joined(separator: "\r\n")
    ).description
    XCTAssertEqual(TransportWideCC.extensionID(in: answer), 5)
  }

  /// The first element with the id counts, and only with a 2-octet value; other forms have none.
  func testSequenceNumberTakesTheFirstElementOfTheIDInEitherForm() {
    func header(_ headerExtension: RTPHeaderExtension?) -> RTPHeader {
      RTPHeader(
        payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3,
        headerExtension: headerExtension)
    }
    let first = RTPHeaderExtensionElement(id: 3, value: [0x12, 0x34])
    let second = RTPHeaderExtensionElement(id: 3, value: [0x56, 0x78])
    let other = RTPHeaderExtensionElement(id: 2, value: [9])
    XCTAssertEqual(
      TransportWideCC.sequenceNumber(in: header(.oneByte([other, first, second])), id: 3), 0x1234)
    XCTAssertEqual(
      TransportWideCC.sequenceNumber(in: header(.twoByte(appBits: 0, [second, first])), id: 3),
      0x5678)
    XCTAssertNil(
      TransportWideCC.sequenceNumber(
        in: header(.oneByte([RTPHeaderExtensionElement(id: 3, value: [1]), second])), id: 3),
      "the first element of the id has 1 octet")
    XCTAssertNil(TransportWideCC.sequenceNumber(in: header(.oneByte([other])), id: 3))
    XCTAssertNil(
      TransportWideCC.sequenceNumber(
        in: header(.generic(profile: 0x1234, data: [0x30, 0x12, 0x34, 0])), id: 3))
    XCTAssertNil(TransportWideCC.sequenceNumber(in: header(nil), id: 3))
  }
}
