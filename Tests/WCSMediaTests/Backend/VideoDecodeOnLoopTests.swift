import Foundation
import Synchronization
import XCTest

@testable import WCSCodecs
@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSProtocols

/// A played track's video decoded where it was placed (`DecodePlacement`): the pictures are the
/// decoder's, in order, every one on the loop or every one on the queue, whatever the renderer
/// costs, and none after `stop`.
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

  /// A placement on the loop holding a tenth of it.
  private static let onLoop = DecodePlacement.loop(share: 0.1)

  func testPicturesOfATrackPlacedOnTheLoopDecodeThereAndMatchAnIndependentDecoder() throws {
    let loop = EventLoop(label: "test.decodeOnLoop")
    let (packets, pictures) = try stream(count: 40)
    let renderer = Collector(loop: loop)
    let track = try VideoReceiveTrack(renderer: renderer, loop: loop, placement: Self.onLoop) {}
    play(packets, to: track, on: loop)
    let rendered = renderer.frames.withLock { $0 }
    assertMatches(rendered, pictures)
    XCTAssertEqual(rendered.map(\.onLoop), Array(repeating: true, count: 40))
    XCTAssertEqual(track.picturesDecodedOnLoop, 40)
    XCTAssertEqual(track.statistics.framesDecoded, 40)
    loop.submit { track.stop() }
  }

  func testWithoutALoopEveryPictureDecodesOnTheQueue() throws {
    let loop = EventLoop(label: "test.decodeOnQueue")
    let (packets, pictures) = try stream(count: 12)
    let renderer = Collector(loop: loop)
    let track = try VideoReceiveTrack(renderer: renderer, loop: nil, placement: Self.onLoop) {}
    track.place(Self.onLoop)
    play(packets, to: track, on: loop)
    let rendered = renderer.frames.withLock { $0 }
    assertMatches(rendered, pictures)
    XCTAssertFalse(rendered.contains(where: \.onLoop))
    XCTAssertEqual(track.picturesDecodedOnLoop, 0)
  }

  /// `place` fixes the placement once: a second call, and a call after the track was placed at
  /// creation, change nothing, and neither holds a share of the loop twice.
  func testATrackIsPlacedOnceAndHoldsItsShareUntilStop() throws {
    let loop = EventLoop(label: "test.placeOnce")
    let renderer = Collector(loop: loop)
    let track = try VideoReceiveTrack(renderer: renderer, loop: loop) {}
    let (first, second, held) = loop.submit { () -> (DecodePlacement, DecodePlacement, Double) in
      track.place(.loop(share: 0.2))
      let first = track.placement
      track.place(.queue)
      track.place(.loop(share: 0.1))
      return (first, track.placement, loop.workBudget.heldShare)
    }
    XCTAssertEqual(first, .loop(share: 0.2))
    XCTAssertEqual(second, .loop(share: 0.2))
    XCTAssertEqual(held, 0.2, accuracy: 1e-12)
    loop.submit {
      track.stop()
      track.stop()
    }
    XCTAssertEqual(loop.submit { loop.workBudget.heldShare }, 0)
  }

  func testASlowRendererKeepsEachTrackWhereItWasPlaced() throws {
    for placement in [Self.onLoop, .queue] {
      let loop = EventLoop(label: "test.decodeSlow")
      let (packets, pictures) = try stream(count: 30)
      // Frames 10..<15 take 40 ms to render, ten times the inline cost limit: nothing moves.
      let renderer = Collector(loop: loop, slow: Set(10..<15), slowFor: 0.040)
      let track = try VideoReceiveTrack(renderer: renderer, loop: loop, placement: placement) {}
      play(packets, to: track, on: loop)
      let rendered = renderer.frames.withLock { $0 }
      assertMatches(rendered, pictures)
      XCTAssertEqual(
        rendered.map(\.onLoop), Array(repeating: placement != .queue, count: 30), "\(placement)")
      loop.submit { track.stop() }
    }
  }

  /// Pictures held for lip sync (video ahead of the audio by 200 ms) are released by a timer of
  /// the loop: on a track placed on the loop, every picture is decoded and rendered there, in
  /// order, each held about the extra delay.
  func testPicturesHeldForLipSyncStayOnTheLoop() throws {
    let loop = EventLoop(label: "test.decodeHeld")
    let (packets, pictures) = try stream(count: 24)
    let renderer = Collector(loop: loop)
    let sync = Self.videoAheadOfAudio()
    let track = try VideoReceiveTrack(
      renderer: renderer, playoutSync: sync, loop: loop, placement: Self.onLoop
    ) {}
    playInRealTime(packets, to: track, on: loop)
    XCTAssertTrue(eventually { renderer.frames.withLock { $0.count } == pictures.count })
    let rendered = renderer.frames.withLock { $0 }
    assertMatches(rendered, pictures)
    let extraDelay = sync.videoExtraDelay
    XCTAssertGreaterThan(extraDelay, .milliseconds(150), "video held for the audio")
    XCTAssertEqual(track.picturesDecodedOnLoop, pictures.count)
    XCTAssertEqual(rendered.map(\.onLoop), Array(repeating: true, count: 24))
    let stats = track.statistics
    XCTAssertEqual(stats.framesDecoded, pictures.count)
    loop.submit { track.stop() }
  }

  /// On a track placed on the queue, the loop's release timer hands each release to the queue:
  /// no held picture is rendered on the loop.
  func testHeldPicturesOfATrackPlacedOnTheQueueAreReleasedOnTheQueue() throws {
    let loop = EventLoop(label: "test.decodeHeldQueue")
    let (packets, pictures) = try stream(count: 24)
    let renderer = Collector(loop: loop)
    let sync = Self.videoAheadOfAudio()
    let track = try VideoReceiveTrack(renderer: renderer, playoutSync: sync, loop: loop) {}
    playInRealTime(packets, to: track, on: loop)
    XCTAssertTrue(eventually { renderer.frames.withLock { $0.count } == pictures.count })
    let rendered = renderer.frames.withLock { $0 }
    assertMatches(rendered, pictures)
    XCTAssertGreaterThan(sync.videoExtraDelay, .milliseconds(150), "video held for the audio")
    XCTAssertFalse(rendered.contains(where: \.onLoop), "\(rendered.map(\.onLoop))")
    XCTAssertEqual(track.picturesDecodedOnLoop, 0)
    loop.submit { track.stop() }
  }

  func testNothingIsRenderedAfterStop() throws {
    let loop = EventLoop(label: "test.decodeStop")
    let (packets, _) = try stream(count: 10)
    let renderer = Collector(loop: loop)
    let track = try VideoReceiveTrack(renderer: renderer, loop: loop, placement: Self.onLoop) {}
    play(Array(packets[0..<5]), to: track, on: loop)
    loop.submit { track.stop() }
    play(Array(packets[5...]), to: track, on: loop)
    XCTAssertEqual(renderer.frames.withLock { $0.count }, 5)
  }
}

/// `EventLoopWorkBudget`: the shares held by placed tracks.
final class EventLoopWorkBudgetTests: XCTestCase {
  func testHeldSharesAddUpAndReleaseNeverGoesBelowZero() {
    let loop = EventLoop(label: "WorkBudgetTests")
    let budget = EventLoopWorkBudget(thread: loop.thread)
    // Loop-confined: used on its loop.
    let shares = loop.submit { () -> [Double] in
      var seen = [budget.heldShare]
      budget.hold(0.12)
      budget.hold(0.06)
      seen.append(budget.heldShare)
      budget.hold(-1)
      seen.append(budget.heldShare)
      budget.release(0.12)
      seen.append(budget.heldShare)
      budget.release(0.5)
      seen.append(budget.heldShare)
      return seen
    }
    XCTAssertEqual(shares.count, 5)
    XCTAssertEqual(shares[0], 0)
    XCTAssertEqual(shares[1], 0.18, accuracy: 1e-12)
    XCTAssertEqual(shares[2], 0.18, accuracy: 1e-12)
    XCTAssertEqual(shares[3], 0.06, accuracy: 1e-12)
    XCTAssertEqual(shares[4], 0)
    loop.shutdown()
  }
}
