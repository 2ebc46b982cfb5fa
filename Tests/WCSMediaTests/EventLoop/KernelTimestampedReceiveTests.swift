import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// The edges of the kernel-timestamped receive: the order the clocks are read in, IPv6
/// senders, oversized datagrams, and sockets whose datagrams carry no time.
final class KernelTimestampedReceiveTests: XCTestCase {
  private struct Seen: Sendable {
    var count: Int
    var source: ICETransportAddress
    var arrival: ContinuousClock.Instant?
    var handledAt: ContinuousClock.Instant
  }

  func testAPauseBetweenTheClockReadingsNeverMakesTheArrivalEarlierThanTheKernelStamp() {
    // Wall clock and loop clock advance together; each reading takes 5 ms (the thread is
    // preempted right after it). The datagram arrived 2 ms before the first reading.
    let monotonicOrigin = ContinuousClock.now
    let wallOrigin = 1_800_000_000
    var elapsed = Duration.zero
    let truth = monotonicOrigin - .milliseconds(2)
    let arrival = EventLoopUDPSocket.arrival(
      kernelTime: timespec(tv_sec: wallOrigin - 1, tv_nsec: 998_000_000),
      wallClock: {
        defer { elapsed += .milliseconds(5) }
        return timespec(
          tv_sec: wallOrigin, tv_nsec: Int(elapsed.components.attoseconds / 1_000_000_000))
      },
      monotonic: {
        defer { elapsed += .milliseconds(5) }
        return monotonicOrigin + elapsed
      })
    // Reading the loop's clock first would give 7 ms of age against it: 5 ms before the truth.
    XCTAssertGreaterThanOrEqual(arrival, truth)
    XCTAssertEqual(arrival, truth + .milliseconds(5))
    // No kernel time: the loop's clock alone, the wall clock not read.
    var wallReadings = 0
    let now = ContinuousClock.now
    XCTAssertEqual(
      EventLoopUDPSocket.arrival(
        kernelTime: timespec(),
        wallClock: {
          wallReadings += 1
          return timespec()
        }, monotonic: { now }), now)
    XCTAssertEqual(wallReadings, 0)
  }

