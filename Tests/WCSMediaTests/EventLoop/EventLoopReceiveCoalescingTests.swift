import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// Sockets watched with a coalescing window (`EventLoopUDPSocket`'s `coalescing`): what arrives
/// while a timer is due within the window waits for that timer's wake-up and is read before the
/// timer runs; otherwise, and on every other wake-up, it is read at once. Arrival times stay
/// the kernel's.
final class EventLoopReceiveCoalescingTests: XCTestCase {
  private enum Event: Sendable, Hashable {
    case datagram(socket: Int, payload: UInt8)
    case timer
  }

  private struct Seen: Sendable {
    var event: Event
    var at: ContinuousClock.Instant
    var arrival: ContinuousClock.Instant?
  }

  private let loop = EventLoop(label: "EventLoopReceiveCoalescingTests")
  private let seen = LoopShared<[Seen]>([])
  private var sender: Int32 = -1

  override func setUp() {
    super.setUp()
    sender = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
  }

  override func tearDown() {
    if sender >= 0 { close(sender) }
    loop.shutdown()
    super.tearDown()
  }

  /// Binds a receiver on 127.0.0.1 that records each datagram as `socket` `index`.
  private func receiver(_ index: Int, coalescing: Duration) throws -> EventLoopUDPSocket {
    try loop.submit { () throws -> EventLoopUDPSocket in
      try EventLoopUDPSocket(
        loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0),
        coalescing: coalescing
      ) { [loop, seen] bytes, _ in
        let entry = Seen(
          event: .datagram(socket: index, payload: bytes.first ?? 0), at: loop.now(),
          arrival: loop.datagramArrival?.continuousInstant)
        seen.mutate { $0.append(entry) }
      }
    }
  }

  /// Schedules a timer `delay` from now that records itself; returns its deadline.
  private func scheduleTimer(after delay: Duration) -> ContinuousClock.Instant {
    scheduleCancellableTimer(after: delay).deadline
  }

  /// `scheduleTimer(after:)`, also returning the timer.
  private func scheduleCancellableTimer(after delay: Duration) -> (
    deadline: ContinuousClock.Instant, timer: EventLoopTimer
  ) {
    loop.submit { () -> (deadline: ContinuousClock.Instant, timer: EventLoopTimer) in
      let deadline = loop.now() + delay
      let timer = loop.schedule(at: deadline) { [loop, seen] in
        seen.mutate { $0.append(Seen(event: .timer, at: loop.now(), arrival: nil)) }
      }
      return (deadline, timer)
    }
  }

  /// Sends one byte to `socket` from a plain socket, off the loop (no wake-up of the loop).
  private func send(_ byte: UInt8, to socket: EventLoopUDPSocket) {
    var destination = sockaddr_in()
    destination.sin_family = sa_family_t(AF_INET)
    destination.sin_port = socket.localAddress.port.bigEndian
    destination.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var payload = byte
    let sent = withUnsafePointer(to: &destination) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        sendto(sender, &payload, 1, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    XCTAssertEqual(sent, 1)
  }

  func testADatagramWaitsForATimerDueWithinTheWindowAndIsReadJustBeforeIt() throws {
    let socket = try receiver(0, coalescing: .seconds(2))
    let deadline = scheduleTimer(after: .milliseconds(400))
    Thread.sleep(forTimeInterval: 0.05)
    let sentAt = ContinuousClock.now
    send(7, to: socket)
    XCTAssertTrue(eventually { self.seen.value.count == 2 })
    let entries = seen.value
    XCTAssertEqual(entries.map(\.event), [.datagram(socket: 0, payload: 7), .timer])
    // Read at the timer's wake-up, not when it arrived (≈ 350 ms before)...
    XCTAssertGreaterThanOrEqual(entries[0].at, deadline)
    // ...with the kernel's arrival time, from well before the read.
    guard let arrival = entries[0].arrival else { return XCTFail("no arrival time") }
    XCTAssertLessThan(arrival, deadline)
    XCTAssertLessThan(abs(MediaDuration(arrival - sentAt).seconds), 0.2)
    loop.submit { socket.close() }
  }

  func testWithoutATimerWithinTheWindowADatagramIsReadAsItArrives() throws {
    let socket = try receiver(0, coalescing: .milliseconds(100))
    let deadline = scheduleTimer(after: .seconds(3))
    Thread.sleep(forTimeInterval: 0.05)
    send(9, to: socket)
    XCTAssertTrue(eventually { !self.seen.value.isEmpty })
    let entries = seen.value
    XCTAssertEqual(entries.map(\.event), [.datagram(socket: 0, payload: 9)])
    XCTAssertLessThan(entries[0].at, deadline)
    loop.submit { socket.close() }
  }

  func testAWaitingDatagramRidesOnTheWakeUpOfAnImmediateSocket() throws {
    let waiting = try receiver(0, coalescing: .seconds(2))
    let immediate = try receiver(1, coalescing: .zero)
    let deadline = scheduleTimer(after: .milliseconds(600))
    Thread.sleep(forTimeInterval: 0.05)
    send(1, to: waiting)
    Thread.sleep(forTimeInterval: 0.15)
    let immediateSentAt = ContinuousClock.now
    send(2, to: immediate)
    XCTAssertTrue(eventually { self.seen.value.count == 3 })
    let entries = seen.value
    // Both read on the wake-up the immediate socket's datagram made, long before the timer.
    XCTAssertEqual(
      Set(entries.prefix(2).map(\.event)),
      [.datagram(socket: 0, payload: 1), .datagram(socket: 1, payload: 2)])
    XCTAssertEqual(entries.last?.event, .timer)
    for entry in entries.prefix(2) {
      XCTAssertGreaterThanOrEqual(entry.at, immediateSentAt)
      XCTAssertLessThan(entry.at, deadline)
    }
    loop.submit {
      waiting.close()
      immediate.close()
    }
  }
  /// A backlog larger than the socket's read budget (64 datagrams per readiness event, as a
  /// 1280x720 key frame's ~150 packets are) is read on the turns right after the first
  /// budget, not one budget per timer wake-up: with a second timer due within the window after
  /// the first, the rest would otherwise wait for that one.
  func testABacklogLargerThanTheReadBudgetDoesNotWaitForTheNextTimer() throws {
    let socket = try receiver(0, coalescing: .seconds(2))
    let first = scheduleTimer(after: .milliseconds(300))
    let second = scheduleTimer(after: .milliseconds(900))
    Thread.sleep(forTimeInterval: 0.05)
    for index in 0..<100 { send(UInt8(index), to: socket) }
    XCTAssertTrue(eventually { self.seen.value.count == 102 })
    let entries = seen.value
    let datagrams = entries.filter { $0.event != .timer }
    XCTAssertEqual(
      datagrams.map(\.event), (0..<100).map { .datagram(socket: 0, payload: UInt8($0)) })
    // All of them read at the first timer's wake-up (the first budget before it runs, the
    // rest on the turns right after), long before the second timer's.
    XCTAssertEqual(datagrams.filter { $0.at < first }.count, 0, "read before the timer")
    XCTAssertEqual(
      datagrams.filter { $0.at >= second - .milliseconds(300) }.count, 0,
      "waited for the second timer")
    XCTAssertEqual(entries.last?.event, .timer)
    loop.submit { socket.close() }
  }
  /// Work handed over from another thread wakes the loop through the wake pipe (always
  /// polled): a datagram waiting for a timer is read on that wake-up. When that work cancels
  /// the timer, nothing is due within the window any more and the next datagram is read as it
  /// arrives, not at the cancelled deadline.
  func testAWakeUpFromAnotherThreadServesAWaitingDatagramAndACancelledTimerEndsTheWait()
    throws
  {
    let socket = try receiver(0, coalescing: .seconds(2))
    let (deadline, timer) = scheduleCancellableTimer(after: .milliseconds(900))
    Thread.sleep(forTimeInterval: 0.05)
    send(1, to: socket)
    Thread.sleep(forTimeInterval: 0.15)
    let cancelledAt = ContinuousClock.now
    loop.execute { [loop] in loop.cancel(timer) }
    XCTAssertTrue(eventually { self.seen.value.count == 1 })
    Thread.sleep(forTimeInterval: 0.1)
    let secondSentAt = ContinuousClock.now
    send(2, to: socket)
    XCTAssertTrue(eventually { self.seen.value.count == 2 })
    let entries = seen.value
    XCTAssertEqual(
      entries.map(\.event), [.datagram(socket: 0, payload: 1), .datagram(socket: 0, payload: 2)])
    XCTAssertGreaterThanOrEqual(entries[0].at, cancelledAt)
    XCTAssertGreaterThanOrEqual(entries[1].at, secondSentAt)
    for entry in entries { XCTAssertLessThan(entry.at, deadline - .milliseconds(300)) }
    loop.submit { socket.close() }
  }
}
