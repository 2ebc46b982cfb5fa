import XCTest

@testable import WCSMedia
@testable import WCSRecording

final class WebMTrackTests: XCTestCase {
  func testTimelineUnwrapsPast2To32AndStartsAtZero() {
    var timeline = RecordingTimeline()
    XCTAssertEqual(timeline.ticks(for: 4_294_964_296), 0)  // 2^32 - 3000
    XCTAssertEqual(timeline.ticks(for: 0), 3000)
    XCTAssertEqual(timeline.ticks(for: 3000), 6000)
    XCTAssertEqual(timeline.ticks(for: 1500), 4500)  // late packet: before the previous one
  }

  func testEachPacketGetsTheStepToTheNextAsDuration() {
    var track = WebMTrack(clockRate: 90_000, defaultDurationTicks: 3000)
    XCTAssertEqual(track.push([1], timestamp: 100, isKeyFrame: true), .accepted(ready: nil))
    XCTAssertEqual(
      track.push([2], timestamp: 3100, isKeyFrame: false),
      .accepted(ready: .init(bytes: [1], ticks: 0, durationTicks: 3000, isKeyFrame: true)))
    XCTAssertEqual(
      track.push([3], timestamp: 9100, isKeyFrame: false),
      .accepted(ready: .init(bytes: [2], ticks: 3000, durationTicks: 6000, isKeyFrame: false)))
    XCTAssertEqual(track.push([4], timestamp: 6100, isKeyFrame: false), .droppedOutOfOrder)
    // The last packet keeps the previous step as its duration.
    XCTAssertEqual(
      track.flush(), .init(bytes: [3], ticks: 9000, durationTicks: 6000, isKeyFrame: false))
    XCTAssertNil(track.flush())
  }

  func testAKnownPacketDurationIsUsedForTheLastPacket() {
    var track = WebMTrack(clockRate: 48_000, defaultDurationTicks: 960)
    _ = track.push([1], timestamp: 0, isKeyFrame: true, knownDurationTicks: 960)
    _ = track.push([2], timestamp: 960, isKeyFrame: true, knownDurationTicks: 1920)
    XCTAssertEqual(track.flush()?.durationTicks, 1920)
  }

  func testOpusHeadLayout() {
    // RFC 7845 §5.1: magic, version 1, channels, pre-skip LE, rate LE, gain LE, family.
    XCTAssertEqual(
      OpusHead.bytes(channels: 2, inputSampleRate: 48_000),
      [
        0x4F, 0x70, 0x75, 0x73, 0x48, 0x65, 0x61, 0x64, 0x01, 0x02, 0x38, 0x01, 0x80, 0xBB,
        0x00, 0x00, 0x00, 0x00, 0x00,
      ])
  }
}