  /// A UDP socket of `family` bound to loopback port 0, with its port.
  private func boundSocket(family: Int32) throws -> (descriptor: Int32, port: UInt16) {
    let descriptor = socket(family, Int32(SOCK_DGRAM.rawValue), 0)
    guard descriptor >= 0 else { throw XCTSkip("no socket of family \(family)") }
    let address: ICETransportAddress =
      family == AF_INET6
      ? ICETransportAddress(ip: .v6(0, 1), port: 0)
      : ICETransportAddress(ip: .loopbackV4, port: 0)
    let bound = SocketAddress.with(address) { bind(descriptor, $0, $1) }
    guard bound == 0 else {
      close(descriptor)
      throw XCTSkip("cannot bind loopback of family \(family)")
    }
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(descriptor, $0, &length)
      }
    }
    let port = withUnsafePointer(to: &storage) { SocketAddress.decode($0)?.port } ?? 0
    return (descriptor, port)
  }

  func testAnIPv6SenderIsReadWithItsArrivalAndAnOversizedDatagramIsDropped() throws {
    let loop = EventLoop(label: "KernelTimestampedReceiveTests")
    defer { loop.shutdown() }
    let seen = LoopShared<[Seen]>([])
    let receiver: EventLoopUDPSocket
    do {
      receiver = try loop.submit { () throws -> EventLoopUDPSocket in
        try EventLoopUDPSocket(
          loop: loop, bindingTo: ICETransportAddress(ip: .v6(0, 1), port: 0)
        ) { [loop] bytes, source in
          let entry = Seen(
            count: bytes.count, source: source, arrival: loop.datagramArrival?.continuousInstant,
            handledAt: loop.now())
          seen.mutate { $0.append(entry) }
        }
      }
    } catch {
      throw XCTSkip("no IPv6 loopback: \(error)")
    }
    defer { loop.submit { receiver.close() } }
    let sender = try boundSocket(family: AF_INET6)
    defer { close(sender.descriptor) }
    // A small one, the largest UDP payload over IPv6 (65,535 − 8: 20 bytes more than the
    // loop's receive buffer, sized for IPv4), and a small one again. Cut to the buffer, the big
    // one would look whole: it is dropped and counted.
    let sentAt = ContinuousClock.now
    for size in [3, 65_527, 4] {
      let payload = [UInt8](repeating: 0xA5, count: size)
      let sent = SocketAddress.with(receiver.localAddress) { address, length in
        payload.withUnsafeBytes {
          sendto(sender.descriptor, $0.baseAddress, $0.count, 0, address, length)
        }
      }
      XCTAssertEqual(sent, size)
    }
    XCTAssertTrue(eventually { seen.value.count == 2 })
    let entries = seen.value
    XCTAssertEqual(entries.map(\.count), [3, 4])
    XCTAssertEqual(loop.submit { receiver.datagramsTruncated }, 1)
    XCTAssertEqual(loop.submit { receiver.datagramsReceived }, 2)
    for entry in entries {
      XCTAssertEqual(entry.source, ICETransportAddress(ip: .v6(0, 1), port: sender.port))
      guard let arrival = entry.arrival else { return XCTFail("no arrival") }
      XCTAssertGreaterThanOrEqual(arrival - sentAt, .milliseconds(-1))
      XCTAssertLessThanOrEqual(arrival, entry.handledAt)
    }
  }

  func testWithoutTimestampsTheShimReportsNoneAndTheArrivalIsNow() throws {
    // A socket that never asked for SO_TIMESTAMPNS stands in for one that refused it.
    let receiver = try boundSocket(family: AF_INET)
    defer { close(receiver.descriptor) }
    // Blocking reads, but never for ever.
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    XCTAssertEqual(
      setsockopt(
        receiver.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout,
        socklen_t(MemoryLayout<timeval>.size)), 0)
    let sender = try boundSocket(family: AF_INET)
    defer { close(sender.descriptor) }
    func exchange() -> (count: Int, seconds: Int64, nanoseconds: Int64, source: UInt16?) {
      var payload: [UInt8] = [1, 2, 3, 4, 5]
      _ = SocketAddress.with(ICETransportAddress(ip: .loopbackV4, port: receiver.port)) {
        sendto(sender.descriptor, &payload, payload.count, 0, $0, $1)
      }
      let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
      defer { buffer.deallocate() }
      var storage = sockaddr_storage()
      var length = UInt32(MemoryLayout<sockaddr_storage>.size)
      let result = withUnsafeMutablePointer(to: &storage) {
        KernelTimestampedReceive.receive(
          receiver.descriptor, into: buffer, address: UnsafeMutableRawPointer($0),
          length: &length)
      }
      XCTAssertEqual(Int(length), MemoryLayout<sockaddr_in>.size)
      let source = withUnsafePointer(to: &storage) { SocketAddress.decode($0)?.port }
      return (
        result.count, Int64(result.kernelTime.tv_sec), Int64(result.kernelTime.tv_nsec), source
      )
    }
    let plain = exchange()
    XCTAssertEqual(plain.count, 5)
    XCTAssertEqual(plain.source, sender.port)
    XCTAssertEqual(plain.seconds, 0)
    XCTAssertEqual(plain.nanoseconds, 0)
    let now = ContinuousClock.now
    XCTAssertEqual(
      EventLoopUDPSocket.arrival(
        kernelTime: timespec(tv_sec: Int(plain.seconds), tv_nsec: Int(plain.nanoseconds)),
        wallClock: EventLoopUDPSocket.readWallClock, monotonic: { now }), now)
    // Once asked for, the time comes with the next datagram: close to the wall clock.
    XCTAssertTrue(KernelTimestampedReceive.enable(on: receiver.descriptor))
    let stamped = exchange()
    XCTAssertEqual(stamped.count, 5)
    let wall = EventLoopUDPSocket.readWallClock()
    XCTAssertEqual(Double(stamped.seconds), Double(wall.tv_sec), accuracy: 2)
    XCTAssertTrue((0..<1_000_000_000).contains(stamped.nanoseconds))
    // Not a socket: refused, which the socket takes as "no times" (best effort).
    var ends: [Int32] = [-1, -1]
    XCTAssertEqual(pipe(&ends), 0)
    defer { ends.forEach { close($0) } }
    XCTAssertFalse(KernelTimestampedReceive.enable(on: ends[0]))
  }
}
