import Foundation
import Synchronization
import XCTest

@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSPeerConnection
@testable import WCSProtocols

/// A played track whose renderer stops it (a renderer closing its connection) or that loses a
/// packet while decoding on the loop, and many tracks sharing one loop's work budget.
final class VideoDecodeOnLoopStopTests: XCTestCase {
  /// Records what it renders, where; calls `onRender` with the position of each picture.
  private final class Recorder: VideoRenderer {
    let loop: EventLoop
    let timestamps = Mutex<[Int64]>([])
    let onLoop = Mutex<[Bool]>([])
    let onRender: @Sendable (Int) -> Void

    init(loop: EventLoop, onRender: @escaping @Sendable (Int) -> Void = { _ in }) {
      self.loop = loop
      self.onRender = onRender
    }

    func render(_ frame: VideoFrame) {
      onLoop.withLock { $0.append(loop.inEventLoop) }
      let position = timestamps.withLock { timestamps in
        timestamps.append(frame.timestampNs)
        return timestamps.count - 1
      }
      onRender(position)
    }
  }

  private static let frameInterval = VP8TestStream.frameInterval

  /// `count` pictures of the virtual camera, encoded and packetized: the RTP packets of each.
  static func stream(count: Int, width: Int = 320, height: Int = 240) throws
    -> [[ReceivedRTPPacket]]
  {
    try VP8TestStream(
      count: count, width: width, height: height, bitrateKbps: 800, firstSequence: 100
    ).packets
  }

  private static func timestampNs(_ index: Int) -> Int64 {
    Int64(index) * Int64(frameInterval) * 100_000 / 9
  }

  func testARendererStoppingItsTrackOnTheLoopGetsNoFurtherPictureOfTheSameRelease() throws {
    let loop = EventLoop(label: "test.stopFromRender")
    let packets = try Self.stream(count: 4)
    let trackBox = BackendTestBox<VideoReceiveTrack?>(nil)
    let renderer = Recorder(loop: loop) { position in
      // Stopping from `render` is what closing the connection from it does (on the loop).
      if position == 1 { trackBox.value?.stop() }
    }
    let track = try VideoReceiveTrack(
      renderer: renderer, loop: loop, placement: .loop(share: 0.1)
    ) {}
    trackBox.mutate { $0 = track }
    loop.submit { track.handle(packets[0], now: loop.mediaNow()) }
    track.queue.sync {}
    // Frame 2 before frame 1: frame 1 completes both, one release of two pictures on the loop.
    loop.submit { track.handle(packets[2], now: loop.mediaNow()) }
    loop.submit { track.handle(packets[1], now: loop.mediaNow()) }
    track.queue.sync {}
    loop.submit { track.handle(packets[3], now: loop.mediaNow()) }
    track.queue.sync {}
    XCTAssertEqual(renderer.onLoop.withLock { $0 }.last, true, "picture 1 rendered on the loop")
    XCTAssertEqual(
      renderer.timestamps.withLock { $0 }, [Self.timestampNs(0), Self.timestampNs(1)],
      "a picture reached the renderer after it stopped the track")
    trackBox.mutate { $0 = nil }
  }

  func testAKeyFrameIsRequestedOnTheLoopWhenAPictureIsLostWhileDecodingThere() throws {
    let loop = EventLoop(label: "test.pliInline")
    let packets = try Self.stream(count: 60)
    let requests = BackendTestBox<[Bool]>([])
    let renderer = Recorder(loop: loop)
    let track = try VideoReceiveTrack(
      renderer: renderer, loop: loop, placement: .loop(share: 0.1)
    ) {
      requests.mutate { $0.append(loop.inEventLoop) }
    }
    for (index, frame) in packets.enumerated() where index != 10 {
      loop.submit { track.handle(frame, now: loop.mediaNow()) }
      track.queue.sync {}
    }
    XCTAssertEqual(renderer.timestamps.withLock { $0.count }, 10, "pictures 0 to 9 only")
    XCTAssertGreaterThan(track.picturesDecodedOnLoop, 0)
    XCTAssertEqual(requests.value.first, true, "the key frame is asked for, on the loop")
    loop.submit { track.stop() }
  }

  func testSixTracksPlacedOnOneLoopFillItsShareAndRenderEveryPictureInOrder() throws {
    let loop = EventLoop(label: "test.sixTracks")
    let packets = try Self.stream(count: 45, width: 640, height: 480)
    let renderers = (0..<6).map { _ in Recorder(loop: loop) }
    let tracks = try renderers.map { renderer in
      try VideoReceiveTrack(renderer: renderer, loop: loop) {}
    }
    // Placed as the connection places them, one after the other: 640x480 at 30/s holds 2 ms ×
    // 30 = 6 % of the loop each, so four fit in the default 25 %.
    let placements = loop.submit { () -> [DecodePlacement] in
      tracks.map { track in
        let inputs = DecodePlacement.Inputs(
          loopAllowed: true, width: 640, height: 480, frameRate: 30, cores: 2,
          shareInUse: loop.workBudget.heldShare)
        track.place(DecodePlacement.decide(inputs, tuning: ReceiveTuning()))
        return track.placement
      }
    }
    XCTAssertEqual(placements, Array(repeating: .loop(share: 0.06), count: 4) + [.queue, .queue])
    XCTAssertEqual(loop.submit { loop.workBudget.heldShare }, 0.24, accuracy: 1e-9)
    for frame in packets {
      loop.submit { for track in tracks { track.handle(frame, now: loop.mediaNow()) } }
    }
    for track in tracks { track.queue.sync {} }
    let expected = (0..<packets.count).map(Self.timestampNs)
    for (index, renderer) in renderers.enumerated() {
      XCTAssertEqual(renderer.timestamps.withLock { $0 }, expected, "track \(index)")
      let onLoop = renderer.onLoop.withLock { $0 }
      XCTAssertEqual(onLoop, Array(repeating: index < 4, count: packets.count), "track \(index)")
    }
    XCTAssertEqual(tracks.map(\.picturesDecodedOnLoop), [45, 45, 45, 45, 0, 0])
    // Stopping gives the shares back.
    loop.submit { for track in tracks { track.stop() } }
    XCTAssertEqual(loop.submit { loop.workBudget.heldShare }, 0)
  }
}
