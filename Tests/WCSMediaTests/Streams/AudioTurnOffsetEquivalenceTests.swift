import TestSupport
import XCTest

@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// The audio playout turn in `PlayoutInstant` offsets (audioturn) against the instant
/// arithmetic it replaced: the next turn's instant, the clock read as an offset, and the lip
/// sync fed offsets instead of instants.
final class AudioTurnOffsetEquivalenceTests: XCTestCase {
  func testNextTurnInOffsetsIsTheInstantArithmetic() {
    var random = SplitMix64(seed: 0xA0D1_0707)
    let base = PlayoutInstant.origin + .seconds(3)
    for step in 0..<20_000 {
      let now = base + .nanoseconds(Int64(random.next() % 4_000_000_000))
      // Due ahead, behind by many slots, on slot boundaries, or playout not begun.
      let frameDue: ContinuousClock.Instant?
      switch random.next() % 5 {
      case 0: frameDue = nil
      case 1: frameDue = now + .milliseconds(Int64(random.next() % 20) * 20)
      case 2: frameDue = now - .milliseconds(Int64(random.next() % 200) * 20 - 10)
      default: frameDue = now + .nanoseconds(Int64(random.next() % 2_000_000_000) - 1_000_000_000)
      }
      let expected = AudioTurnScheduleTests.reference(frameDue: frameDue, now: now)
      let offsets = AudioReceiveTrack.nextTurn(
        frameDue: frameDue.map(PlayoutInstant.offset(of:)), at: PlayoutInstant.offset(of: now))
      XCTAssertEqual(PlayoutInstant.instant(at: offsets), expected, "step \(step)")
      XCTAssertEqual(
        AudioReceiveTrack.nextTurn(frameDue: frameDue.map(PlayoutInstant.offset(of:)), after: now),
        expected, "step \(step)")
    }
    // One written out: due 5 ms ago, so the turn is the first 20 ms slot after now.
    let now = PlayoutInstant.offset(of: base)
    XCTAssertEqual(
      AudioReceiveTrack.nextTurn(frameDue: now + .milliseconds(5), at: now),
      now + .milliseconds(15))
  }

  func testFrameAttosecondsIsTheFrameDuration() {
    XCTAssertEqual(Duration(attoseconds: AudioReceiver.frameAttoseconds), .milliseconds(20))
    XCTAssertEqual(AudioReceiver.frameDuration, .milliseconds(20))
    XCTAssertEqual(
      Duration(attoseconds: AudioReceiveTrack.playoutAdvanceAttoseconds),
      AudioReceiveTrack.playoutAdvance)
  }

  func testClockReadAsAnOffsetIsTheInstantsOffset() {
    for _ in 0..<1_000 {
      let before = PlayoutInstant.offset(of: ContinuousClockReading.now())
      let read = PlayoutInstant.now()
      let after = PlayoutInstant.offset(of: ContinuousClockReading.now())
      XCTAssertLessThanOrEqual(before, read)
      XCTAssertLessThanOrEqual(read, after)
    }
  }

  /// A synchronizer fed offsets against one fed the same instants, and the played offset
  /// against `AVSync` fed instants, over a seeded run: SRs, frames played and rendered at
  /// irregular times, extra delays applied, timestamps wrapping.
  func testLipSyncFedOffsetsMatchesInstants() {
    var random = SplitMix64(seed: 0x11B5_7AC0)
    let start = ContinuousClock.now
    var byOffset = PlayoutSynchronizer(now: start)
    var byInstant = PlayoutSynchronizer(now: start)
    var reference = AVSync(now: start)
    var audioTimestamp = UInt32.max - 48_000
    var videoTimestamp: UInt32 = 0x7FFF_0000
    var now = start
    for step in 0..<5_000 {
      now = now + .microseconds(Int64(random.next() % 30_000))
      let seconds = 3_900_000_000 + Double(step) / 50
      switch random.next() % 8 {
      case 0:
        for sync in [0, 1] {
          var target = sync == 0 ? byOffset : byInstant
          target.senderReport(
            .audio, ntp: NTPTimestamp(seconds: seconds), rtpTimestamp: audioTimestamp,
            clockRate: 48_000)
          target.senderReport(
            .video, ntp: NTPTimestamp(seconds: seconds + 0.04), rtpTimestamp: videoTimestamp,
            clockRate: 90_000)
          if sync == 0 { byOffset = target } else { byInstant = target }
        }
        reference.updateAudio(
          senderReport: NTPTimestamp(seconds: seconds), rtpTimestamp: audioTimestamp,
          clockRate: 48_000)
        reference.updateVideo(
          senderReport: NTPTimestamp(seconds: seconds + 0.04), rtpTimestamp: videoTimestamp,
          clockRate: 90_000)
      case 1, 2, 3:
        videoTimestamp &+= 3_000 + UInt32(random.next() % 200)
        let held = Duration.milliseconds(Int64(random.next() % 80))
        byOffset.videoRendered(
          rtpTimestamp: videoTimestamp, appliedExtraDelay: held,
          atOffset: PlayoutInstant.offset(of: now))
        byInstant.videoRendered(rtpTimestamp: videoTimestamp, appliedExtraDelay: held, at: now)
        reference.videoRendered(rtpTimestamp: videoTimestamp, at: now)
      default:
        audioTimestamp &+= 960
        let applied = byOffset.audioExtraDelay
        byOffset.audioPlayed(
          rtpTimestamp: audioTimestamp, appliedExtraDelay: applied,
          atOffset: PlayoutInstant.offset(of: now))
        byInstant.audioPlayed(rtpTimestamp: audioTimestamp, appliedExtraDelay: applied, at: now)
        reference.audioPlayed(rtpTimestamp: audioTimestamp, at: now)
      }
      XCTAssertEqual(byOffset.playedOffset, reference.offset, "step \(step)")
      XCTAssertEqual(byOffset.playedOffset, byInstant.playedOffset, "step \(step)")
      XCTAssertEqual(byOffset.audioExtraDelay, byInstant.audioExtraDelay, "step \(step)")
      XCTAssertEqual(byOffset.videoExtraDelay, byInstant.videoExtraDelay, "step \(step)")
      XCTAssertEqual(byOffset.relativeDelay, byInstant.relativeDelay, "step \(step)")
    }
    XCTAssertNotNil(reference.offset)
    XCTAssertNotNil(byOffset.relativeDelay)
  }
}
