import WCSMedia
import XCTest

final class PacerTests: XCTestCase {
  private func drive(
    _ pacer: inout Pacer<Int>, from start: Int64, to end: Int64, step: Int64 = 1_000
  ) -> [(time: Int64, release: PacerRelease<Int>)] {
    var released: [(Int64, PacerRelease<Int>)] = []
    var now = start
    while now < end {
      for item in pacer.process(now: atMicroseconds(now)) { released.append((now, item)) }
      now += step
    }
    return released
  }

  func testReleasesAtPacingRateOverOneSecond() {
    // 1 Mbit/s target × 2.5 = 2.5 Mbit/s = 312 500 bytes/s.
    var pacer = Pacer<Int>(targetBitrate: 1_000_000)
    XCTAssertEqual(pacer.pacingRate, 2_500_000)
    for index in 0..<400 {
      pacer.enqueue(index, priority: .video, size: 1200, now: atMicroseconds(0))
    }
    let released = drive(&pacer, from: 0, to: 1_000_000)
    let bytes = released.reduce(0) { $0 + $1.release.size }
    print("pacer: \(bytes) bytes in 1 s at 2.5 Mbit/s (expected 312500)")
    XCTAssertEqual(Double(bytes), 312_500, accuracy: 31_250)
    XCTAssertGreaterThan(pacer.queuedPackets, 0)
  }

  func testAudioAndRetransmissionsLeaveBeforeVideo() {
    var pacer = Pacer<Int>(targetBitrate: 100_000)
    for index in 0..<5 {
      pacer.enqueue(index, priority: .video, size: 1000, now: atMicroseconds(0))
    }
    pacer.enqueue(100, priority: .retransmission, size: 1000, now: atMicroseconds(0))
    pacer.enqueue(200, priority: .audio, size: 100, now: atMicroseconds(0))
    let released = drive(&pacer, from: 0, to: 2_000_000)
    let order: [Int] = released.compactMap {
      if case .media(let packet, _, _, _) = $0.release { return packet }
      return nil
    }
    XCTAssertEqual(order, [200, 100, 0, 1, 2, 3, 4])
  }

  func testBurstBudgetIsRespected() {
    // 2 Mbit/s × 2.5 = 5 Mbit/s; 40 ms of it = 25 000 bytes (+ at most one packet of overshoot).
    var pacer = Pacer<Int>(targetBitrate: 2_000_000)
    for index in 0..<40 {
      pacer.enqueue(index, priority: .video, size: 1200, now: atMicroseconds(0))
    }
    let first = pacer.process(now: atMicroseconds(0))
    XCTAssertEqual(first.count, 21)
    XCTAssertLessThanOrEqual(first.reduce(0) { $0 + $1.size }, 25_000 + 1200)
    // 200 bytes of debt at 625 bytes/ms: the next packet may go 0.32 ms later.
    XCTAssertEqual(pacer.nextSendTime, atMicroseconds(322))
    XCTAssertEqual(pacer.process(now: atMicroseconds(200)).count, 0)
    XCTAssertEqual(pacer.process(now: atMicroseconds(322)).count, 1)

    // A long idle period does not bank more than the burst allowance.
    _ = drive(&pacer, from: 1_000, to: 100_000)
    XCTAssertEqual(pacer.queuedPackets, 0)
    for index in 0..<40 {
      pacer.enqueue(index, priority: .video, size: 1200, now: atMicroseconds(2_000_000))
    }
    let afterIdle = pacer.process(now: atMicroseconds(2_000_000))
    XCTAssertLessThanOrEqual(afterIdle.reduce(0) { $0 + $1.size }, 25_000 + 1200)
  }

