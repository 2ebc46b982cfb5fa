import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// Our TURN client against coturn on 127.0.0.1 over real UDP sockets.
final class TURNInteropTests: XCTestCase {
  func testAllocatePermissionSendAndDataWithCoturn() throws {
    let coturn = try CoturnTestServer()
    defer { coturn.stop() }

    func now() -> MediaInstant { MediaInstant.now() }
    let socket = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
    let peer = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
    let server = coturn.server
    let client = TURNClient(server: server, socket: 0)
    var events: [TURNEvent] = []
    func pump(until done: () -> Bool, timeout: Double) throws {
      let limit = now() + .seconds(timeout)
      while !done() && now() < limit {
        for datagram in client.takeDatagrams() {
          try socket.send(datagram.bytes, to: datagram.destination)
        }
        if let deadline = client.nextDeadline, deadline <= now() {
          client.handleTimeout(now: now())
          continue
        }
        if let (bytes, source) = try socket.receive(timeout: 0.02), source == server.address {
          client.receive(bytes, now: now())
        }
        events += client.takeEvents()
      }
    }

    // coturn may still be starting: the Allocate retransmissions cover that.
    client.start(now: now())
    try pump(until: { client.relayedAddress != nil || client.failed }, timeout: 10)
    let relayed = try XCTUnwrap(client.relayedAddress, "no allocation: \(events)")
    XCTAssertEqual(relayed.ip, .loopbackV4)
    guard case .allocated(_, let mapped, let lifetime) = events.first else {
      return XCTFail("unexpected events \(events)")
    }
    XCTAssertEqual(mapped, socket.localAddress)
    XCTAssertGreaterThan(lifetime, 0)

    // CreatePermission + Send indication; the peer sees the data from the relayed address.
    client.send(Array("hello".utf8), to: peer.localAddress, now: now())
    try pump(until: { false }, timeout: 0.3)
    var received = try peer.receive(timeout: 2)
    if received == nil {
      // The first Send may overtake the permission on a busy machine; send once more.
      client.send(Array("hello".utf8), to: peer.localAddress, now: now())
      try pump(until: { false }, timeout: 0.1)
      received = try peer.receive(timeout: 2)
    }
    XCTAssertEqual(received?.bytes, Array("hello".utf8))
    XCTAssertEqual(received?.source, relayed)

    // The peer answers to the relayed address; it comes back in a Data indication.
    try peer.send(Array("world".utf8), to: relayed)
    try pump(
      until: { events.contains(.data(peer: peer.localAddress, bytes: Array("world".utf8))) },
      timeout: 5)
    XCTAssertTrue(events.contains(.data(peer: peer.localAddress, bytes: Array("world".utf8))))
    XCTAssertFalse(client.failed)
    client.close(now: now())
    try pump(until: { false }, timeout: 0.2)
  }
}
