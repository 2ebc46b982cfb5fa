import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSMedia
@testable import WCSProtocols

/// The play path's in-place forms against the plain ones: `VideoRenderQueue.releaseNext` called
/// until nil against `release`, `AudioReceiver.pull(now:into:)` against `pull(now:)`.
final class PlayoutPathEquivalenceTests: XCTestCase {
  func testReleaseNextMatchesRelease() {
    var random = SplitMix64(seed: 0x0E1E_A5E)
    let origin = MediaInstant.now()
    for capacity in [1, 3, 90] {
      var queue = VideoRenderQueue<Int>(capacity: capacity)
      var reference = VideoRenderQueue<Int>(capacity: capacity)
      var now = origin
      var frame = 0
      var released = 0
      for _ in 0..<5_000 {
        now += .microseconds(Int.random(in: 0...40_000, using: &random))
        for _ in 0..<Int.random(in: 0...3, using: &random) {
          frame += 1
          queue.push(frame, decodedAt: now)
          reference.push(frame, decodedAt: now)
        }
        let extraDelay: MediaDuration =
          Bool.random(using: &random)
          ? .zero : .microseconds(Int.random(in: -10_000...300_000, using: &random))
        let expected = reference.release(now: now, extraDelay: extraDelay)
        var got: [VideoRenderQueue<Int>.Release] = []
        while let release = queue.releaseNext(now: now, extraDelay: extraDelay) {
          got.append(release)
        }
        XCTAssertEqual(got.map(\.frame), expected.map(\.frame))
        XCTAssertEqual(got.map(\.heldFor), expected.map(\.heldFor))
        XCTAssertEqual(queue.count, reference.count)
        XCTAssertEqual(
          queue.nextDeadline(extraDelay: extraDelay), reference.nextDeadline(extraDelay: extraDelay)
        )
        released += got.count
      }
      XCTAssertGreaterThan(released, 1000)
    }
  }

  func testPullIntoMatchesPull() throws {
    let encoder = try OpusEncoder()
    let receiver = try AudioReceiver(channels: 1)
    let reference = try AudioReceiver(channels: 1)
    var random = SplitMix64(seed: 0xA0D_10)
    let origin = MediaInstant.now()
    var reused: [PCMAudioFrame] = []
    var played = 0
    for index in 0..<300 {
      let now = origin + .milliseconds(20 * index)
      let samples = (0..<960).map { Int16(truncatingIfNeeded: ($0 * 37 + index * 11) % 2000) }
      if Int.random(in: 0..<8, using: &random) != 0 {
        let payload = try encoder.encode(PCMAudioFrame(samples: samples, channels: 1))
        let packet = RTPPacket(
          header: RTPHeader(
            payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: 65_500 + index),
            timestamp: UInt32(960 * index), ssrc: 7),
          payload: payload)
        receiver.insert(packet, now: now)
        reference.insert(packet, now: now)
      }
      reused.removeAll(keepingCapacity: true)
      receiver.pull(now: now, into: &reused)
      let expected = reference.pull(now: now)
      XCTAssertEqual(reused, expected)
      played += reused.count
    }
    // Everything but the CPU time measured.
    var statistics = receiver.statistics
    var expected = reference.statistics
    statistics.decodeCPUTime = 0
    expected.decodeCPUTime = 0
    XCTAssertEqual(statistics, expected)
    XCTAssertGreaterThan(statistics.fecRecoveredFrames, 0)
    XCTAssertGreaterThan(played, 250)
  }
}
