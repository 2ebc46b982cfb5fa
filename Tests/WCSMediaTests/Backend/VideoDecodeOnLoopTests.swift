import Foundation
import Synchronization
import XCTest

@testable import WCSCodecs
@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSProtocols

/// A played track's video decoded on the event loop (`VideoReceiveTrack` with a loop): the
/// pictures are the decoder's, in order, on the loop while it is cheap, on the queue when the
/// renderer makes it expensive, and never after `stop`.
final class VideoDecodeOnLoopTests: XCTestCase {
  private final class Collector: VideoRenderer {
    struct Rendered {
      var frame: VideoFrame
      var onLoop: Bool
    }
    let loop: EventLoop
    let frames = Mutex<[Rendered]>([])
    /// Sleeps `slowFor` seconds while rendering the frames at these positions.
    let slow: Set<Int>
    let slowFor: Double

    init(loop: EventLoop, slow: Set<Int> = [], slowFor: Double = 0) {
      self.loop = loop
      self.slow = slow
      self.slowFor = slowFor
    }

    func render(_ frame: VideoFrame) {
      let position = frames.withLock { frames in
        frames.append(Rendered(frame: frame, onLoop: loop.inEventLoop))
        return frames.count - 1
      }
      if slow.contains(position) {
        Thread.sleep(forTimeInterval: slowFor)
      }
    }
  }

  private static let frameInterval = VP8TestStream.frameInterval

  private func stream(count: Int) throws -> (packets: [[ReceivedRTPPacket]], pictures: [I420Image])
  {
    let stream = try VP8TestStream(count: count)
    return (stream.packets, stream.pictures)
  }

  /// Hands each frame's packets to the track on the loop, waiting for the queue in between so
  /// where each picture decodes does not depend on timing.
  private func play(
    _ packets: [[ReceivedRTPPacket]], to track: VideoReceiveTrack, on loop: EventLoop
  ) {
    for frame in packets {
      loop.submit { track.handle(frame, now: loop.mediaNow()) }
      track.queue.sync {}
    }
  }

  /// Hands each frame's packets to the track on the loop one frame interval apart, as they
  /// would arrive.
  private func playInRealTime(
    _ packets: [[ReceivedRTPPacket]], to track: VideoReceiveTrack, on loop: EventLoop
  ) {
    for frame in packets {
      loop.submit { track.handle(frame, now: loop.mediaNow()) }
      Thread.sleep(forTimeInterval: Double(Self.frameInterval) / 90_000)
    }
  }

  /// A lip sync whose audio, captured at NTP `now`, plays now, while the first picture (RTP 0)
  /// was captured 200 ms later: video would come out 200 ms ahead, so it is held that long.
  private static func videoAheadOfAudio() -> PlayoutSync {
    let sync = PlayoutSync()
    let captured = NTPTimestamp(date: Date())
    let videoCaptured = NTPTimestamp(seconds: captured.seconds + 0.2)
    sync.senderReport(isVideo: false, (ntp: captured, rtpTimestamp: 4_800), clockRate: 48_000)
    sync.senderReport(isVideo: true, (ntp: videoCaptured, rtpTimestamp: 0), clockRate: 90_000)
    _ = sync.audioPlayed(
      timestamp: 4_800 &+ PlayoutSync.opusEncoderDelay, appliedExtraDelay: .zero, at: .now())
    return sync
  }

  private func assertMatches(
    _ rendered: [Collector.Rendered], _ pictures: [I420Image], file: StaticString = #filePath,
    line: UInt = #line
  ) {
    XCTAssertEqual(rendered.count, pictures.count, file: file, line: line)
    for (index, (shown, picture)) in zip(rendered, pictures).enumerated() {
      XCTAssertEqual(
        shown.frame.timestampNs, Int64(index) * Int64(Self.frameInterval) * 100_000 / 9,
        "frame \(index) out of order", file: file, line: line)
      XCTAssertEqual(
        [UInt8](shown.frame.dataY), picture.y, "frame \(index) luma", file: file, line: line)
      XCTAssertEqual(
        [UInt8](shown.frame.dataU), picture.u, "frame \(index) Cb", file: file, line: line)
    }
  }

