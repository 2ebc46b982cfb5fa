import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// The kernel's receive time of each datagram (`SO_TIMESTAMPNS`) as `EventLoop.datagramArrival`
/// while its handler runs: a loop busy when datagrams came does not make them look late.
final class EventLoopUDPSocketArrivalTests: XCTestCase {
  private struct Seen: Sendable {
    var payload: UInt8
    var arrival: ContinuousClock.Instant?
    var handledAt: ContinuousClock.Instant
  }

  func testArrivalIsWhenTheKernelReceivedNotWhenTheBusyLoopRead() throws {
    let loop = EventLoop(label: "EventLoopUDPSocketArrivalTests")
    defer { loop.shutdown() }
    let seen = LoopShared<[Seen]>([])
    let receiver = try loop.submit { () throws -> EventLoopUDPSocket in
      try EventLoopUDPSocket(
        loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)
      ) { [loop] bytes, _ in
        let entry = Seen(
          payload: bytes.first ?? 0, arrival: loop.datagramArrival?.continuousInstant,
          handledAt: loop.now())
        seen.mutate { $0.append(entry) }
      }
    }
    let sender = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    XCTAssertGreaterThanOrEqual(sender, 0)
    defer { close(sender) }
    var destination = sockaddr_in()
    destination.sin_family = sa_family_t(AF_INET)
    destination.sin_port = receiver.localAddress.port.bigEndian
    destination.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    func send(_ byte: UInt8) {
      var payload = byte
      _ = withUnsafePointer(to: &destination) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(sender, &payload, 1, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    // The loop is held for 300 ms; three datagrams come during that time, 40 ms apart.
    let blocked = LoopShared(false)
    loop.execute {
      blocked.mutate { $0 = true }
      Thread.sleep(forTimeInterval: 0.3)
    }
    XCTAssertTrue(eventually { blocked.value })
    var sentAt: [ContinuousClock.Instant] = []
    for byte: UInt8 in 1...3 {
      sentAt.append(.now)
      send(byte)
      Thread.sleep(forTimeInterval: 0.04)
    }
    XCTAssertTrue(eventually { seen.value.count == 3 })
    let entries = seen.value
    XCTAssertEqual(entries.map(\.payload), [1, 2, 3])
    for (entry, sent) in zip(entries, sentAt) {
      guard let arrival = entry.arrival else { return XCTFail("no arrival for \(entry.payload)") }
      // Read well after it came (the loop was busy), but stamped when it came (loopback
      // delivers inside sendto; 10 ms allows for the wall clock's own reading and a slow CI).
      XCTAssertGreaterThan(entry.handledAt - sent, .milliseconds(100))
      XCTAssertLessThan(arrival - sent, .milliseconds(10))
      XCTAssertGreaterThanOrEqual(arrival - sent, .milliseconds(-1))
    }
    // Outside a handler there is none.
    XCTAssertNil(loop.submit { loop.datagramArrival })
    loop.submit { receiver.close() }
  }

  func testArrivalFromTheKernelTimeAndTheWallClock() {
    let now = ContinuousClock.now
    let wall = timespec(tv_sec: 1_800_000_000, tv_nsec: 2_000_000)
    // No kernel time: now.
    XCTAssertEqual(
      EventLoopUDPSocket.arrival(kernelTime: timespec(), now: now, wallClockNow: wall), now)
    // 2.5 ms before the wall clock's reading, across a second boundary.
    XCTAssertEqual(
      EventLoopUDPSocket.arrival(
        kernelTime: timespec(tv_sec: 1_799_999_999, tv_nsec: 999_500_000), now: now,
        wallClockNow: wall),
      now - .microseconds(2500))
    // After it (the wall clock was stepped back): now.
    XCTAssertEqual(
      EventLoopUDPSocket.arrival(
        kernelTime: timespec(tv_sec: 1_800_000_003, tv_nsec: 0), now: now, wallClockNow: wall),
      now)
    // Further back than a second (stepped forward): a second back at most.
    XCTAssertEqual(
      EventLoopUDPSocket.arrival(
        kernelTime: timespec(tv_sec: 1_799_999_990, tv_nsec: 0), now: now, wallClockNow: wall),
      now - EventLoopUDPSocket.maximumQueueingAge)
  }
}
