import Foundation
import XCTest

@testable import ExampleSupport

/// The honest parts of a summary on synthetic inputs: freezes from arrival times, the decoded
/// share, the pass/fail limits, the frame rate from RTP timestamps, and the audio delay of a
/// periodic or a distinctive sound.
final class PlaybackReportTests: XCTestCase {
  /// Pictures at 30 fps from 1.7 s to 3.0 s and from 4.2 s to 5.0 s after PLAYING at 1.0 s:
  /// the 0.7 s wait for the first picture and the 1.2 s hole are freezes, the last 0.2 s is not.
  func testFreezesCountTheWaitForTheFirstPictureAndTheHoles() {
    var meter = FreezeMeter()
    for index in 0...39 { meter.picture(at: 1.7 + Double(index) / 30) }
    let beforeHole = meter.last ?? 0
    for index in 0...24 { meter.picture(at: 4.2 + Double(index) / 30) }
    XCTAssertEqual(meter.pictures, 65)
    let report = meter.report(from: 1.0, to: 5.2)
    XCTAssertEqual(report.count, 2)
    XCTAssertEqual(report.longest, 4.2 - beforeHole, accuracy: 1e-9)
    XCTAssertEqual(report.pictures, 65)
    XCTAssertEqual(report.description, String(format: "2 (longest %.3f s)", 4.2 - beforeHole))

    // A still picture at the end of the run is a freeze too, and can be the longest.
    let frozenEnd = meter.report(from: 1.0, to: 8.0)
    XCTAssertEqual(frozenEnd.count, 3)
    XCTAssertEqual(frozenEnd.longest, 8.0 - (meter.last ?? 0), accuracy: 1e-9)
  }

  /// A steady 30 fps stream has no freeze; a gap of exactly 0.5 s is not one either; nothing
  /// played makes the whole run one freeze.
  func testFreezeThresholdAndARunWithoutPictures() {
    var steady = FreezeMeter()
    for index in 0..<90 { steady.picture(at: 0.1 + Double(index) / 30) }
    let report = steady.report(from: 0.0, to: 3.05)
    XCTAssertEqual(report.count, 0)
    XCTAssertEqual(report.longest, 0.1, accuracy: 1e-9)
    XCTAssertEqual(report.description, "0 (longest gap 0.100 s)")

    var edge = FreezeMeter()
    edge.picture(at: 1.0)
    edge.picture(at: 1.5)
    XCTAssertEqual(edge.report(from: 1.0, to: 1.5).count, 0)
    edge.picture(at: 2.0001)
    XCTAssertEqual(edge.report(from: 1.0, to: 2.0001).count, 1)

    let empty = FreezeMeter().report(from: 0.25, to: 6.25)
    XCTAssertEqual(empty, FreezeReport(count: 1, longest: 6, pictures: 0))
    // A picture rendered just before PLAYING was marked makes no negative gap; the still
    // picture after it counts from its arrival.
    var early = FreezeMeter()
    early.picture(at: 0.9)
    XCTAssertEqual(early.report(from: 1.0, to: 1.2).longest, 0.3, accuracy: 1e-9)
  }

  /// 8 of 174 sent is 4.6 %; against the frame rate, 150 of 6 s at 30 fps is 83.3 %; a receiver
  /// cannot have more than all of it.
  func testDecodedShareAgainstTheSenderOrTheFrameRate() {
    let sent = DecodedShare.ofSent(decoded: 8, sent: 174)
    XCTAssertEqual(sent.percent, 800.0 / 174, accuracy: 1e-9)
    XCTAssertEqual(sent.description, "8 / 174 sent (4.6 %)")
    let due = DecodedShare.ofDue(decoded: 150, seconds: 6, frameRate: 30)
    XCTAssertEqual(due.expected, 180)
    XCTAssertEqual(due.percent, 150.0 * 100 / 180, accuracy: 1e-9)
    XCTAssertEqual(due.description, "150 / 180 due at 30 fps (83.3 %)")
    XCTAssertEqual(DecodedShare.ofSent(decoded: 241, sent: 240).percent, 100)
    XCTAssertEqual(DecodedShare.ofSent(decoded: 0, sent: 0).percent, 0)
    XCTAssertEqual(DecodedShare.ofDue(decoded: 3, seconds: .infinity, frameRate: 30).expected, 0)
  }