  func testCheapPicturesDecodeOnTheLoopAndMatchAnIndependentDecoder() throws {
    let loop = EventLoop(label: "test.decodeOnLoop")
    let (packets, pictures) = try stream(count: 40)
    let renderer = Collector(loop: loop)
    // A generous limit: this test is about where and what, not about this machine's speed.
    let track = try VideoReceiveTrack(
      renderer: renderer, loop: loop, inlineCostLimit: .seconds(1)
    ) {}
    play(packets, to: track, on: loop)
    let rendered = renderer.frames.withLock { $0 }
    assertMatches(rendered, pictures)
    // The first picture goes to the queue (no cost known yet), every later one to the loop.
    XCTAssertEqual(rendered.map(\.onLoop), [false] + Array(repeating: true, count: 39))
    XCTAssertEqual(track.picturesDecodedOnLoop, 39)
    XCTAssertEqual(track.statistics.framesDecoded, 40)
    loop.submit { track.stop() }
  }

  func testWithoutALoopEveryPictureDecodesOnTheQueue() throws {
    let loop = EventLoop(label: "test.decodeOnQueue")
    let (packets, pictures) = try stream(count: 12)
    let renderer = Collector(loop: loop)
    let track = try VideoReceiveTrack(renderer: renderer, loop: nil) {}
    play(packets, to: track, on: loop)
    let rendered = renderer.frames.withLock { $0 }
    assertMatches(rendered, pictures)
    XCTAssertFalse(rendered.contains(where: \.onLoop))
    XCTAssertEqual(track.picturesDecodedOnLoop, 0)
  }

  func testASlowRendererMovesDecodingToTheQueueAndBackInOrder() throws {
    let loop = EventLoop(label: "test.decodeSlow")
    let (packets, pictures) = try stream(count: 60)
    // Frames 10..<15 take 40 ms to render: their average cost passes the 4 ms limit, so the
    // following pictures go to the queue until the average (an eighth per picture) decays.
    let renderer = Collector(loop: loop, slow: Set(10..<15), slowFor: 0.040)
    let track = try VideoReceiveTrack(renderer: renderer, loop: loop) {}
    play(packets, to: track, on: loop)
    let rendered = renderer.frames.withLock { $0 }
    assertMatches(rendered, pictures)
    let places = rendered.map(\.onLoop)
    // Right after the slow ones, the queue; by the end, the loop again.
    XCTAssertEqual(places[15..<20], [false, false, false, false, false])
    XCTAssertEqual(places.last, true)
    XCTAssertEqual(track.picturesDecodedOnLoop, places.filter { $0 }.count)
  }

  /// Pictures held for lip sync (video ahead of the audio by 200 ms) are released by a timer of
  /// the loop, not a job on the queue: a pending release does not send the next pictures to the
  /// queue, so every picture after the first is decoded and rendered on the loop, in order,
  /// each held about the extra delay.
  func testPicturesHeldForLipSyncStayOnTheLoop() throws {
    let loop = EventLoop(label: "test.decodeHeld")
    let (packets, pictures) = try stream(count: 24)
    let renderer = Collector(loop: loop)
    let sync = Self.videoAheadOfAudio()
    let track = try VideoReceiveTrack(
      renderer: renderer, playoutSync: sync, loop: loop, inlineCostLimit: .seconds(1)
    ) {}
    playInRealTime(packets, to: track, on: loop)
    XCTAssertTrue(eventually { renderer.frames.withLock { $0.count } == pictures.count })
    let rendered = renderer.frames.withLock { $0 }
    assertMatches(rendered, pictures)
    let extraDelay = sync.videoExtraDelay
    XCTAssertGreaterThan(extraDelay, .milliseconds(150), "video held for the audio")
    // The first picture decodes on the queue (no cost known yet) and is shown at once (no
    // delay known yet); every later one decodes on the loop and is released there.
    XCTAssertEqual(track.picturesDecodedOnLoop, pictures.count - 1)
    XCTAssertEqual(rendered.dropFirst().map(\.onLoop), Array(repeating: true, count: 23))
    let stats = track.statistics
    XCTAssertEqual(stats.framesDecoded, pictures.count)
    loop.submit { track.stop() }
  }

