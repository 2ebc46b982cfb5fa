import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

final class EventLoopTCPSocketTests: XCTestCase {
  private var loop = EventLoop(label: "EventLoopTCPSocketTests")

  override func tearDown() {
    loop.shutdown()
    super.tearDown()
  }

  /// What one side of a test connection saw, written on the loop.
  private struct Seen: Sendable {
    var connected = false
    var bytes: [UInt8] = []
    var closed: EventLoopTCPError?? = nil
  }

  private static func record(_ seen: LoopShared<Seen>) -> EventLoopTCPSocket.EventHandler {
    { event in
      switch event {
      case .connected: seen.mutate { $0.connected = true }
      case .received(let bytes): seen.mutate { $0.bytes += Array(bytes) }
      case .closed(let error): seen.mutate { $0.closed = .some(error) }
      }
    }
  }

  /// 4 MiB each way through a listener's accepted socket: what the kernel does not take at
  /// once is queued and written later; both sides read every byte in order.
  func testConnectAcceptAndExchangeMegabytesInOrder() throws {
    let server = LoopShared(Seen())
    let client = LoopShared(Seen())
    let accepted = LoopShared<EventLoopTCPSocket?>(nil)
    let payload = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
    let (listener, socket) = try loop.submit {
      () throws(EventLoopTCPError) -> (EventLoopTCPListener, EventLoopTCPSocket) in
      let listener = try EventLoopTCPListener(
        loop: loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0),
        maximumQueuedBytes: 8 << 20
      ) { socket in
        socket.setEventHandler(Self.record(server))
        accepted.mutate { $0 = socket }
      }
      let socket = try EventLoopTCPSocket.connect(
        loop: loop, to: listener.localAddress, maximumQueuedBytes: 8 << 20,
        onEvent: Self.record(client))
      // Queued before the connection is up, sent once it is.
      try socket.write(payload)
      return (listener, socket)
    }
    XCTAssertTrue(eventually { server.value.bytes.count == payload.count })
    XCTAssertTrue(client.value.connected)
    XCTAssertTrue(server.value.bytes == payload, "payload differs")
    try loop.submit { () throws(EventLoopTCPError) in
      try accepted.value?.write(payload.reversed())
    }
    XCTAssertTrue(eventually { client.value.bytes.count == payload.count })
    XCTAssertTrue(client.value.bytes == payload.reversed(), "payload differs")
    let counts = loop.submit { (socket.bytesSent, socket.queuedBytes, listener.accepted) }
    XCTAssertEqual(counts.0, payload.count)
    XCTAssertEqual(counts.1, 0)
    XCTAssertEqual(counts.2, 1)
    // The peer closing in order is reported as `.closed(nil)`.
    loop.submit { accepted.value?.close() }
    XCTAssertTrue(eventually { client.value.closed != nil })
    XCTAssertEqual(client.value.closed, .some(nil))
    XCTAssertTrue(loop.submit { socket.isClosed })
    loop.submit { listener.close() }
  }

  /// A write past the bound is refused whole while the peer does not read, and nothing of it
  /// is queued.
  func testWriteQueueIsBounded() throws {
    // A plain listener whose accepted connection is never read: the kernel buffers fill.
    let listener = try loopbackTCPSocket(listening: 8)
    defer { close(listener.descriptor) }
    let socket = try loop.submit { () throws(EventLoopTCPError) -> EventLoopTCPSocket in
      try EventLoopTCPSocket.connect(
        loop: loop, to: listener.address, maximumQueuedBytes: 1 << 20
      ) { _ in }
    }
    let accepted = accept(listener.descriptor, nil, nil)
    defer { close(accepted) }
    XCTAssertGreaterThanOrEqual(accepted, 0)
    XCTAssertTrue(eventually { self.loop.submit { socket.isConnected } })
    let chunk = [UInt8](repeating: 7, count: 256 << 10)
    let refusal = LoopShared<EventLoopTCPError?>(nil)
    XCTAssertTrue(
      eventually(timeout: 10) {
        self.loop.submit {
          do throws(EventLoopTCPError) {
            try socket.write(chunk)
          } catch {
            refusal.mutate { $0 = error }
          }
        }
        return refusal.value != nil
      })
    guard case .writeBufferFull(let queued, let offered, let limit) = refusal.value else {
      return XCTFail("\(String(describing: refusal.value))")
    }
    XCTAssertEqual(offered, chunk.count)
    XCTAssertEqual(limit, 1 << 20)
    XCTAssertLessThanOrEqual(queued, limit)
    XCTAssertGreaterThan(queued + offered, limit)
    let (queuedNow, sent) = loop.submit { (socket.queuedBytes, socket.bytesSent) }
    XCTAssertEqual(queuedNow, queued)
    XCTAssertGreaterThan(sent, 0)
    loop.submit { socket.close() }
  }

  /// A peer that resets the connection (RST) ends it with `.connectionFailed`; a write that
  /// hits the reset throws, and the `.closed` event never comes from inside the write.
  func testResetByThePeerEndsTheConnectionOutsideTheWrite() throws {
    let listener = try loopbackTCPSocket(listening: 4)
    defer { close(listener.descriptor) }
    let seen = LoopShared(Seen())
    let inWrite = LoopShared(false)
    let closedInsideWrite = LoopShared(false)
    let socket = try loop.submit { () throws(EventLoopTCPError) -> EventLoopTCPSocket in
      try EventLoopTCPSocket.connect(loop: loop, to: listener.address) { event in
        if case .closed = event, inWrite.value { closedInsideWrite.mutate { $0 = true } }
        Self.record(seen)(event)
      }
    }
    let accepted = accept(listener.descriptor, nil, nil)
    XCTAssertGreaterThanOrEqual(accepted, 0)
    XCTAssertTrue(eventually { seen.value.connected })
    // SO_LINGER with a zero timeout: close() sends RST instead of FIN.
    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
    setsockopt(accepted, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    close(accepted)
    usleep(50_000)
    let thrown = loop.submit { () -> EventLoopTCPError? in
      inWrite.mutate { $0 = true }
      defer { inWrite.mutate { $0 = false } }
      do throws(EventLoopTCPError) {
        for _ in 0..<4 { try socket.write([UInt8](repeating: 1, count: 1000)) }
        return nil
      } catch {
        return error
      }
    }
    XCTAssertTrue(eventually { seen.value.closed != nil })
    XCTAssertFalse(closedInsideWrite.value)
    let closed = try XCTUnwrap(seen.value.closed)
    guard case .connectionFailed(let code) = closed else {
      return XCTFail("\(String(describing: closed))")
    }
    XCTAssertTrue(code == ECONNRESET || code == EPIPE, "errno \(code)")
    // Either the write found the socket reset (thrown) or the read saw it first (closed).
    if let thrown {
      XCTAssertTrue(
        thrown == .socketClosed || thrown == .connectionFailed(errno: code), "\(thrown)")
    }
    XCTAssertTrue(loop.submit { socket.isClosed })
  }

  /// A refused port reports `.connectFailed(ECONNREFUSED)`; a listener whose backlog is full
  /// (it never accepts) times the connect out; neither leaks a descriptor.
  func testRefusedAndTimedOutConnectsEndCleanly() throws {
    // A port bound (so no other process can listen there) but not listening: refused.
    let bound = try loopbackTCPSocket(listening: nil)
    defer { close(bound.descriptor) }
    let port = bound.address.port
    let before = openDescriptorCount
    let refused = LoopShared(Seen())
    // Kept: a socket let go of is closed without an event.
    let refusedSocket = try loop.submit { () throws(EventLoopTCPError) -> EventLoopTCPSocket in
      try EventLoopTCPSocket.connect(
        loop: loop, to: ICETransportAddress(ip: .loopbackV4, port: port),
        onEvent: Self.record(refused))
    }
    XCTAssertTrue(eventually { refused.value.closed != nil })
    XCTAssertEqual(
      refused.value.closed,
      .some(
        .connectFailed(
          address: ICETransportAddress(ip: .loopbackV4, port: port), errno: ECONNREFUSED)))
    XCTAssertFalse(refused.value.connected)
    XCTAssertTrue(loop.submit { refusedSocket.isClosed })
    XCTAssertEqual(openDescriptorCount, before)

    // A listener that never accepts, its backlog full: later SYNs go unanswered (nothing
    // leaves 127.0.0.1).
    let stuck = try loopbackTCPSocket(listening: 0)
    defer { close(stuck.descriptor) }
    let stuckAddress = stuck.address
    let fillers = LoopShared<[EventLoopTCPSocket]>([])
    let timedOut = LoopShared(Seen())
    let afterListener = openDescriptorCount
    // The backlog of 0 takes one or two connections; the rest wait for the timeout.
    try loop.submit { () throws(EventLoopTCPError) in
      for _ in 0..<4 {
        let filler = try EventLoopTCPSocket.connect(
          loop: loop, to: stuckAddress, timeout: .milliseconds(300)
        ) { _ in }
        fillers.mutate { $0.append(filler) }
      }
      let socket = try EventLoopTCPSocket.connect(
        loop: loop, to: stuckAddress, timeout: .milliseconds(300),
        onEvent: Self.record(timedOut))
      fillers.mutate { $0.append(socket) }
    }
    XCTAssertTrue(eventually(timeout: 5) { timedOut.value.closed != nil })
    XCTAssertEqual(
      timedOut.value.closed, .some(.connectTimedOut(address: stuckAddress, seconds: 0.3)))
    loop.submit { for filler in fillers.value { filler.close() } }
    XCTAssertEqual(openDescriptorCount, afterListener)
  }
}
