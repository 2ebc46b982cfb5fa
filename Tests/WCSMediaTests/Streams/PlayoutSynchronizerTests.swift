import XCTest

@testable import WCSCodecs
@testable import WCSMedia
@testable import WCSProtocols

/// Lip sync decisions on a virtual clock: a sender whose SRs map both RTP clocks to one NTP
/// clock, and receive paths of known delay that apply the extra delay the synchronizer asks for.
final class PlayoutSynchronizerTests: XCTestCase {
  /// One sender and its two receive paths; times in seconds of the virtual clock.
  struct Paths {
    /// Capture-to-play delay of audio without extra delay.
    var audioDelay: Double
    /// Capture-to-render delay of video without extra delay.
    var videoDelay: Double
    var audioOffset: UInt32 = 0x0000_1000
    var videoOffset: UInt32 = 0x2000_0000
    var sendsAudioReports = true
    var sendsVideoReports = true
    /// NTP seconds of the sender at virtual time 0 (its clock is unrelated to ours).
    var ntpBase = 3_900_000_000.25

    func audioTimestamp(_ capture: Double) -> UInt32 {
      audioOffset &+ UInt32(truncatingIfNeeded: Int64((capture * 48_000).rounded()))
    }

    func videoTimestamp(_ capture: Double) -> UInt32 {
      videoOffset &+ UInt32(truncatingIfNeeded: Int64((capture * 90_000).rounded()))
    }
  }

  /// Runs the 10 ms ticks `from ..< to` (in ticks): an SR of each stream every second, an audio
  /// frame played every 20 ms and a video frame rendered every 30 ms, each delayed by its path
  /// plus the extra delay the synchronizer asked for.
  func run(_ sync: inout PlayoutSynchronizer, ticks: Range<Int>, _ paths: Paths) {
    for tick in ticks {
      let now = Double(tick) / 100
      if tick % 100 == 0 {
        if paths.sendsAudioReports {
          sync.senderReport(
            .audio, ntp: NTPTimestamp(seconds: paths.ntpBase + now),
            rtpTimestamp: paths.audioTimestamp(now), clockRate: 48_000)
        }
        if paths.sendsVideoReports {
          sync.senderReport(
            .video, ntp: NTPTimestamp(seconds: paths.ntpBase + now),
            rtpTimestamp: paths.videoTimestamp(now), clockRate: 90_000)
        }
      }
      if tick % 2 == 0 {
        let extra = sync.audioExtraDelay
        let capture = now - paths.audioDelay - extra.seconds
        if capture >= 0 {
          sync.audioPlayed(
            rtpTimestamp: paths.audioTimestamp(capture), appliedExtraDelay: extra,
            at: virtualTime(now))
        }
      }
      if tick % 3 == 0 {
        let extra = sync.videoExtraDelay
        let capture = now - paths.videoDelay - extra.seconds
        if capture >= 0 {
          sync.videoRendered(
            rtpTimestamp: paths.videoTimestamp(capture), appliedExtraDelay: extra,
            at: virtualTime(now))
        }
      }
    }
  }

  func testAudioAheadGetsTheDifferenceAtOnceAtStart() throws {
    var sync = PlayoutSynchronizer(
      configuration: .init(minimumSenderReports: 2))
    let paths = Paths(audioDelay: 0.040, videoDelay: 0.165)
    run(&sync, ticks: 0..<99, paths)
    // Nothing before the second SR of each stream (the first may predate the media).
    XCTAssertNil(sync.relativeDelay)
    XCTAssertEqual(sync.audioExtraDelay, .zero)
    run(&sync, ticks: 99..<200, paths)
    XCTAssertEqual(sync.audioExtraDelay.seconds, 0.125, accuracy: 0.001)
    XCTAssertEqual(sync.videoExtraDelay, .zero)
    XCTAssertEqual(try XCTUnwrap(sync.relativeDelay), 0.125, accuracy: 0.001)
    // As played, audio now comes out with the video.
    XCTAssertEqual(try XCTUnwrap(sync.playedOffset), 0, accuracy: 0.002)
    run(&sync, ticks: 200..<1000, paths)
    XCTAssertEqual(sync.audioExtraDelay.seconds, 0.125, accuracy: 0.001)
    XCTAssertEqual(try XCTUnwrap(sync.playedOffset), 0, accuracy: 0.002)
  }

  func testVideoAheadGetsVideoDelay() throws {
    var sync = PlayoutSynchronizer()
    run(&sync, ticks: 0..<200, Paths(audioDelay: 0.200, videoDelay: 0.060))
    XCTAssertEqual(sync.audioExtraDelay, .zero)
    XCTAssertEqual(sync.videoExtraDelay.seconds, 0.140, accuracy: 0.001)
    XCTAssertEqual(try XCTUnwrap(sync.relativeDelay), -0.140, accuracy: 0.001)
    XCTAssertEqual(try XCTUnwrap(sync.playedOffset), 0, accuracy: 0.002)
  }

