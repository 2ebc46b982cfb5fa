import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// `EventLoopUDPSocket` with a `NetworkEmulation`: the emulator's verdicts applied to real
/// datagrams on 127.0.0.1, sending before `sendto` and receiving after `recvfrom`.
final class EventLoopUDPSocketEmulationTests: XCTestCase {
  private let loop = EventLoop(label: "EventLoopUDPSocketEmulationTests")

  override func tearDown() {
    loop.shutdown()
    super.tearDown()
  }

  private struct Arrival: Sendable {
    var bytes: [UInt8]
    /// When the handler ran and the `datagramArrival` it saw, on the loop's clock.
    var handled: ContinuousClock.Instant
    var arrival: ContinuousClock.Instant?
  }

  /// A sender and a receiver socket; `emulation` goes on the one `on` says.
  private func pair(
    _ emulation: NetworkEmulation, on direction: NetworkDirection
  ) throws -> (sender: EventLoopUDPSocket, receiver: EventLoopUDPSocket, got: LoopShared<[Arrival]>)
  {
    let got = LoopShared<[Arrival]>([])
    let sockets = try loop.submit { [loop] () throws -> [EventLoopUDPSocket] in
      let any = ICETransportAddress(ip: .loopbackV4, port: 0)
      let sender = try EventLoopUDPSocket(
        loop: loop, bindingTo: any, emulation: direction == .send ? emulation : nil
      ) { _, _ in }
      let receiver = try EventLoopUDPSocket(
        loop: loop, bindingTo: any, emulation: direction == .receive ? emulation : nil
      ) { bytes, _ in
        let arrival = Arrival(
          bytes: Array(bytes), handled: loop.now(), arrival: loop.datagramArrival?.continuousInstant
        )
        got.mutate { $0.append(arrival) }
      }
      return [sender, receiver]
    }
    return (sockets[0], sockets[1], got)
  }

  private func payloads(_ count: Int) -> [[UInt8]] {
    (0..<count).map { [UInt8(truncatingIfNeeded: $0), 0xEE, UInt8(truncatingIfNeeded: $0 * 7)] }
  }

  func testSendDelayHoldsDatagramsBeforeSendtoAndKeepsTheirOrder() throws {
    let emulation = NetworkEmulation(
      send: NetworkConditions(delay: .milliseconds(50), jitter: .milliseconds(10)), seed: 1)
    let (sender, receiver, got) = try pair(emulation, on: .send)
    let sent = payloads(10)
    let (start, sentAtOnce) = try loop.submit { () throws -> (ContinuousClock.Instant, Int) in
      for payload in sent { XCTAssertTrue(try sender.send(payload, to: receiver.localAddress)) }
      return (loop.now(), sender.datagramsSent)
    }
    XCTAssertEqual(sentAtOnce, 0, "held, not yet handed to the kernel")
    XCTAssertTrue(eventually { got.value.count == sent.count })
    XCTAssertEqual(got.value.map(\.bytes), sent)
    // 50 ms less the 3σ cut, and the loop's millisecond timer rounding.
    for arrival in got.value {
      XCTAssertGreaterThanOrEqual(arrival.handled - start, .milliseconds(19))
    }
    loop.submit {
      XCTAssertEqual(sender.datagramsSent, sent.count)
      XCTAssertEqual(sender.emulationStatistics.send.delayed, sent.count)
      XCTAssertEqual(sender.emulationStatistics.receive, NetworkEmulatorStatistics())
      sender.close()
      receiver.close()
    }
    XCTAssertEqual(emulation.counters.statistics.send.delayed, sent.count)
  }

  func testReceiveDelayGivesTheEmulatedArrivalTime() throws {
    let emulation = NetworkEmulation(receive: NetworkConditions(delay: .milliseconds(40)))
    let (sender, receiver, got) = try pair(emulation, on: .receive)
    let start = try loop.submit { () throws -> ContinuousClock.Instant in
      let start = loop.now()
      try sender.send([1, 2, 3], to: receiver.localAddress)
      return start
    }
    XCTAssertTrue(eventually { got.value.count == 1 })
    let arrival = try XCTUnwrap(got.value.first?.arrival)
    XCTAssertGreaterThanOrEqual(arrival - start, .milliseconds(40))
    XCTAssertLessThan(arrival - start, .milliseconds(60))
    let handled = try XCTUnwrap(got.value.first?.handled)
    XCTAssertLessThanOrEqual(arrival, handled)
    loop.submit {
      // Read at once, handed on 40 ms later.
      XCTAssertEqual(receiver.datagramsReceived, 1)
      XCTAssertEqual(receiver.emulationStatistics.receive.delayed, 1)
      sender.close()
      receiver.close()
    }
  }

  func testReceiveLossDropsAfterRecvfromAndCountsIt() throws {
    let emulation = NetworkEmulation(receive: NetworkConditions(loss: .random(rate: 1)))
    let (sender, receiver, got) = try pair(emulation, on: .receive)
    try loop.submit {
      for payload in payloads(20) { try sender.send(payload, to: receiver.localAddress) }
    }
    XCTAssertTrue(eventually { self.loop.submit { receiver.datagramsReceived } == 20 })
    XCTAssertTrue(got.value.isEmpty)
    loop.submit {
      XCTAssertEqual(sender.datagramsSent, 20)
      XCTAssertEqual(receiver.emulationStatistics.receive.lost, 20)
      sender.close()
      receiver.close()
    }
    XCTAssertEqual(emulation.counters.statistics.receive.lost, 20)
    XCTAssertEqual(emulation.counters.statistics.receive.delivered, 0)
  }

  func testDuplicationDeliversEachDatagramTwiceInOrder() throws {
    let emulation = NetworkEmulation(receive: NetworkConditions(duplicateRate: 1))
    let (sender, receiver, got) = try pair(emulation, on: .receive)
    let sent = payloads(5)
    try loop.submit {
      for payload in sent { try sender.send(payload, to: receiver.localAddress) }
    }
    XCTAssertTrue(eventually { got.value.count == 10 })
    XCTAssertEqual(got.value.map(\.bytes), sent.flatMap { [$0, $0] })
    loop.submit {
      sender.close()
      receiver.close()
    }
  }

  func testClosingDropsWhatIsHeld() throws {
    let emulation = NetworkEmulation(both: NetworkConditions(delay: .milliseconds(30)))
    let (sender, receiver, got) = try pair(emulation, on: .send)
    try loop.submit {
      for payload in payloads(5) { try sender.send(payload, to: receiver.localAddress) }
      sender.close()
    }
    Thread.sleep(forTimeInterval: 0.1)
    XCTAssertTrue(got.value.isEmpty)
    loop.submit {
      XCTAssertEqual(sender.datagramsSent, 0)
      XCTAssertEqual(sender.delayedSendFailures, 0)
      receiver.close()
    }
  }
}
