import XCTest

@testable import WCSLocalServer

/// Times a pulled source chooses may be any 64-bit value: `av_rescale_q` returns `Int64.min`
/// for a pts it cannot represent (found while writing `scripts/fuzz.sh pull`; the corpus keeps
/// both inputs as `crash-audio-pts-int64-min` and `crash-timeline-wrapped-anchor`).
final class PulledTimingLimitTests: XCTestCase {
  func testAnAudioBlockAtATimeNearTheEndsOfInt64IsRefusedNotOverflowed() {
    var framer = PulledAudioFramer(channels: 1)
    let block = [Int16](repeating: 3, count: 1024)
    XCTAssertEqual(framer.add(block, time: 1000).map(\.time), [1000])
    // Int64.min - 2024 used to trap (the whole server with it).
    XCTAssertTrue(framer.add(block, time: .min).isEmpty)
    XCTAssertTrue(framer.add(block, time: .max).isEmpty)
    XCTAssertTrue(framer.add(block, time: PulledAudioFramer.maxTime + 1).isEmpty)
    XCTAssertEqual(framer.expectedTime, 2024, "the refused blocks left the timeline alone")
    XCTAssertEqual(framer.discontinuities, 0)
    XCTAssertEqual(framer.add(block, time: nil).map(\.time), [1960])
    XCTAssertEqual(
      framer.add(block, time: PulledAudioFramer.maxTime).map(\.time), [PulledAudioFramer.maxTime],
      "a time at the bound is a jump")
    XCTAssertEqual(framer.discontinuities, 1)
  }

  func testATimeWhoseDifferenceOverflowsIsAJumpNotAWrappedDrift() {
    var timeline = PulledTimeline()
    XCTAssertTrue(timeline.observe(.min + 10, at: 100))
    // Int64.max - 10 - (Int64.min + 10) wraps to -21 µs: the anchor used to be kept.
    XCTAssertTrue(timeline.observe(.max - 10, at: 200))
    XCTAssertEqual(timeline.anchor?.media, .max - 10)
    XCTAssertFalse(timeline.observe(.max - 5, at: 205), "5 µs later, on time")
    XCTAssertTrue(timeline.observe(.min, at: 300))
  }
}