  func testWithoutStartAlignmentMovesAtMost20msPerSecondAndConverges() throws {
    var sync = PlayoutSynchronizer(
      configuration: .init(alignsAtStart: false, minimumSenderReports: 2))
    let paths = Paths(audioDelay: 0.040, videoDelay: 0.165)
    run(&sync, ticks: 0..<200, paths)
    // First decision at the second SRs (1 s): at most 20 ms/s since.
    XCTAssertGreaterThan(sync.audioExtraDelay.seconds, 0.010)
    XCTAssertLessThanOrEqual(sync.audioExtraDelay.seconds, 0.0201)
    run(&sync, ticks: 200..<400, paths)
    XCTAssertLessThanOrEqual(sync.audioExtraDelay.seconds, 0.0601)
    XCTAssertGreaterThan(sync.audioExtraDelay.seconds, 0.050)
    // 125 ms at 20 ms/s: there within 7.5 s, and it stays.
    run(&sync, ticks: 400..<900, paths)
    XCTAssertEqual(sync.audioExtraDelay.seconds, 0.125, accuracy: 0.001)
    run(&sync, ticks: 900..<1200, paths)
    XCTAssertEqual(sync.audioExtraDelay.seconds, 0.125, accuracy: 0.001)
    XCTAssertEqual(sync.videoExtraDelay, .zero)
    XCTAssertEqual(try XCTUnwrap(sync.playedOffset), 0, accuracy: 0.002)
  }

  func testChangeAfterAlignmentIsSlewed() throws {
    var sync = PlayoutSynchronizer()
    var paths = Paths(audioDelay: 0.040, videoDelay: 0.165)
    run(&sync, ticks: 0..<300, paths)
    XCTAssertEqual(sync.audioExtraDelay.seconds, 0.125, accuracy: 0.001)
    // The video path grows by 100 ms: audio follows at 20 ms/s, not in one jump.
    paths.videoDelay = 0.265
    run(&sync, ticks: 300..<400, paths)
    XCTAssertGreaterThan(sync.audioExtraDelay.seconds, 0.130)
    XCTAssertLessThanOrEqual(sync.audioExtraDelay.seconds, 0.147)
    run(&sync, ticks: 400..<1000, paths)
    XCTAssertEqual(sync.audioExtraDelay.seconds, 0.225, accuracy: 0.001)
    XCTAssertEqual(try XCTUnwrap(sync.playedOffset), 0, accuracy: 0.002)
  }

  func testExtraDelayIsCappedAtOneSecond() throws {
    var sync = PlayoutSynchronizer()
    run(&sync, ticks: 0..<400, Paths(audioDelay: 0.040, videoDelay: 2.040))
    XCTAssertEqual(sync.audioExtraDelay.seconds, 1.0, accuracy: 1e-9)
    XCTAssertEqual(sync.videoExtraDelay, .zero)
    XCTAssertEqual(try XCTUnwrap(sync.relativeDelay), 2.0, accuracy: 0.001)
    // What cannot be made up stays visible.
    XCTAssertEqual(try XCTUnwrap(sync.playedOffset), 1.0, accuracy: 0.002)
  }

  func testStreamWithoutSenderReportIsLeftAlone() {
    var sync = PlayoutSynchronizer()
    var paths = Paths(audioDelay: 0.040, videoDelay: 0.165)
    paths.sendsVideoReports = false
    run(&sync, ticks: 0..<500, paths)
    XCTAssertNil(sync.playedOffset)
    XCTAssertNil(sync.relativeDelay)
    XCTAssertEqual(sync.audioExtraDelay, .zero)
    XCTAssertEqual(sync.videoExtraDelay, .zero)
  }

  func testTimestampsWrappingPast2To32() throws {
    var sync = PlayoutSynchronizer()
    var paths = Paths(audioDelay: 0.040, videoDelay: 0.165)
    // Audio wraps 0.5 s in, video 1.3 s in, between SRs and played frames.
    paths.audioOffset = UInt32.max - 24_000
    paths.videoOffset = UInt32.max - 117_000
    run(&sync, ticks: 0..<300, paths)
    XCTAssertEqual(sync.audioExtraDelay.seconds, 0.125, accuracy: 0.001)
    XCTAssertEqual(try XCTUnwrap(sync.playedOffset), 0, accuracy: 0.002)
  }

