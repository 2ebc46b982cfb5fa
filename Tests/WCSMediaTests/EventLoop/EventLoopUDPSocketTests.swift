import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

final class EventLoopUDPSocketTests: XCTestCase {
  private var loop = EventLoop(label: "EventLoopUDPSocketTests")

  override func tearDown() {
    loop.shutdown()
    super.tearDown()
  }

  private struct Received: Sendable, Equatable {
    var bytes: [UInt8]
    var source: ICETransportAddress
    var onLoop: Bool
  }

  /// A sends datagrams of many sizes to B, B echoes each back; both sides see every payload
  /// intact, from the other's bound address, on the loop.
  func testTwoSocketsExchangeDatagramsThroughTheLoop() throws {
    try exchange(on: .loopbackV4)
  }

  func testIPv6Loopback() throws {
    guard let ip = ICEIPAddress("::1") else { return XCTFail("::1 did not parse") }
    let probe = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
    defer { if probe >= 0 { close(probe) } }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
      }
    }
    guard probe >= 0, bound == 0 else { throw XCTSkip("no IPv6 loopback on this machine") }
    try exchange(on: ip)
  }

  private func exchange(on ip: ICEIPAddress) throws {
    let payloads: [[UInt8]] = [
      [0x01], Array(0..<200), [UInt8](repeating: 0xAB, count: 1200),
      [UInt8](repeating: 0x5A, count: 9000), (0..<64).map { UInt8($0 * 3 & 0xFF) },
    ]
    let atB = LoopShared<[Received]>([])
    let atA = LoopShared<[Received]>([])
    let sockets = try loop.submit { () throws -> [EventLoopUDPSocket] in
      let any = ICETransportAddress(ip: ip, port: 0)
      let a = try EventLoopUDPSocket(loop: loop, bindingTo: any) { [loop] bytes, source in
        atA.mutate {
          $0.append(Received(bytes: Array(bytes), source: source, onLoop: loop.inEventLoop))
        }
      }
      var echo: EventLoopUDPSocket?
      let b = try EventLoopUDPSocket(loop: loop, bindingTo: any) { [loop] bytes, source in
        atB.mutate {
          $0.append(Received(bytes: Array(bytes), source: source, onLoop: loop.inEventLoop))
        }
        _ = try? echo?.send(bytes, to: source)
      }
      echo = b
      return [a, b]
    }
    let (a, b) = (sockets[0], sockets[1])
    XCTAssertEqual(a.localAddress.ip, ip)
    XCTAssertNotEqual(a.localAddress.port, 0)
    XCTAssertNotEqual(a.localAddress.port, b.localAddress.port)
    try loop.submit {
      for payload in payloads { XCTAssertTrue(try a.send(payload, to: b.localAddress)) }
    }
    XCTAssertTrue(eventually { atA.value.count == payloads.count })
    XCTAssertEqual(atB.value.map(\.bytes), payloads)
    XCTAssertEqual(atA.value.map(\.bytes), payloads)
    XCTAssertEqual(Set(atB.value.map(\.source)), [a.localAddress])
    XCTAssertEqual(Set(atA.value.map(\.source)), [b.localAddress])
    XCTAssertTrue(atA.value.allSatisfy(\.onLoop) && atB.value.allSatisfy(\.onLoop))
    let total = payloads.reduce(0) { $0 + $1.count }
    loop.submit {
      XCTAssertEqual(a.datagramsSent, payloads.count)
      XCTAssertEqual(a.bytesSent, total)
      XCTAssertEqual(b.datagramsReceived, payloads.count)
      XCTAssertEqual(b.bytesReceived, total)
      a.close()
      b.close()
    }
  }

  func testSendErrorsAreTypedAndCloseIsFinal() throws {
    try loop.submit {
      let socket = try EventLoopUDPSocket(
        loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)
      ) { _, _ in }
      let v6 = ICETransportAddress(ip: .v6(0, 1), port: 9)
      XCTAssertThrowsError(try socket.send([1], to: v6)) {
        XCTAssertEqual(
          $0 as? EventLoopError,
          .addressFamilyMismatch(local: socket.localAddress, destination: v6))
      }
      let huge = [UInt8](repeating: 0, count: 70_000)
      XCTAssertThrowsError(try socket.send(huge, to: socket.localAddress)) {
        XCTAssertEqual($0 as? EventLoopError, .datagramTooLarge(bytes: 70_000))
      }
      socket.close()
      socket.close()
      XCTAssertThrowsError(try socket.send([1], to: socket.localAddress)) {
        XCTAssertEqual($0 as? EventLoopError, .socketClosed)
      }
    }
  }

  func testPortRangeSkipsPortsInUse() throws {
    try loop.submit {
      let first = try EventLoopUDPSocket(
        loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)
      ) { _, _ in }
      let taken = first.localAddress.port
      guard taken < UInt16.max - 20 else { return }
      let second = try EventLoopUDPSocket(
        loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0),
        portRange: taken...(taken + 20)
      ) { _, _ in }
      XCTAssertTrue(((taken + 1)...(taken + 20)).contains(second.localAddress.port))
      XCTAssertThrowsError(
        try EventLoopUDPSocket(
          loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0),
          portRange: taken...taken
        ) { _, _ in }
      ) {
        XCTAssertEqual(
          $0 as? EventLoopError,
          .bindFailed(address: ICETransportAddress(ip: .loopbackV4, port: 0), errno: EADDRINUSE))
      }
      first.close()
      second.close()
    }
  }
}
