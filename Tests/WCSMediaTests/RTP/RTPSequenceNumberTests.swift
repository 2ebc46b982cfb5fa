import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class RTPSequenceNumberTests: XCTestCase {
  func testWrapAwareComparison() {
    XCTAssertTrue(RTPSequenceNumber.isNewer(1, than: 0))
    XCTAssertTrue(RTPSequenceNumber.isNewer(0, than: 65535))
    XCTAssertTrue(RTPSequenceNumber.isNewer(5, than: 65530))
    XCTAssertFalse(RTPSequenceNumber.isNewer(65530, than: 5))
    XCTAssertFalse(RTPSequenceNumber.isNewer(7, than: 7))
    XCTAssertTrue(RTPSequenceNumber.isNewer(0x7FFF, than: 0))
    XCTAssertFalse(RTPSequenceNumber.isNewer(0x8000, than: 0))
    XCTAssertEqual(RTPSequenceNumber.distance(from: 65535, to: 2), 3)
    XCTAssertEqual(RTPSequenceNumber.distance(from: 2, to: 65535), -3)
  }

  func testExtendedSequenceCountsRollovers() {
    var tracker = RTPExtendedSequenceNumber()
    XCTAssertNil(tracker.highest)
    XCTAssertEqual(tracker.extend(65534), 65534)
    XCTAssertEqual(tracker.extend(65535), 65535)
    XCTAssertEqual(tracker.extend(0), 65536)
    XCTAssertEqual(tracker.rolloverCount, 1)
    // Reordered packet from before the wrap keeps the old cycle and does not move `highest`.
    XCTAssertEqual(tracker.extend(65533), 65533)
    XCTAssertEqual(tracker.highest, 65536)
    XCTAssertEqual(tracker.extend(10), 65546)
    // Two more full cycles in steps.
    var value: UInt32 = 0
    for step in 1...(2 * 65536 / 1000) {
      value = tracker.extend(UInt16(truncatingIfNeeded: 10 + step * 1000))
    }
    XCTAssertEqual(value, 65546 + UInt32(2 * 65536 / 1000) * 1000)
    XCTAssertEqual(tracker.rolloverCount, UInt16(value >> 16))
  }

  func testPacketBeforeFirstAcrossZeroDoesNotUnderflow() {
    var tracker = RTPExtendedSequenceNumber()
    XCTAssertEqual(tracker.extend(2), 2)
    XCTAssertEqual(tracker.extend(65535), 65535)
    XCTAssertEqual(tracker.highest, 2)
  }
}