  /// Pictures held for lip sync are rendered by the release timer, outside the decode whose
  /// cost decides where a picture goes: with a slow renderer (10 ms a picture, over the 4 ms
  /// limit) the releases move to the queue once one was measured, as a slow decode does,
  /// rather than holding the loop (and the audio turns and packets of every stream on it).
  func testHeldPicturesOfASlowRendererAreReleasedOnTheQueue() throws {
    let loop = EventLoop(label: "test.decodeHeldSlow")
    let (packets, pictures) = try stream(count: 24)
    let renderer = Collector(loop: loop, slow: Set(0..<24), slowFor: 0.010)
    let sync = Self.videoAheadOfAudio()
    let track = try VideoReceiveTrack(renderer: renderer, playoutSync: sync, loop: loop) {}
    playInRealTime(packets, to: track, on: loop)
    XCTAssertTrue(eventually { renderer.frames.withLock { $0.count } == pictures.count })
    let rendered = renderer.frames.withLock { $0 }
    assertMatches(rendered, pictures)
    XCTAssertGreaterThan(sync.videoExtraDelay, .milliseconds(150), "video held for the audio")
    // At most the first release (no cost known yet) renders on the loop.
    XCTAssertLessThanOrEqual(rendered.filter(\.onLoop).count, 2, "\(rendered.map(\.onLoop))")
    loop.submit { track.stop() }
  }

  func testNothingIsRenderedAfterStop() throws {
    let loop = EventLoop(label: "test.decodeStop")
    let (packets, _) = try stream(count: 10)
    let renderer = Collector(loop: loop)
    let track = try VideoReceiveTrack(
      renderer: renderer, loop: loop, inlineCostLimit: .seconds(1)
    ) {}
    play(Array(packets[0..<5]), to: track, on: loop)
    loop.submit { track.stop() }
    play(Array(packets[5...]), to: track, on: loop)
    XCTAssertEqual(renderer.frames.withLock { $0.count }, 5)
  }
}

/// `EventLoopWorkBudget`: the decaying load and what it allows.
final class EventLoopWorkBudgetTests: XCTestCase {
  func testLoadDecaysWithTheWindowAndBoundsWhatMayRun() {
    let loop = EventLoop(label: "WorkBudgetTests")
    let budget = EventLoopWorkBudget(thread: loop.thread, share: 0.25, window: .seconds(1))
    // Loop-confined: used on its loop.
    loop.submit { checkLoad(of: budget) }
    loop.shutdown()
  }

  private func checkLoad(of budget: EventLoopWorkBudget) {
    let start = MediaInstant.now()
    XCTAssertEqual(budget.utilization(at: start), 0)
    XCTAssertTrue(budget.allows(.milliseconds(250), at: start))
    XCTAssertFalse(budget.allows(.milliseconds(251), at: start))
    budget.record(.milliseconds(200), endingAt: start)
    XCTAssertEqual(budget.utilization(at: start), 0.2, accuracy: 1e-9)
    XCTAssertTrue(budget.allows(.milliseconds(40), at: start))
    XCTAssertFalse(budget.allows(.milliseconds(60), at: start))
    // One time constant later the load is 1/e of what it was.
    let later = start + .seconds(1)
    XCTAssertEqual(budget.utilization(at: later), 0.2 / M_E, accuracy: 1e-9)
    XCTAssertTrue(budget.allows(.milliseconds(170), at: later))
    XCTAssertFalse(budget.allows(.milliseconds(180), at: later))
    // An instant before the last update does not make the load grow back.
    XCTAssertEqual(budget.utilization(at: start), 0.2 / M_E, accuracy: 1e-9)
    budget.record(.milliseconds(-5), endingAt: later)
    XCTAssertEqual(budget.utilization(at: later), 0.2 / M_E, accuracy: 1e-9)
  }
}
