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
    XCTAssertEqual(tracker.rolloverCount, 0)
    // The first number goes one cycle up.
    XCTAssertEqual(tracker.extend(65534), 65534 + 65536)
    XCTAssertEqual(tracker.extend(65535), 65535 + 65536)
    XCTAssertEqual(tracker.extend(0), 2 * 65536)
    XCTAssertEqual(tracker.rolloverCount, 1)
    // Reordered packet from before the wrap keeps the old cycle and does not move `highest`.
    XCTAssertEqual(tracker.extend(65533), 65533 + 65536)
    XCTAssertEqual(tracker.highest, 2 * 65536)
    XCTAssertEqual(tracker.extend(10), 2 * 65536 + 10)
    // Two more full cycles in steps.
    var value: Int64 = 0
    for step in 1...(2 * 65536 / 1000) {
      value = tracker.extend(UInt16(truncatingIfNeeded: 10 + step * 1000))
    }
    XCTAssertEqual(value, 2 * 65536 + 10 + Int64(2 * 65536 / 1000) * 1000)
    XCTAssertEqual(tracker.rolloverCount, value >> 16 - 1)
  }

  func testPacketBeforeTheFirstAcrossZeroStaysPositiveAndOlder() {
    var tracker = RTPExtendedSequenceNumber()
    XCTAssertEqual(tracker.extend(2), 65538)
    XCTAssertEqual(tracker.extend(65535), 65535)
    XCTAssertEqual(tracker.highest, 65538)
  }

  func testHalfTheCircleAheadCountsAsOlder() {
    var tracker = RTPExtendedSequenceNumber()
    _ = tracker.extend(0)
    XCTAssertEqual(tracker.extended(0x7FFF), 65536 + 0x7FFF)
    XCTAssertEqual(tracker.extended(0x8000), 65536 - 0x8000)
  }

  func testLookingDoesNotRecordAndRestartAndResetStartOver() {
    var tracker = RTPExtendedSequenceNumber()
    XCTAssertEqual(tracker.extended(7), 65543)
    XCTAssertNil(tracker.highest)
    tracker.record(65543)
    tracker.record(65540)
    XCTAssertEqual(tracker.highest, 65543)
    tracker.restart(at: 200_000)
    XCTAssertEqual(tracker.highest, 200_000)
    XCTAssertEqual(tracker.extended(UInt16(truncatingIfNeeded: 199_999)), 199_999)
    tracker.reset()
    XCTAssertNil(tracker.highest)
    XCTAssertEqual(tracker.extend(1), 65537)
  }
}
