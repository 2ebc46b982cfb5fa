import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// Hostile targets for the audio turn: `AudioDelayLine.process(_:target:)` in place (each
/// output frame written over its input frame, also while a delay is held), the seconds since
/// the origin that `PlayoutSynchronizer` now takes from `PlayoutInstant` offsets, and
/// `AudioReceiveTrack.nextTurn` on offsets — on targets at the hysteresis edges to the
/// attosecond, negative and huge, flipping both ways each turn, empty turns, frames whose layout
/// changes (mono, stereo, empty), origins thousands of years from the offsets' origin and frames
/// due years away; against `ReferenceAudioDelayLine`, `AVSync`'s instant API and
/// `AudioTurnScheduleTests.reference`.
final class InPlaceAudioPlayoutTests: XCTestCase {
  /// Targets where the line's decisions change: each side of the hysteresis around 0, 1 and
  /// 2 steps, to the attosecond; negative; huge.
  private static let edgeTargets: [Duration] = {
    let step = AudioDelayLine.step
    let hysteresis = AudioDelayLine.hysteresis
    var targets: [Duration] = [
      .zero, .seconds(-10), Duration(attoseconds: -1), .seconds(3), .seconds(1_000_000),
      Duration(attoseconds: Int128(Int64.max)),
    ]
    for steps in 0...2 {
      let center = step * steps
      for edge in [center + hysteresis, center - hysteresis] {
        targets += [edge, edge + Duration(attoseconds: 1), edge - Duration(attoseconds: 1)]
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
      var target = Duration.zero
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
          // A target wandering by attoseconds to tens of milliseconds, both ways.
          target += Duration(
            attoseconds: Int128(
              Int64.random(in: -30_000_000_000_000_000...30_000_000_000_000_000, using: &random)))
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
    print("in-place delay line: \(totals)")
    XCTAssertGreaterThan(totals.grown, 500)
    XCTAssertGreaterThan(totals.shrunk, 500)
    XCTAssertGreaterThan(totals.passedThrough, 500)
    XCTAssertGreaterThan(totals.empty, 2_000)
    XCTAssertGreaterThan(totals.mismatched, 20)
  }

  /// A synchronizer whose origin sits thousands of years from `PlayoutInstant.origin`, at an
  /// odd attosecond, decides exactly as one whose origin is the offsets' own, on the same
  /// events at the same times since the origin (times to the attosecond, going back now and
  /// then, hours apart); and its played offset is, to the last bit, what `AVSync` fed the same
  /// SRs and events through its instant API gives.
  func testSynchronizerSecondsAreExactFarFromTheOffsetOrigin() {
    var random = SplitMix64(seed: 0x5EC0_4D5F)
    var totals = (events: 0, updates: 0, measured: 0)
    for run in 0..<60 {
      let configuration = PlayoutSynchronizer.Configuration(
        maxExtraDelay: .milliseconds(Int.random(in: 0...1_500, using: &random)),
        maxChangePerSecond: .milliseconds(Int.random(in: 0...200, using: &random)),
        updateInterval: Duration(
          attoseconds: Int128(Int64.random(in: 0...300_000_000_000_000_000, using: &random))),
        alignsAtStart: Bool.random(using: &random),
        smoothing: Double.random(in: 0...1, using: &random))
      let near = PlayoutInstant.origin.advanced(
        by: Duration(attoseconds: Int128(Int64.random(in: -1_000...1_000, using: &random))))
      let years = Int128(Int64.random(in: -(1 << 40)...(1 << 40), using: &random))
      let far = PlayoutInstant.origin.advanced(
        by: Duration(
          attoseconds: years * 1_000_000_000_000_000_000
            + Int128(Int64.random(in: 0..<1_000_000_000_000_000_000, using: &random))))
      var nearSync = PlayoutSynchronizer(configuration: configuration, now: near)
      var farSync = PlayoutSynchronizer(configuration: configuration, now: far)
      var reference = AVSync(now: far)
      // Local time since the origins, attoseconds; the sender's clock starts at `senderStart`.
      var time: Int128 = 0
      let senderStart = Double.random(in: 3_000_000_000...3_900_000_000, using: &random)
      for event in 0..<400 {
        switch Int.random(in: 0..<20, using: &random) {
        case 0: time -= Int128(Int64.random(in: 0...50_000_000_000_000_000, using: &random))
        case 1:
          time += Int128(Int64.random(in: 0...7_200, using: &random)) * 1_000_000_000_000_000_000
        default: time += Int128(Int64.random(in: 0...40_000_000_000_000_000, using: &random))
        }
        let seconds = Double(time) / 1e18
        let offset = Duration(attoseconds: time)
        let context = "run \(run), event \(event)"
        // Sender times a little before now (the streams' delays: up to 2 s, differing).
        let captured = seconds - Double.random(in: 0...2, using: &random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1:
          let isVideo = Bool.random(using: &random)
          let rate = isVideo ? 90_000 : 48_000
          let ntp = NTPTimestamp(seconds: senderStart + captured)
          let rtp = UInt32(truncatingIfNeeded: Int64(captured * Double(rate)))
          nearSync.senderReport(
            isVideo ? .video : .audio, ntp: ntp, rtpTimestamp: rtp, clockRate: rate)
          farSync.senderReport(
            isVideo ? .video : .audio, ntp: ntp, rtpTimestamp: rtp, clockRate: rate)
          if isVideo {
            reference.updateVideo(senderReport: ntp, rtpTimestamp: rtp, clockRate: rate)
          } else {
            reference.updateAudio(senderReport: ntp, rtpTimestamp: rtp, clockRate: rate)
          }
        case 2, 3, 4:
          let rtp = UInt32(truncatingIfNeeded: Int64(captured * 48_000))
          let applied = Duration(
            attoseconds: Int128(Int64.random(in: 0...1_000_000_000_000_000_000, using: &random)))
          nearSync.audioPlayed(
            rtpTimestamp: rtp, appliedExtraDelay: applied, at: near.advanced(by: offset))
          farSync.audioPlayed(
            rtpTimestamp: rtp, appliedExtraDelay: applied, at: far.advanced(by: offset))
          reference.audioPlayed(rtpTimestamp: rtp, at: far.advanced(by: offset))
        case 5, 6, 7:
          let rtp = UInt32(truncatingIfNeeded: Int64(captured * 90_000))
          let applied = Duration(
            attoseconds: Int128(Int64.random(in: 0...1_000_000_000_000_000_000, using: &random)))
          nearSync.videoRendered(
            rtpTimestamp: rtp, appliedExtraDelay: applied, at: near.advanced(by: offset))
          farSync.videoRendered(
            rtpTimestamp: rtp, appliedExtraDelay: applied, at: far.advanced(by: offset))
          reference.videoRendered(rtpTimestamp: rtp, at: far.advanced(by: offset))
        default:
          nearSync.update(now: near.advanced(by: offset))
          farSync.update(now: far.advanced(by: offset))
        }
        XCTAssertEqual(farSync.playedOffset, reference.offset, context)
        XCTAssertEqual(farSync.playedOffset, nearSync.playedOffset, context)
        XCTAssertEqual(farSync.relativeDelay, nearSync.relativeDelay, context)
        XCTAssertEqual(farSync.audioExtraDelay, nearSync.audioExtraDelay, context)
        XCTAssertEqual(farSync.videoExtraDelay, nearSync.videoExtraDelay, context)
        guard farSync.playedOffset == reference.offset,
          farSync.relativeDelay == nearSync.relativeDelay
        else { return }
        totals.events += 1
        if farSync.playedOffset != nil { totals.measured += 1 }
        if farSync.audioExtraDelay != .zero || farSync.videoExtraDelay != .zero {
          totals.updates += 1
        }
      }
    }
    print("synchronizer far from the origin: \(totals)")
    XCTAssertGreaterThan(totals.measured, 10_000)
    XCTAssertGreaterThan(totals.updates, 5_000)
  }

  /// `nextTurn` on offsets against the instant formula where the arithmetic is most fragile:
  /// `now` thousands of years from the offsets' origin at odd attoseconds, frames due years
  /// before or after it, and exactly on a 20 ms slot of the schedule, or one attosecond on
  /// either side.
  func testNextTurnFarAwayAndOnSlotEdges() {
    var random = SplitMix64(seed: 0x7E57_0FF5)
    let interval = AudioReceiveTrack.frameInterval
    let advance = AudioReceiveTrack.playoutAdvance
    for round in 0..<50_000 {
      let years = Int128(Int64.random(in: -(1 << 40)...(1 << 40), using: &random))
      let now = PlayoutInstant.origin.advanced(
        by: Duration(
          attoseconds: years * 1_000_000_000_000_000_000
            + Int128(Int64.random(in: 0..<1_000_000_000_000_000_000, using: &random))))
      var due: Duration
      switch Int.random(in: 0..<4, using: &random) {
      case 0:
        // Years before or after.
        due = .seconds(Int64.random(in: -(1 << 30)...(1 << 30), using: &random))
      case 1:
        // On a slot edge, a whole number of slots before now (up to an hour of them).
        due = interval * -Int.random(in: 0...180_000, using: &random)
      default:
        due =
          interval * -Int.random(in: 0...180_000, using: &random)
          + Duration(attoseconds: Bool.random(using: &random) ? 1 : -1)
      }
      // `due` is where the turn's schedule sits: the frame is due `advance` later.
      let frameDue = now + due + advance
      let expected = AudioTurnScheduleTests.reference(frameDue: frameDue, now: now)
      let turn = AudioReceiveTrack.nextTurn(
        frameDue: PlayoutInstant.offset(of: frameDue), after: now)
      XCTAssertEqual(turn, expected, "round \(round), due \(due)")
      guard turn == expected else { return }
    }
  }
}
