import TestSupport
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// `AudioReceiveTrack.nextTurn` on `MediaInstant`s against the same formula on
/// `ContinuousClock.Instant`s and `Duration`s: the same instant for frames due long before, just
/// before, at and after `now`, on slot boundaries, and before playout begins.
final class AudioTurnScheduleTests: XCTestCase {
  /// The default turn advance (`ReceiveTuning.audioPlayoutAdvance`).
  static let advance = ReceiveTuning().audioPlayoutAdvance

  /// The formula on the standard library's instants.
  static func reference(frameDue: ContinuousClock.Instant?, now: ContinuousClock.Instant)
    -> ContinuousClock.Instant
  {
    let frameInterval = AudioReceiveTrack.frameInterval.duration
    guard let frameDue else { return now + frameInterval }
    let due = frameDue - Self.advance.duration
    guard due <= now else { return due }
    let slots = Int((now - due) / frameInterval) + 1
    return due + frameInterval * slots
  }

  func testNextTurnMatchesTheInstantFormula() {
    var random = SplitMix64(seed: 0x7E57_A0D1)
    let origin = MediaInstant.now() + .seconds(259_200)
    var slotsSeen = Set<Int>()
    for round in 0..<200_000 {
      // `now` up to ±3 days from the origin.
      let now =
        origin
        + .nanoseconds(Int64.random(in: -259_200_000_000_000...259_200_000_000_000, using: &random))
      // The frame due from 2 s before to 100 ms after `now`; on slot boundaries now and then.
      let lead: MediaDuration
      switch Int.random(in: 0..<3, using: &random) {
      case 0:
        lead = .milliseconds(Int.random(in: -2_000...100, using: &random))
      case 1:
        lead = .nanoseconds(Int64.random(in: -2_000_000_000...100_000_000, using: &random))
      default:
        lead =
          Self.advance - AudioReceiveTrack.frameInterval
          * Int.random(in: 0...100, using: &random)
      }
      let frameDue = now + lead
      let expected = Self.reference(
        frameDue: frameDue.continuousInstant, now: now.continuousInstant)
      let turn = AudioReceiveTrack.nextTurn(frameDue: frameDue, after: now, advance: Self.advance)
      XCTAssertEqual(turn.continuousInstant, expected, "round \(round)")
      guard turn.continuousInstant == expected else { return }
      XCTAssertGreaterThan(turn, now - AudioReceiveTrack.frameInterval)
      slotsSeen.insert(
        (turn - (frameDue - Self.advance)) / AudioReceiveTrack.frameInterval)
    }
    XCTAssertGreaterThan(slotsSeen.count, 90, "turns from the frame's own slot to 100 slots on")
    let now = origin + .seconds(12)
    XCTAssertEqual(
      AudioReceiveTrack.nextTurn(frameDue: nil, after: now, advance: Self.advance)
        .continuousInstant,
      Self.reference(frameDue: nil, now: now.continuousInstant))
    XCTAssertEqual(
      AudioReceiveTrack.nextTurn(frameDue: nil, after: now, advance: Self.advance),
      now + .milliseconds(20))
  }
}
