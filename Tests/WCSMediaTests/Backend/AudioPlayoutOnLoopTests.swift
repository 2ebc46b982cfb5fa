import Foundation
import Synchronization
import XCTest

@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// Played audio reaches `PlayoutAudioSink.play` on the connection's event loop: a sink that
/// calls back into the connection (statistics, another sink, `close()`) must not deadlock, and
/// nothing reaches a sink once the connection that plays to it is closed.
final class AudioPlayoutOnLoopTests: XCTestCase {
  private static func audioOnly() -> MediaConnectionRequest {
    MediaConnectionRequest(direction: .publish, audio: .init(), video: nil)
  }

  func testSinkCallingBackIntoTheConnectionFromPlayDoesNotDeadlock() throws {
    let call = try LoopbackCall(publish: Self.audioOnly())
    defer { call.close() }
    let player = call.player
    let calls = BackendTestBox(0)
    let statisticsRead = BackendTestBox(0)
    let onLoop = BackendTestBox(true)
    let replacement = BackendTestBox(0)
    player.setPlayoutSink(
      PlayoutAudioCallbackSink { [weak player] _ in
        guard let player else { return }
        if !player.loop.inEventLoop { onLoop.mutate { $0 = false } }
        let count = calls.mutate { count -> Int in
          count += 1
          return count
        }
        // `submit`-based getters run inline on the loop; callbacks are queued behind the turn.
        _ = player.isClosed
        _ = player.failureReason
        player.detailedStatistics { _ in statisticsRead.mutate { $0 += 1 } }
        if count == 20 {
          player.setPlayoutSink(PlayoutAudioCallbackSink { _ in replacement.mutate { $0 += 1 } })
        }
      })
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("the replacement sink plays") { replacement.value >= 10 }
    // The sinks are read once per turn: the turn that replaced it may hand it one more frame.
    XCTAssertTrue((20...21).contains(calls.value), "the first sink played \(calls.value) blocks")
    XCTAssertTrue(onLoop.value, "play runs on the event loop")
    waitForBackend("statistics callbacks ran") { statisticsRead.value == 20 }
  }

  func testSinkClosingItsConnectionFromPlayGetsNoFurtherBlock() throws {
    let call = try LoopbackCall(publish: Self.audioOnly())
    defer { call.close() }
    let player = call.player
    let blocks = BackendTestBox(0)
    let afterClose = BackendTestBox(0)
    let closed = BackendTestBox(false)
    player.setPlayoutSink(
      PlayoutAudioCallbackSink { [weak player] _ in
        if closed.value { afterClose.mutate { $0 += 1 } }
        let count = blocks.mutate { count -> Int in
          count += 1
          return count
        }
        guard count == 10, let player else { return }
        // A pull may hand over two frames at once; the second must not reach the sink.
        player.close()
        closed.mutate { $0 = true }
      })
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("closed from the sink") { closed.value }
    XCTAssertTrue(player.isClosed)
    XCTAssertEqual(call.playStates.value.last, .closed)
    // Packets keep arriving from the publisher for a while; no turn may run any more.
    Thread.sleep(forTimeInterval: 0.3)
    XCTAssertEqual(afterClose.value, 0, "a block reached the sink after close()")
    XCTAssertEqual(blocks.value, 10)
    let timers = player.loop.submit { player.loop.pendingTimerCount }
    let audioTimer = player.loop.submit { player.audioPlayoutTimer }
    XCTAssertNil(audioTimer, "a closed connection re-armed its audio turn (\(timers) timers)")
  }

  func testOpeningAndClosingCallsLeavesNoThreadsBehind() throws {
    func threadCount() -> Int {
      (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }
    // One call first, so lazily created process-wide threads (Dispatch's pool) exist.
    do {
      let call = try LoopbackCall(
        publish: MediaConnectionRequest(
          direction: .publish, audio: .init(), video: .init(maxWidth: 160, maxHeight: 120)))
      try call.connectPublisher(self)
      try call.connectPlayer(self)
      waitForBackend("audio") { call.audio.value.count >= 5 }
      call.close()
    }
    Thread.sleep(forTimeInterval: 0.2)
    let baseline = threadCount()
    for _ in 0..<4 {
      let call = try LoopbackCall(
        publish: MediaConnectionRequest(
          direction: .publish, audio: .init(), video: .init(maxWidth: 160, maxHeight: 120)))
      try call.connectPublisher(self)
      try call.connectPlayer(self)
      waitForBackend("audio") { call.audio.value.count >= 5 }
      call.close()
    }
    // Ticker threads end at their next deadline (≤ 50 ms); loops end with their last reference.
    // Each call ran 3 such threads (its loop, the camera's and the microphone's ticker), so a
    // leak shows as 12 more; a little slack is left for Dispatch's idle workers.
    var count = threadCount()
    let deadline = Date().addingTimeInterval(10)
    while count > baseline + 4, Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
      count = threadCount()
    }
    print("threads: \(baseline) before 4 calls, \(count) after")
    XCTAssertLessThanOrEqual(count, baseline + 4, "threads: \(baseline) before, \(count) after")
  }
}
