import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection

/// Two PeerConnections on loopback with `loss=10%,delay=20ms` on the offerer's sockets (both
/// directions of its link), at a fixed seed: ICE and DTLS get through the loss, media flows with
/// the emulated loss and delay, and the emulator's counters say what it did.
final class PeerConnectionNetworkEmulationTests: XCTestCase {
  func testLossyDelayedLinkConnectsAndCarriesMediaWithCountedDrops() throws {
    var configuration = PeerConnectionConfiguration.loopback
    let emulation = try NetworkEmulation(spec: "loss=10%,delay=20ms,seed=11")
    configuration.networkEmulation = emulation
    let peers = LoopbackPeers(offererConfiguration: configuration)
    defer { peers.shutdown() }
    try peers.negotiate()
    XCTAssertTrue(
      peers.waitForBoth({ $0 == .connected }, timeout: 30),
      "states: \(peers.offererRecorder.states) / \(peers.answererRecorder.states)")

    let toAnswerer = TestMedia.packets(ssrc: 0x1111_2222, count: 400, seed: 1)
    let toOfferer = TestMedia.packets(ssrc: 0x3333_4444, count: 400, seed: 2)
    let (sendStart, before) = try peers.loop.submit {
      () throws -> (ContinuousClock.Instant, NetworkEmulationStatistics) in
      (peers.loop.now(), peers.offerer.networkEmulationStatistics)
    }
    try peers.send(toAnswerer, from: peers.offerer)
    try peers.send(toOfferer, from: peers.answerer)
    // Everything sent is delivered or dropped within the 20 ms delay; wait for the counts to
    // settle rather than for a time.
    var counts = (0, 0)
    XCTAssertTrue(
      eventually {
        let now = (
          peers.answererRecorder.rtp.value.count, peers.offererRecorder.rtp.value.count
        )
        defer { counts = now }
        return now == counts && now.0 > 0 && now.1 > 0
          && peers.loop.submit { peers.loop.now() - sendStart } > .milliseconds(300)
      })
    let atAnswerer = peers.answererRecorder.rtp.value.map(\.packet)
    let atOfferer = peers.offererRecorder.rtp.value.map(\.packet)
    // 10 % lost each way (binomial σ over 400: 6 packets), and nothing else changed.
    XCTAssertEqual(Double(atAnswerer.count) / 400, 0.9, accuracy: 0.06)
    XCTAssertEqual(Double(atOfferer.count) / 400, 0.9, accuracy: 0.06)
    XCTAssertTrue(atAnswerer.allSatisfy(toAnswerer.contains))
    XCTAssertTrue(atOfferer.allSatisfy(toOfferer.contains))
    // Delay without jitter keeps the order.
    XCTAssertEqual(
      atAnswerer.map(\.header.sequenceNumber), atAnswerer.map(\.header.sequenceNumber).sorted())

    let statistics = peers.loop.submit { peers.offerer.networkEmulationStatistics }
    let send = statistics.send
    let receive = statistics.receive
    // The test sends no RTCP: beside the 400 packets only ICE consent checks, if one was due.
    XCTAssertEqual(send.datagrams - before.send.datagrams, 400, accuracy: 2)
    XCTAssertEqual(send.lost - before.send.lost, 400 - atAnswerer.count, accuracy: 2)
    XCTAssertGreaterThan(send.lost, 0)
    XCTAssertGreaterThan(receive.lost, 0)
    XCTAssertEqual(receive.lost - before.receive.lost, 400 - atOfferer.count, accuracy: 2)
    XCTAssertEqual(send.delayed, send.datagrams - send.lost)
    XCTAssertEqual(receive.delayed, receive.datagrams - receive.lost)
    XCTAssertEqual(send.duplicated + send.reordered + receive.duplicated + receive.reordered, 0)
    // One connection made with this emulation: its shared counters are the connection's.
    XCTAssertEqual(emulation.counters.statistics, statistics)
    // The answerer has no emulation.
    XCTAssertEqual(
      peers.loop.submit { peers.answerer.networkEmulationStatistics },
      NetworkEmulationStatistics())
  }

}