  func testOrdinaryFrameLeavesInOneBurstAndKeyFrameIsSpread() {
    // 1 Mbit/s at 30 fps: ~4.2 kB a frame, 4 packets; the allowance at 2.5 Mbit/s is 12.5 kB.
    var pacer = Pacer<Int>(targetBitrate: 1_000_000)
    for index in 0..<4 {
      pacer.enqueue(index, priority: .video, size: 1050, now: atMicroseconds(0))
    }
    XCTAssertEqual(pacer.process(now: atMicroseconds(0)).count, 4)
    XCTAssertNil(pacer.nextSendTime)
    // A 30 kB key frame 33 ms later: 12.5 kB at once, the rest at 312.5 bytes/ms.
    for index in 0..<25 {
      pacer.enqueue(index, priority: .video, size: 1200, now: atMicroseconds(33_000))
    }
    let burst = pacer.process(now: atMicroseconds(33_000))
    XCTAssertEqual(burst.count, 11)
    let rest = drive(&pacer, from: 34_000, to: 200_000)
    XCTAssertEqual(rest.count, 14)
    let last = rest.last?.time ?? 0
    // 14 × 1200 bytes less the overshoot, at 312.5 bytes/ms: ~53 ms after the burst.
    XCTAssertEqual(Double(last - 33_000), 53_000, accuracy: 3_000)
  }

  func testBurstIsCappedAt63Kilobytes() {
    // 20 Mbit/s × 2.5 × 40 ms would be 250 kB; libwebrtc caps a burst at 63 kB.
    var pacer = Pacer<Int>(targetBitrate: 20_000_000)
    for index in 0..<100 {
      pacer.enqueue(index, priority: .video, size: 1200, now: atMicroseconds(0))
    }
    let bytes = pacer.process(now: atMicroseconds(0)).reduce(0) { $0 + $1.size }
    XCTAssertEqual(bytes, 63_600)
  }

  func testLongQueueDrainsWithinTheQueueTimeLimit() {
    // 100 kbit/s × 2.5 = 250 kbit/s would need 6.4 s for 200 kB; the limit is 2 s.
    var pacer = Pacer<Int>(targetBitrate: 100_000)
    for index in 0..<200 {
      pacer.enqueue(index, priority: .video, size: 1000, now: atMicroseconds(0))
    }
    XCTAssertEqual(pacer.effectiveRate(at: atMicroseconds(0)), 800_000, accuracy: 1)
    var now: Int64 = 0
    while pacer.queuedPackets > 0, now < 10_000_000 {
      _ = pacer.process(now: atMicroseconds(now))
      now += 1_000
    }
    print("pacer: 200 kB queue drained in \(now / 1000) ms")
    XCTAssertLessThanOrEqual(now, 2_100_000)
    XCTAssertGreaterThan(now, 1_000_000)
  }

  func testDropPolicyDropsOldestVideoOnly() {
    var pacer = Pacer<Int>(targetBitrate: 100_000, overflowPolicy: .dropOldestVideo)
    pacer.enqueue(-1, priority: .audio, size: 100, now: atMicroseconds(0))
    for index in 0..<200 {
      pacer.enqueue(index, priority: .video, size: 1000, now: atMicroseconds(0))
    }
    // 250 kbit/s × 2 s = 62 500 bytes may wait.
    XCTAssertLessThanOrEqual(pacer.queuedBytes, 62_500)
    XCTAssertEqual(pacer.droppedPackets, 138)
    let first = pacer.process(now: atMicroseconds(0))
    guard case .media(let packet, _, _, _)? = first.first else { return XCTFail("nothing sent") }
    XCTAssertEqual(packet, -1)
    guard case .media(let video, _, _, _)? = first.dropFirst().first else {
      return XCTFail("no video")
    }
    XCTAssertEqual(video, 138, "the oldest video packets were dropped")
  }

  func testProbeClusterSendsPaddingAtTheProbeRate() {
    var pacer = Pacer<Int>(targetBitrate: 300_000)
    pacer.addProbeCluster(
      ProbeCluster(id: 7, bitrate: 3_000_000, minimumBytes: 11_250, minimumPackets: 5))
    let released = drive(&pacer, from: 0, to: 100_000, step: 250)
    XCTAssertFalse(released.isEmpty)
    var bytes = 0
    for item in released {
      guard case .padding(let size, let id) = item.release else { return XCTFail("\(item)") }
      XCTAssertEqual(id, 7)
      bytes += size
    }
    XCTAssertGreaterThanOrEqual(bytes, 11_250)
    XCTAssertGreaterThanOrEqual(released.count, 5)
    // Sent at ~3 Mbit/s: 11 250 bytes take ~30 ms (less the initial burst).
    let span = (released.last?.time ?? 0) - (released.first?.time ?? 0)
    XCTAssertEqual(Double(span), 25_000, accuracy: 6_000)
    XCTAssertNil(pacer.nextSendTime)
  }
}
