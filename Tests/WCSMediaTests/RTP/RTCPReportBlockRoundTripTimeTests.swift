import XCTest

@testable import WCSProtocols

/// `RTCPReportBlock.roundTripTime(arrival:)`: A − LSR − DLSR (RFC 3550 §6.4.1).
final class RTCPReportBlockRoundTripTimeTests: XCTestCase {
  func testTheRFCExampleGivesSixAndAnEighthSeconds() throws {
    // RFC 3550 §6.4.1, figure 2: A 0xb710:8000, LSR 0xb705:2000, DLSR 0x0005:4000.
    let block = RTCPReportBlock(
      ssrc: 1, highestSequence: 0, lastSenderReport: 0xb705_2000,
      delaySinceLastSenderReport: 0x0005_4000)
    XCTAssertEqual(block.roundTripTime(arrival: 0xb710_8000), .milliseconds(6125))
  }

  func testNoSenderReportOrANegativeResultGivesNone() {
    let none = RTCPReportBlock(ssrc: 1, highestSequence: 0, delaySinceLastSenderReport: 10)
    XCTAssertNil(none.roundTripTime(arrival: 0xb710_8000))
    // DLSR longer than the time since the SR: clock skew or a bogus block.
    let skewed = RTCPReportBlock(
      ssrc: 1, highestSequence: 0, lastSenderReport: 0xb705_2000,
      delaySinceLastSenderReport: 0x0010_0000)
    XCTAssertNil(skewed.roundTripTime(arrival: 0xb710_8000))
  }
}
