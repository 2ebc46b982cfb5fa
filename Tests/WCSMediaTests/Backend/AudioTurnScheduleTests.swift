import TestSupport
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// `AudioReceiveTrack.nextTurn` computed on `PlayoutInstant` offsets against the formula on
/// `ContinuousClock.Instant`s it replaced: the same instant for frames due long before, just
/// before, at and after `now` (whole-nanosecond times as the clock gives, and odd attoseconds),
/// far from the offsets' origin on both sides, and before playout begins.
final class AudioTurnScheduleTests: XCTestCase {
  /// The formula before: on instants.
  static func reference(frameDue: ContinuousClock.Instant?, now: ContinuousClock.Instant)
    -> ContinuousClock.Instant
  {
    guard let frameDue else { return now + AudioReceiveTrack.frameInterval }
    let due = frameDue - AudioReceiveTrack.playoutAdvance
    guard due <= now else { return due }
    let slots = Int((now - due) / AudioReceiveTrack.frameInterval) + 1
    return due + AudioReceiveTrack.frameInterval * slots
  }

  func testNextTurnMatchesTheInstantFormula() {
    var random = SplitMix64(seed: 0x7E57_A0D1)
    let origin = PlayoutInstant.origin
    var slotsSeen = Set<Int>()
    for round in 0..<200_000 {
      // `now` up to ±3 days from the origin, in whole nanoseconds (the clock's) or not.
      let nanoseconds = Int64.random(in: -259_200_000_000_000...259_200_000_000_000, using: &random)
      var now = origin + .nanoseconds(nanoseconds)
      if round % 4 == 0 {
        now =
          now + Duration(attoseconds: Int128(Int64.random(in: 0..<1_000_000_000, using: &random)))
      }
      // The frame due from 2 s before to 100 ms after `now`; on slot boundaries now and then.
      var lead: Duration
      switch Int.random(in: 0..<4, using: &random) {
      case 0:
        lead = .milliseconds(Int.random(in: -2_000...100, using: &random))
      case 1:
        lead = .nanoseconds(Int64.random(in: -2_000_000_000...100_000_000, using: &random))
      case 2:
        lead =
          AudioReceiveTrack.playoutAdvance - AudioReceiveTrack.frameInterval
          * Int.random(in: 0...100, using: &random)
      default:
        lead = Duration(
          attoseconds: Int128(Int64.random(in: -2_000_000_000...100_000_000, using: &random))
            * 1_000_000_000 + Int128(Int64.random(in: -999_999_999...999_999_999, using: &random)))
      }
      let frameDue = now + lead
      let expected = Self.reference(frameDue: frameDue, now: now)
      let turn = AudioReceiveTrack.nextTurn(
        frameDue: PlayoutInstant.offset(of: frameDue), after: now)
      XCTAssertEqual(turn, expected, "round \(round)")
      guard turn == expected else { return }
      XCTAssertGreaterThan(turn, now - AudioReceiveTrack.frameInterval)
      slotsSeen.insert(
        Int(
          (expected - (frameDue - AudioReceiveTrack.playoutAdvance))
            / AudioReceiveTrack.frameInterval))
    }
    XCTAssertGreaterThan(slotsSeen.count, 90, "turns from the frame's own slot to 100 slots on")
    let now = origin + .seconds(12)
    XCTAssertEqual(
      AudioReceiveTrack.nextTurn(frameDue: nil, after: now), Self.reference(frameDue: nil, now: now)
    )
    XCTAssertEqual(AudioReceiveTrack.nextTurn(frameDue: nil, after: now), now + .milliseconds(20))
  }
}