  func testBogusSenderReportIsIgnored() {
    var sync = PlayoutSynchronizer()
    let paths = Paths(audioDelay: 0.040, videoDelay: 0.165)
    // Video SRs 100 s off the audio's.
    for _ in 0..<2 {
      sync.senderReport(
        .audio, ntp: NTPTimestamp(seconds: paths.ntpBase), rtpTimestamp: paths.audioTimestamp(0),
        clockRate: 48_000)
      sync.senderReport(
        .video, ntp: NTPTimestamp(seconds: paths.ntpBase + 100),
        rtpTimestamp: paths.videoTimestamp(0), clockRate: 90_000)
    }
    sync.audioPlayed(
      rtpTimestamp: paths.audioTimestamp(1), appliedExtraDelay: .zero, at: virtualTime(1.04))
    sync.videoRendered(
      rtpTimestamp: paths.videoTimestamp(1), appliedExtraDelay: .zero, at: virtualTime(1.165))
    XCTAssertNotNil(sync.playedOffset)
    XCTAssertNil(sync.relativeDelay)
    XCTAssertEqual(sync.audioExtraDelay, .zero)
    XCTAssertEqual(sync.videoExtraDelay, .zero)
  }

  // MARK: - Delay line and render queue

  func frame(_ index: Int) -> PCMAudioFrame {
    PCMAudioFrame(
      samples: Array(repeating: Int16(index), count: 960), channels: 1,
      timestamp: UInt32(1000 + index * 960))
  }

  func testAudioDelayLineGrowsByRepeatingAFrameAndShrinksByDropping() {
    var line = AudioDelayLine()
    // 125 ms: six 20 ms frames (120 ms, within the 12 ms hysteresis).
    var played: [PCMAudioFrame] = []
    var timestamps: [UInt32?] = []
    for index in 0..<10 {
      let output = line.process([frame(index)], target: .milliseconds(125))
      XCTAssertEqual(output.frames.count, 1, "one frame out per frame in")
      played += output.frames
      timestamps.append(output.playedTimestamp)
    }
    XCTAssertEqual(line.delay, .milliseconds(120))
    XCTAssertTrue(played.prefix(6).allSatisfy { $0.samples.allSatisfy { $0 == 0 } })
    XCTAssertEqual(played.suffix(4).map { Int($0.samples[0]) }, [0, 1, 2, 3])
    XCTAssertEqual(timestamps, [nil, nil, nil, nil, nil, nil, 1000, 1960, 2920, 3880])
    // Down to 40 ms: one frame dropped per frame played until two are held.
    var shrink: [Int] = []
    for index in 10..<16 {
      let output = line.process([frame(index)], target: .milliseconds(40))
      shrink += output.frames.map { Int($0.samples[0]) }
    }
    XCTAssertEqual(line.delay, .milliseconds(40))
    XCTAssertEqual(shrink, [5, 7, 9, 11, 12, 13])
    // Within the hysteresis of the held 40 ms: no change.
    let held = line.process([frame(16), frame(17)], target: .milliseconds(50))
    XCTAssertEqual(line.delay, .milliseconds(40))
    XCTAssertEqual(held.frames.map { Int($0.samples[0]) }, [14, 15])
    // Growing again repeats the last frame played (15), which names no new timestamp.
    let grown = line.process([frame(18)], target: .milliseconds(53))
    XCTAssertEqual(line.delay, .milliseconds(60))
    XCTAssertEqual(grown.frames.map(\.samples), [frame(15).samples])
    XCTAssertEqual(grown.frames.first?.timestamp, 0)
    XCTAssertNil(grown.playedTimestamp)
  }

  func testVideoRenderQueueHoldsFramesForTheExtraDelay() throws {
    var queue = VideoRenderQueue<Int>(capacity: 3)
    queue.push(1, decodedAt: virtualTime(1.0))
    XCTAssertEqual(queue.release(now: virtualTime(1.0), extraDelay: .zero).map(\.frame), [1])
    queue.push(2, decodedAt: virtualTime(2.0))
    queue.push(3, decodedAt: virtualTime(2.033))
    let deadline = try XCTUnwrap(queue.nextDeadline(extraDelay: .milliseconds(100)))
    XCTAssertEqual((deadline - virtualTime(2.1)).seconds, 0, accuracy: 1e-9)
    XCTAssertTrue(queue.release(now: virtualTime(2.05), extraDelay: .milliseconds(100)).isEmpty)
    let due = queue.release(now: virtualTime(2.1), extraDelay: .milliseconds(100))
    XCTAssertEqual(due.map(\.frame), [2])
    XCTAssertEqual(due.first?.heldFor.seconds ?? 0, 0.1, accuracy: 1e-9)
    // The delay shrinks: the held frame is due at once.
    XCTAssertEqual(queue.release(now: virtualTime(2.11), extraDelay: .zero).map(\.frame), [3])
    XCTAssertNil(queue.nextDeadline(extraDelay: .zero))
    // Over capacity the oldest goes out early.
    for index in 10..<14 { queue.push(index, decodedAt: virtualTime(3)) }
    XCTAssertEqual(queue.release(now: virtualTime(3), extraDelay: .seconds(1)).map(\.frame), [10])
    XCTAssertEqual(queue.count, 3)
  }
}
