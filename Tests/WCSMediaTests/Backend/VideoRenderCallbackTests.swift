import Foundation
import Synchronization
import XCTest

@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// A played connection's renderer, called on the event loop or on the track's queue, that calls
/// back into its connection (getters, statistics, another sink, `close()`): no deadlock, and no
/// picture after it closed the connection.
final class VideoRenderCallbackTests: XCTestCase {
  private static func request(audio: Bool) -> MediaConnectionRequest {
    MediaConnectionRequest(
      direction: .publish, audio: audio ? .init() : nil,
      video: .init(maxWidth: 160, maxHeight: 120))
  }

  /// Plays until the renderer closed the player at its `closeAt`-th picture (1-based), reading
  /// the connection's getters and statistics from every `render`.
  /// - Parameters:
  ///   - renderDelay: seconds each `render` takes.
  ///   - onLoop: whether decoding on the loop is allowed (`decodesVideoOnLoop`).
  ///   - closesOnLoop: where the picture that closes is expected to be rendered.
  private func closeFromRender(
    at closeAt: Int, audio: Bool, renderDelay: Double = 0, onLoop: Bool = true,
    closesOnLoop: Bool? = nil, line: UInt = #line
  ) throws {
    let closedOnLoop = BackendTestBox<Bool?>(nil)
    let target = BackendTestBox<NativeMediaConnection?>(nil)
    let pictures = BackendTestBox(0)
    let afterClose = BackendTestBox(0)
    let closed = BackendTestBox(false)
    let statisticsRead = BackendTestBox(0)
    let renderer = VideoFrameCallbackRenderer { _ in
      if closed.value { afterClose.mutate { $0 += 1 } }
      let count = pictures.mutate { count -> Int in
        count += 1
        return count
      }
      guard let player = target.value else { return }
      _ = player.isClosed
      _ = player.failureReason
      player.detailedStatistics { _ in statisticsRead.mutate { $0 += 1 } }
      player.setPlayoutSink(PlayoutAudioCallbackSink { _ in })
      if renderDelay > 0 { Thread.sleep(forTimeInterval: renderDelay) }
      guard count == closeAt else { return }
      closedOnLoop.mutate { $0 = player.loop.inEventLoop }
      player.close()
      closed.mutate { $0 = true }
    }
    let call = try LoopbackCall(publish: Self.request(audio: audio), renderer: renderer) {
      var configuration = $0
      configuration.decodesVideoOnLoop = onLoop
      return NativeMediaBackend(configuration: configuration)
    }
    target.mutate { $0 = call.player }
    defer { target.mutate { $0 = nil } }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("closed from render", timeout: 15, line: line) { closed.value }
    // A deadlocked loop would hang `close()` too: leave the call behind then.
    guard closed.value else { return }
    defer { call.close() }
    if let closesOnLoop {
      XCTAssertEqual(closedOnLoop.value, closesOnLoop, "where close() was called", line: line)
    }
    XCTAssertTrue(call.player.isClosed, line: line)
    XCTAssertEqual(call.playStates.value.last, .closed, line: line)
    // The publisher keeps sending for a while; nothing may reach the renderer any more.
    Thread.sleep(forTimeInterval: 0.3)
    XCTAssertEqual(afterClose.value, 0, "a picture reached the renderer after close()", line: line)
    XCTAssertEqual(pictures.value, closeAt, line: line)
    // A picture rendered from the poll that closed the connection must not re-arm it.
    let player = call.player
    let pollArmed = player.loop.submit { player.pollTimer != nil || player.pollAt != nil }
    XCTAssertFalse(pollArmed, "a closed connection re-armed its poll", line: line)
    waitForBackend("statistics callbacks ran", line: line) { statisticsRead.value == closeAt }
  }

  func testRendererClosingItsConnectionAtTheFirstPictureDoesNotDeadlock() throws {
    try closeFromRender(at: 1, audio: false)
  }

  func testRendererClosingItsConnectionFromTheTracksQueueDoesNotDeadlock() throws {
    // Closing waits for the loop, which stops the track: it must not wait for the queue the
    // renderer is blocking.
    try closeFromRender(at: 3, audio: false, onLoop: false, closesOnLoop: false)
  }

  func testSlowRendererClosingItsConnectionFromTheQueueDoesNotDeadlock() throws {
    // 10 ms per picture on a track placed on its queue (a slow renderer does not move it).
    try closeFromRender(
      at: 6, audio: false, renderDelay: 0.010, onLoop: false, closesOnLoop: false)
  }

  func testSlowRendererClosingItsLipSyncedConnectionFromTheQueueDoesNotDeadlock() throws {
    try closeFromRender(at: 6, audio: true, renderDelay: 0.010, onLoop: false, closesOnLoop: false)
  }

  func testRendererClosingItsConnectionLaterGetsNoFurtherPicture() throws {
    try closeFromRender(at: 12, audio: false)
  }

  func testRendererClosingItsLipSyncedConnectionGetsNoFurtherPicture() throws {
    // Audio and video: pictures are held for the lip sync and released by a loop timer.
    try closeFromRender(at: 12, audio: true)
  }

  func testClosingWhileALipSyncHoldIsPendingRendersNothingAfterwards() throws {
    let pictures = BackendTestBox(0)
    let renderer = VideoFrameCallbackRenderer { _ in pictures.mutate { $0 += 1 } }
    let call = try LoopbackCall(publish: Self.request(audio: true), renderer: renderer)
    defer { call.close() }
    // Opus (111) takes a 250 ms longer path: the lip sync holds video that long.
    call.relay.rtpDelay = { $0 == 111 ? .milliseconds(250) : nil }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    let player = call.player
    // Close while pictures flow, are held 100 ms or more (one comes every 33 ms) and a
    // lip-sync release is pending: a loop timer, or a job on the track's queue.
    waitForBackend("video flowing and held for the lip sync", timeout: 30) {
      let (held, pending) = player.loop.submit { () -> (MediaDuration, Bool) in
        let held = player.playoutSync?.snapshot.videoExtraDelay ?? .zero
        guard let track = player.videoReceiveTrack else { return (held, false) }
        // The hold's state belongs to the track's placement: read in order with its queue.
        return (held, track.queue.sync { track.releaseScheduled })
      }
      return pictures.value >= 20 && held > .milliseconds(100) && pending
    }
    let before = pictures.value
    player.close()
    let rendered = pictures.value
    XCTAssertGreaterThan(rendered, 0)
    // The pending release fires within the hold; it must render nothing.
    Thread.sleep(forTimeInterval: 0.4)
    XCTAssertEqual(pictures.value, rendered, "a picture was rendered after close() (\(before))")
  }
}
