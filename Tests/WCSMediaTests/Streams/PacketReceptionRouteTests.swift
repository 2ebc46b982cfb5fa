import TestSupport
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// The play driver finds a packet's source by its SSRC in the route list.
final class PacketReceptionRouteTests: XCTestCase {
  func testRouteFindsEachSourceBySSRC() {
    var reception = NativeMediaConnection.PacketReception()
    XCTAssertNil(reception.route(7))
    let video = NativeMediaConnection.ReceiveEntry(
      video: VideoReceiveStream(
        configuration: .init(source: .init(ssrc: 7, localSSRC: 1, clockRate: 90_000)),
        now: virtualTime(0)),
      ssrc: 7)
    let audio = NativeMediaConnection.ReceiveEntry(
      audio: AudioReceiveStream(
        configuration: .init(ssrc: 8, localSSRC: 1, clockRate: 48_000), now: virtualTime(0)),
      ssrc: 8)
    reception.routes = [video, audio]
    XCTAssertTrue(reception.route(7) === video)
    XCTAssertTrue(reception.route(8) === audio)
    XCTAssertNil(reception.route(9))
  }
}

/// A buffered (video) stream's released packets go out in the array of the previous release
/// handed back with `recycleReleased`: the same outputs as a stream whose arrays are never
/// handed back, whether the consumer let go of the array (decoded on the loop) or still holds
/// it (a queued decode job).
final class ReceiveStreamRecycleReleasedTests: XCTestCase {
  func testRecycledReleasesMatchFreshOnes() {
    var generator = SplitMix64(seed: 31)
    let origin = virtualTime(0)
    let configuration = VideoReceiveStream.Configuration(
      source: .init(ssrc: 5, localSSRC: 1, payloadType: 96, clockRate: 90_000))
    var fresh = VideoReceiveStream(configuration: configuration, now: origin)
    var recycled = VideoReceiveStream(configuration: configuration, now: origin)
    var held: [(packets: [ReceivedRTPPacket], sequenceNumbers: [UInt16])] = []
    var now = 0.0
    var sequences = LossyReorderedSequence(startingAt: 65_400, reorderDepth: 4)
    var released = 0
    for step in 0..<3000 {
      now += Double.random(in: 0...0.02, using: &generator)
      if Double.random(in: 0..<1, using: &generator) < 0.6 {
        let sequence = sequences.draw(using: &generator)
        let packet = streamTestPacket(
          ssrc: 5, sequenceNumber: sequence, timestamp: UInt32(sequence / 3) &* 3000)
        XCTAssertEqual(
          try? fresh.receive(packet, now: virtualTime(now)).get(),
          try? recycled.receive(packet, now: virtualTime(now)).get(), "step \(step)")
      } else {
        let expected = fresh.poll(now: virtualTime(now))
        let output = recycled.poll(now: virtualTime(now))
        XCTAssertEqual(output, expected, "step \(step)")
        released += output.packets.count
        // Now and then the consumer keeps the array (a queued job) while it is handed back.
        if Bool.random(using: &generator) {
          held.append((output.packets, output.packets.map(\.header.sequenceNumber)))
        }
        if held.count > 3 { held.removeFirst() }
        recycled.recycleReleased(output.packets)
      }
    }
    XCTAssertGreaterThan(released, 1000)
    // What the consumer kept is untouched by the recycling.
    XCTAssertFalse(held.isEmpty)
    for kept in held {
      XCTAssertEqual(kept.packets.map(\.header.sequenceNumber), kept.sequenceNumbers)
    }
  }
}
