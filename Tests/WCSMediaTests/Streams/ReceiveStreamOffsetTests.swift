import TestSupport
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// The play driver keeps its times as offsets from one origin: a receive stream's deadline comes
/// as an offset from the stream's origin (`scheduledDeadlineOffset()`) and the last packet's
/// arrival is the stream's (`lastPacketAt`, once a stored property of the driver's entry, written
/// for every packet routed to it, taken or not).
final class ReceiveStreamOffsetTests: XCTestCase {
  func testDeadlineOffsetAndLastPacketMatchTheInstantsThroughLossReorderAndForeignPackets() {
    for buffersPackets in [true, false] {
      var generator = SplitMix64(seed: buffersPackets ? 21 : 22)
      let origin = virtualTime(3.25)
      var stream = RTPReceiveStream(
        configuration: .init(
          ssrc: 5, localSSRC: 1, payloadType: 96, clockRate: 90_000,
          nackEnabled: buffersPackets, buffersPackets: buffersPackets),
        now: origin)
      XCTAssertEqual(stream.lastPacketAt, origin)
      var now = 3.25
      var lastPacket = origin
      var sequences = LossyReorderedSequence(startingAt: 65_300)
      var foreign = 0
      for step in 0..<3000 {
        now += Double.random(in: 0...0.03, using: &generator)
        let roll = Double.random(in: 0..<1, using: &generator)
        if roll < 0.6 {
          let sequence = sequences.draw(using: &generator)
          // Now and then another SSRC: dropped by the stream, still its source's last packet.
          let ssrc: UInt32 = Double.random(in: 0..<1, using: &generator) < 0.05 ? 9 : 5
          if ssrc == 9 { foreign += 1 }
          let bytes = streamTestPacketBytes(
            ssrc: ssrc, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 3000)
          let packet = try? RTPPacket.parse(bytes)
          if let packet {
            _ = stream.receive(packet, now: virtualTime(now))
            lastPacket = virtualTime(now)
          }
        } else if roll < 0.9 {
          _ = stream.poll(now: virtualTime(now))
        } else if roll < 0.95 {
          stream.requestKeyFrame()
        } else {
          stream.roundTripTime = Double.random(in: 0.01...0.3, using: &generator)
        }
        XCTAssertEqual(
          origin + stream.scheduledDeadlineOffset(), stream.nextDeadline, "step \(step)")
        // Twice: the second call comes from the remembered conversion.
        XCTAssertEqual(
          origin + stream.scheduledDeadlineOffset(), stream.nextDeadline, "step \(step)")
        XCTAssertEqual(stream.scheduledDeadline(), stream.nextDeadline, "step \(step)")
        XCTAssertEqual(stream.lastPacketAt, lastPacket, "step \(step)")
        XCTAssertEqual(
          stream.timeSinceLastPacket(at: virtualTime(now + 1)), virtualTime(now + 1) - lastPacket)
      }
      XCTAssertGreaterThan(foreign, 0)
      XCTAssertGreaterThan(stream.counters.malformedPackets, 0)
    }
  }