  /// The demo's verdict: below 90 % decoded or a freeze over 2 s fails, with both reasons;
  /// exactly at the limits passes.
  func testLimitsFailFewFramesAndLongFreezes() {
    let limits = PlaybackLimits()
    let calm = FreezeReport(count: 0, longest: 0.3, pictures: 232)
    XCTAssertEqual(limits.failures(share: .ofSent(decoded: 232, sent: 240), freezes: calm), [])
    XCTAssertEqual(limits.failures(share: .ofSent(decoded: 90, sent: 100), freezes: calm), [])
    let atLimit = FreezeReport(count: 1, longest: 2.0, pictures: 90)
    XCTAssertEqual(limits.failures(share: .ofSent(decoded: 90, sent: 100), freezes: atLimit), [])

    let frozen = FreezeReport(count: 1, longest: 5.25, pictures: 8)
    let reasons = limits.failures(share: .ofSent(decoded: 8, sent: 174), freezes: frozen)
    XCTAssertEqual(
      reasons,
      [
        "only 4.6 % of the frames were decoded (8 / 174 sent; at least 90 % needed)",
        "the video froze for 5.250 s (more than 2 s)",
      ])
    let strict = PlaybackLimits(minDecodedPercent: 99, maxFreeze: 0.25)
    XCTAssertEqual(
      strict.failures(share: .ofSent(decoded: 97, sent: 100), freezes: calm, kind: "audio frames"),
      [
        "only 97.0 % of the audio frames were decoded (97 / 100 sent; at least 99 % needed)",
        "the video froze for 0.300 s (more than 0.25 s)",
      ])
  }

  /// The most common RTP step gives the frame rate: lost frames (double steps) and a wrapped
  /// timestamp do not move it.
  func testFrameRateFromRTPTimestampsIgnoresLostFrames() {
    var estimate = FrameRateEstimate()
    XCTAssertNil(estimate.framesPerSecond)
    var timestamp = UInt32.max - 20_000
    for index in 0..<60 {
      estimate.picture(rtpTimestamp: timestamp)
      timestamp &+= index % 5 == 4 ? 7500 : 3750
    }
    XCTAssertEqual(estimate.framesPerSecond ?? 0, 24, accuracy: 1e-9)

    // Capture jitter around 3000 ticks averages to 30 fps; a steady 29.97 fps stays 29.97.
    var jittery = FrameRateEstimate()
    var jitteryTimestamp: UInt32 = 0
    for index in 0..<90 {
      jittery.picture(rtpTimestamp: jitteryTimestamp)
      jitteryTimestamp &+= [2990, 3010, 3002, 2998, 3000][index % 5]
    }
    XCTAssertEqual(jittery.framesPerSecond ?? 0, 30, accuracy: 1e-9)
    var ntsc = FrameRateEstimate()
    for index in 0..<90 { ntsc.picture(rtpTimestamp: UInt32(index * 3003)) }
    XCTAssertEqual(ntsc.framesPerSecond ?? 0, 90_000.0 / 3003, accuracy: 1e-9)
  }

  /// `seconds` of 48 kHz audio from `sample(i)`.
  private func audio(seconds: Double, _ sample: (Int) -> Double) -> [Int16] {
    (0..<Int(seconds * 48_000)).map { Int16(clamping: Int(sample($0).rounded())) }
  }

  /// The played audio of `source` when it plays `delay` seconds behind a video that arrives
  /// `videoOffset` seconds after the source time, starting at `playedStart`.
  private func played(
    _ source: [Int16], playedStart: Double, videoOffset: Double, delay: Double
  ) -> [Int16] {
    let first = Int(((playedStart - videoOffset - delay) * 48_000).rounded())
    return Array(source[first..<first + 2 * 48_000])
  }

  /// Noise delayed by 37 ms measures 37 ms (±5 ms), as distinctive and not periodic.
  func testNoiseDelayIsMeasured() throws {
    var state: UInt32 = 12_345
    let noise = audio(seconds: 4) { _ in
      state = state &* 1_664_525 &+ 1_013_904_223
      return Double(Int32(bitPattern: state) >> 19)
    }
    let source = SourceMedia(frames: [], audio: noise, audioStart: 0, frameRate: 30)
    let report = try XCTUnwrap(
      AudioDelayReport.measure(
        played: played(noise, playedStart: 0.75, videoOffset: 0.2, delay: 0.037),
        playedStart: 0.75, source: source, videoOffset: 0.2))
    XCTAssertEqual(report.delay, 0.037, accuracy: 0.005)
    XCTAssertFalse(report.periodic)
    XCTAssertFalse(report.ambiguous)
    XCTAssertGreaterThan(report.distinctness, 0.5)
  }

  /// A steady 440 Hz tone matches every period alike: periodic, whatever lag won.
  func testSteadyToneIsPeriodic() throws {
    let tone = audio(seconds: 4) { 8000 * sin(2 * Double.pi * 440 * Double($0) / 48_000) }
    let source = SourceMedia(frames: [], audio: tone, audioStart: 0, frameRate: 30)
    let report = try XCTUnwrap(
      AudioDelayReport.measure(
        played: played(tone, playedStart: 0.75, videoOffset: 0.2, delay: 0.037),
        playedStart: 0.75, source: source, videoOffset: 0.2))
    XCTAssertTrue(report.periodic)
    XCTAssertTrue(report.ambiguous)
  }
}
