import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// Attacks on the audio turn's delay line: `AudioDelayLine.process(_:target:)` in place (each
/// output frame written over its input frame, also while a delay is held), on targets at the
/// hysteresis edges to the nanosecond, negative and huge, flipping both ways each turn, empty
/// turns, frames whose layout changes (mono, stereo, empty); against `ReferenceAudioDelayLine`.
final class AudioDelayLineInPlaceEdgeTests: XCTestCase {
  /// Targets where the line's decisions change: each side of the hysteresis around 0, 1 and
  /// 2 steps, to the nanosecond; negative; huge.
  private static let edgeTargets: [MediaDuration] = {
    let step = AudioDelayLine.step
    let hysteresis = AudioDelayLine.hysteresis
    var targets: [MediaDuration] = [
      .zero, .seconds(-10), .nanoseconds(-1), .seconds(3), .seconds(1_000_000), .max,
    ]
    for steps in 0...2 {
      let center = step * steps
      for edge in [center + hysteresis, center - hysteresis] {
        targets += [edge, edge + .nanoseconds(1), edge - .nanoseconds(1)]
      }
    }
    return targets
  }()

  func testInPlaceDelayLineMatchesOnEdgeTargetsAndChangingFrames() {
    var random = SplitMix64(seed: 0x4D1E_0A7D)
    var totals = (turns: 0, grown: 0, shrunk: 0, passedThrough: 0, empty: 0, mismatched: 0)
    for run in 0..<40 {
      var line = AudioDelayLine()
      var inPlace = AudioDelayLine()
      var reference = ReferenceAudioDelayLine()
      var timestamp = UInt32.max - UInt32.random(in: 0...20_000, using: &random)
      var target = MediaDuration.zero
      let mode = run % 4
      for step in 0..<600 {
        switch mode {
        case 0:
          // Flipping between an edge target and zero every turn: grow, then shrink, at once.
          target =
            step % 2 == 0
            ? Self.edgeTargets[Int.random(in: 0..<Self.edgeTargets.count, using: &random)] : .zero
        case 1:
          // Long stretches of one edge target.
          if Int.random(in: 0..<40, using: &random) == 0 {
            target = Self.edgeTargets[Int.random(in: 0..<Self.edgeTargets.count, using: &random)]
          }
        case 2:
          // A target wandering by nanoseconds to tens of milliseconds, both ways.
          target += .nanoseconds(Int64.random(in: -30_000_000...30_000_000, using: &random))
        default:
          target = Self.edgeTargets[Int.random(in: 0..<Self.edgeTargets.count, using: &random)]
        }
        // Empty turns often; mono and stereo frames; now and then a frame of another length
        // (what is played again is then silence).
        var input: [PCMAudioFrame] = []
        let channels = Int.random(in: 0..<25, using: &random) == 0 ? 2 : 1
        for _ in 0..<[0, 0, 1, 1, 1, 2, 3, 6][Int.random(in: 0..<8, using: &random)] {
          timestamp &+= 960
          let length = Int.random(in: 0..<30, using: &random) == 0 ? [0, 4][step % 2] : 8
          input.append(
            PCMAudioFrame(
              samples: (0..<length * channels).map { _ in
                Int16.random(in: .min ... .max, using: &random)
              },
              channels: channels,
              timestamp: Int.random(in: 0..<8, using: &random) == 0 ? 0 : timestamp))
        }
        let context = "run \(run), step \(step), target \(target)"
        let expected = reference.process(input, target: target)
        let output = line.process(input, target: target)
        XCTAssertEqual(output, expected, context)
        var frames = input
        // A second reference to the caller's array (as a sink keeping the turn's frames):
        // the in-place line must leave it alone.
        let kept = frames
        let delayBefore = inPlace.delay
        let played = inPlace.process(&frames, target: target)
        XCTAssertEqual(frames, expected.frames, context)
        XCTAssertEqual(played, expected.playedTimestamp, context)
        XCTAssertEqual(inPlace.delay, reference.delay, context)
        XCTAssertEqual(kept, input, context)
        guard frames == expected.frames, inPlace.delay == reference.delay else { return }
        totals.turns += 1
        if input.isEmpty { totals.empty += 1 }
        if frames == input, !input.isEmpty { totals.passedThrough += 1 }
        if inPlace.delay > delayBefore { totals.grown += 1 }
        if inPlace.delay < delayBefore { totals.shrunk += 1 }
        if zip(frames, input).contains(where: { $0.samples.count != $1.samples.count }) {
          totals.mismatched += 1
        }
      }
    }
    print("round four delay line attack: \(totals)")
    XCTAssertGreaterThan(totals.grown, 500)
    XCTAssertGreaterThan(totals.shrunk, 500)
    XCTAssertGreaterThan(totals.passedThrough, 500)
    XCTAssertGreaterThan(totals.empty, 2_000)
    XCTAssertGreaterThan(totals.mismatched, 20)
  }
}