  /// The play driver passes `now` less the stream's origin, from its own clock's offsets: the
  /// same outputs, statistics and deadlines as `receive(_:now:)` and `poll(now:)`, which
  /// compute it (releases, NACKs, PLIs and RRs included).
  func testReceiveWithTheOffsetAtHandEqualsReceive() {
    var generator = SplitMix64(seed: 23)
    let connectionOrigin = virtualTime(1)
    let streamOrigin = virtualTime(7.5)
    let configuration = RTPReceiveStream.Configuration(
      ssrc: 5, localSSRC: 1, payloadType: 96, clockRate: 90_000)
    var plain = RTPReceiveStream(configuration: configuration, now: streamOrigin)
    var driven = RTPReceiveStream(configuration: configuration, now: streamOrigin)
    let originOffset = streamOrigin - connectionOrigin
    var now = 7.5
    var sequences = LossyReorderedSequence(startingAt: 65_500, reorderDepth: 4, lossGap: 3)
    for step in 0..<2000 {
      now += Double.random(in: 0...0.02, using: &generator)
      if Double.random(in: 0..<1, using: &generator) < 0.7 {
        let sequence = sequences.draw(using: &generator)
        let bytes = streamTestPacketBytes(
          ssrc: 5, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 3000)
        guard let packet = try? RTPPacket.parse(bytes) else { return XCTFail("step \(step)") }
        let instant = virtualTime(now)
        let sinceConnectionOrigin = instant - connectionOrigin
        XCTAssertEqual(
          try? plain.receive(packet, now: instant).get(),
          try? driven.receive(
            packet, now: instant, sinceOrigin: sinceConnectionOrigin - originOffset
          ).get(), "step \(step)")
      } else if Double.random(in: 0..<1, using: &generator) < 0.9 {
        // As `NativeMediaConnection.poll` computes it: the connection's offset less the
        // stream's, in attoseconds.
        let sinceConnectionOrigin = virtualTime(now) - connectionOrigin
        XCTAssertEqual(
          plain.poll(now: virtualTime(now)),
          driven.poll(
            sinceOrigin: Duration(
              attoseconds: sinceConnectionOrigin.attoseconds - originOffset.attoseconds)),
          "step \(step)")
      } else if Bool.random(using: &generator) {
        plain.requestKeyFrame()
        driven.requestKeyFrame()
      } else {
        let roundTripTime = Double.random(in: 0.01...0.3, using: &generator)
        plain.roundTripTime = roundTripTime
        driven.roundTripTime = roundTripTime
      }
      XCTAssertEqual(plain.statistics.jitter, driven.statistics.jitter, "step \(step)")
      XCTAssertEqual(
        plain.statistics.cumulativeLost, driven.statistics.cumulativeLost, "step \(step)")
      XCTAssertEqual(
        plain.statistics.extendedHighestSequence, driven.statistics.extendedHighestSequence,
        "step \(step)")
      XCTAssertEqual(plain.counters, driven.counters, "step \(step)")
      XCTAssertEqual(plain.nextDeadline, driven.nextDeadline, "step \(step)")
      XCTAssertEqual(plain.lastPacketAt, driven.lastPacketAt, "step \(step)")
    }
    XCTAssertGreaterThan(plain.counters.packets, 1000)
    XCTAssertGreaterThan(plain.counters.nacksSent, 10)
    XCTAssertGreaterThan(plain.counters.plisSent, 3)
    XCTAssertGreaterThan(plain.counters.receiverReportsSent, 3)
  }

  func testRouteFindsEachSourceBySSRC() {
    var reception = NativeMediaConnection.PacketReception()
    XCTAssertNil(reception.route(7))
    let video = NativeMediaConnection.ReceiveEntry(
      stream: RTPReceiveStream(
        configuration: .init(ssrc: 7, localSSRC: 1, clockRate: 90_000), now: virtualTime(0)),
      ssrc: 7, isVideo: true, originOffset: .seconds(2))
    let audio = NativeMediaConnection.ReceiveEntry(
      stream: RTPReceiveStream(
        configuration: .init(ssrc: 8, localSSRC: 1, clockRate: 48_000), now: virtualTime(0)),
      ssrc: 8, isVideo: false, originOffset: .seconds(3))
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
    let configuration = RTPReceiveStream.Configuration(
      ssrc: 5, localSSRC: 1, payloadType: 96, clockRate: 90_000)
    var fresh = RTPReceiveStream(configuration: configuration, now: origin)
    var recycled = RTPReceiveStream(configuration: configuration, now: origin)
    var held: [(packets: [ReceivedRTPPacket], sequenceNumbers: [UInt16])] = []
    var now = 0.0
    var sequences = LossyReorderedSequence(startingAt: 65_400, reorderDepth: 4)
    var released = 0
    for step in 0..<3000 {
      now += Double.random(in: 0...0.02, using: &generator)
      if Double.random(in: 0..<1, using: &generator) < 0.6 {
        let sequence = sequences.draw(using: &generator)
        let bytes = streamTestPacketBytes(
          ssrc: 5, sequenceNumber: sequence, timestamp: UInt32(sequence / 3) &* 3000)
        XCTAssertEqual(
          try? fresh.receive(bytes, now: virtualTime(now)).get(),
          try? recycled.receive(bytes, now: virtualTime(now)).get(), "step \(step)")
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
