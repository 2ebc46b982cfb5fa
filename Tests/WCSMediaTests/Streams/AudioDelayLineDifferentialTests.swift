import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSMedia
@testable import WCSProtocols

/// `AudioDelayLine` (attosecond arithmetic and the pass-through path since perfpoll) against
/// the version it replaced, on seeded random targets (zero most of the time, as without lip
/// sync, then growing, shrinking and wavering around frame boundaries), frame batches of 0 to
/// 3 and concealed frames (timestamp 0): the same frames, played timestamp and delay; and the
/// in-place `process(_:target:)` the audio track uses.
final class AudioDelayLineDifferentialTests: XCTestCase {
  func testMatchesTheDurationVersionOnRandomTargets() {
    var random = SplitMix64(seed: 0xDE1A_7119)
    var line = AudioDelayLine()
    var reference = ReferenceAudioDelayLine()
    // `process(_:target:)` in place (the audio track's): the same frames and played timestamp.
    var inPlace = AudioDelayLine()
    var timestamp: UInt32 = 4_000_000_000
    var target = MediaDuration.zero
    var passedThrough = 0
    var grown = 0
    for step in 0..<20_000 {
      if Int.random(in: 0..<50, using: &random) == 0 {
        target =
          Bool.random(using: &random)
          ? .zero : .milliseconds(Int.random(in: 0...200, using: &random))
      } else if Int.random(in: 0..<20, using: &random) == 0 {
        target += .microseconds(Int.random(in: -15_000...15_000, using: &random))
      }
      var input: [PCMAudioFrame] = []
      for _ in 0..<Int.random(in: 0...3, using: &random) {
        timestamp &+= 960
        let concealed = Int.random(in: 0..<10, using: &random) == 0
        input.append(
          PCMAudioFrame(
            samples: (0..<8).map { _ in Int16.random(in: -100...100, using: &random) },
            channels: 1, timestamp: concealed ? 0 : timestamp))
      }
      let output = line.process(input, target: target)
      let expected = reference.process(input, target: target)
      XCTAssertEqual(output, expected, "step \(step)")
      XCTAssertEqual(line.delay, reference.delay, "step \(step)")
      var frames = input
      let played = inPlace.process(&frames, target: target)
      XCTAssertEqual(frames, expected.frames, "in place, step \(step)")
      XCTAssertEqual(played, expected.playedTimestamp, "in place, step \(step)")
      XCTAssertEqual(inPlace.delay, reference.delay, "in place, step \(step)")
      guard output == expected else { return }
      if line.delay == .zero, output.frames == input, !input.isEmpty { passedThrough += 1 }
      if output.frames.contains(where: { $0.timestamp == 0 }) { grown += 1 }
    }
    XCTAssertGreaterThan(passedThrough, 1_000)
    XCTAssertGreaterThan(grown, 1_000)
  }
}

/// `AudioDelayLine.process` as it was before perfpoll (`Duration` arithmetic, every frame
/// through `held`).
struct ReferenceAudioDelayLine {
  static let step: MediaDuration = .milliseconds(20)
  static let hysteresis: MediaDuration = .milliseconds(12)

  private var held: [PCMAudioFrame] = []
  private var lastPlayed: PCMAudioFrame?

  var delay: MediaDuration { Self.step * held.count }

  mutating func process(_ input: [PCMAudioFrame], target: MediaDuration) -> AudioDelayLine.Output {
    var output = AudioDelayLine.Output()
    for frame in input {
      held.append(frame)
      let current = Self.step * (held.count - 1)
      if target > current + Self.hysteresis {
        let repeated =
          lastPlayed.flatMap {
            $0.channels == frame.channels && $0.samples.count == frame.samples.count
              ? $0.samples : nil
          } ?? Array(repeating: 0, count: frame.samples.count)
        output.frames.append(
          PCMAudioFrame(samples: repeated, channels: frame.channels, timestamp: 0))
        continue
      }
      if target < current - Self.hysteresis, held.count >= 2 {
        held.removeFirst()
      }
      let played = held.removeFirst()
      lastPlayed = played
      if played.timestamp != 0 { output.playedTimestamp = played.timestamp }
      output.frames.append(played)
    }
    return output
  }
}
