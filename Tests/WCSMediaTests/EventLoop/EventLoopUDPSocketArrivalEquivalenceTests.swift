import Foundation
import TestSupport
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia

/// `EventLoopUDPSocket.arrival(kernelTime:now:wallClockNow:)` computes the age in `Int128`
/// nanoseconds; these runs hold it to the `Duration` computation it replaced.
final class EventLoopUDPSocketArrivalEquivalenceTests: XCTestCase {
  /// The previous computation: `Duration` arithmetic, clamped to 0...1 s.
  private static func reference(
    kernelTime: timespec, now: ContinuousClock.Instant, wallClockNow wall: timespec
  ) -> ContinuousClock.Instant {
    guard kernelTime.tv_sec != 0 || kernelTime.tv_nsec != 0 else { return now }
    let age =
      Duration.seconds(Int64(wall.tv_sec) - Int64(kernelTime.tv_sec))
      + .nanoseconds(Int64(wall.tv_nsec) - Int64(kernelTime.tv_nsec))
    return now - min(max(age, .zero), EventLoopUDPSocket.maximumQueueingAge)
  }

  func testSameArrivalAsDurationArithmeticOnSeededTimes() {
    var random = SplitMix64(seed: 0x5EED_A44)
    let now = ContinuousClock.now
    var clamped = (low: 0, high: 0, inside: 0)
    for round in 0..<50_000 {
      let wallSeconds = Int.random(in: 1_000_000_000...2_000_000_000, using: &random)
      let wall = timespec(
        tv_sec: wallSeconds, tv_nsec: Int.random(in: 0..<1_000_000_000, using: &random))
      // Ages around the interesting edges: 0, sub-second, exactly 1 s, negative (stepped back),
      // far back, and the zero "no time" stamp.
      let kernel: timespec
      switch round % 6 {
      case 0:
        kernel = timespec(tv_sec: 0, tv_nsec: 0)
      case 1:
        kernel = timespec(
          tv_sec: wallSeconds - Int.random(in: 0...1, using: &random),
          tv_nsec: Int.random(in: 0..<1_000_000_000, using: &random))
      case 2:
        kernel = timespec(tv_sec: wallSeconds - 1, tv_nsec: wall.tv_nsec)
      case 3:
        kernel = timespec(
          tv_sec: wallSeconds + Int.random(in: 0...3, using: &random),
          tv_nsec: Int.random(in: 0..<1_000_000_000, using: &random))
      case 4:
        kernel = timespec(
          tv_sec: Int.random(in: 1...wallSeconds, using: &random),
          tv_nsec: Int.random(in: 0..<1_000_000_000, using: &random))
      default:
        kernel = wall
      }
      let fast = EventLoopUDPSocket.arrival(kernelTime: kernel, now: now, wallClockNow: wall)
      XCTAssertEqual(
        fast, Self.reference(kernelTime: kernel, now: now, wallClockNow: wall),
        "kernel \(kernel.tv_sec).\(kernel.tv_nsec), wall \(wall.tv_sec).\(wall.tv_nsec)")
      // The socket keeps the arrival as an offset from the loop's origin: the same instant.
      if kernel.tv_sec != 0 || kernel.tv_nsec != 0 {
        let origin = now - .seconds(Int.random(in: 0...100_000, using: &random))
        let offset =
          (now - origin) - EventLoopUDPSocket.queueingAge(kernelTime: kernel, wallClockNow: wall)
        XCTAssertEqual(origin + offset, fast)
      }
      // What the socket stores per datagram, from attoseconds since the loop's origin.
      let origin = now - .seconds(Int.random(in: 0...100_000, using: &random))
      let sinceOrigin = origin.duration(to: now).attoseconds
      let stored = EventLoopUDPSocket.arrivalOffset(
        kernelTime: kernel, wallClockNow: wall, sinceOrigin: sinceOrigin)
      XCTAssertEqual(origin + stored, fast, "kernel \(kernel.tv_sec).\(kernel.tv_nsec)")
      if fast == now {
        clamped.low += 1
      } else if fast == now - EventLoopUDPSocket.maximumQueueingAge {
        clamped.high += 1
      } else {
        clamped.inside += 1
      }
    }
    // Every branch ran many times.
    XCTAssertGreaterThan(clamped.low, 10_000)
    XCTAssertGreaterThan(clamped.high, 10_000)
    XCTAssertGreaterThan(clamped.inside, 5_000)
  }

  func testExtremeStampsClampWithoutTrapping() {
    let now = ContinuousClock.now
    let wall = timespec(tv_sec: 1_800_000_000, tv_nsec: 0)
    // A stamp from the far future (a garbled wall clock): no age.
    XCTAssertEqual(
      EventLoopUDPSocket.arrival(
        kernelTime: timespec(tv_sec: Int.max, tv_nsec: 999_999_999), now: now, wallClockNow: wall),
      now)
    // From the far past: one second back at most.
    XCTAssertEqual(
      EventLoopUDPSocket.arrival(
        kernelTime: timespec(tv_sec: Int.min, tv_nsec: 0), now: now, wallClockNow: wall),
      now - .seconds(1))
    XCTAssertEqual(
      EventLoopUDPSocket.arrival(
        kernelTime: timespec(tv_sec: 1, tv_nsec: -5), now: now,
        wallClockNow: timespec(tv_sec: Int.max, tv_nsec: 999_999_999)),
      now - .seconds(1))
  }
}
