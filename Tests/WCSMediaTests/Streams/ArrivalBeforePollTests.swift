import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// Packets are timed by the kernel's receive time, polls by the loop's clock: a packet read
/// after a poll may carry an instant before that poll's. The receive cores must take such
/// instants as they are: no NACK twice, nothing released out of order or twice, no deadline
/// that stays in the past, no negative interval turned into a huge one.
final class ArrivalBeforePollTests: XCTestCase {
  private let remoteSSRC: UInt32 = 0x1111_2222

  private func packet(_ sequence: UInt16) -> RTPPacket {
    streamTestPacket(
      ssrc: remoteSSRC, sequenceNumber: sequence, timestamp: UInt32(sequence - 100) * 3000)
  }

  func testAPacketArrivingBeforeThePollThatRanIsNACKedOnceAndReleasedInOrder() throws {
    var stream = VideoReceiveStream(
      configuration: .init(
        source: .init(
          ssrc: remoteSSRC, localSSRC: 1, payloadType: 96, clockRate: 90_000,
          sendsReceiverReports: false)),
      now: virtualTime(0))
    var released: [UInt16] = []
    var nacked: [[UInt16]] = []
    func poll(_ seconds: Double) {
      let output = stream.poll(now: virtualTime(seconds))
      released += output.packets.map(\.header.sequenceNumber)
      for case .genericNACK(let nack) in output.rtcp { nacked.append(nack.lostSequenceNumbers) }
      // Nothing left due: the driver's timer is not re-armed in the past.
      XCTAssertGreaterThan(
        stream.nextDeadline, virtualTime(seconds), "after the poll at \(seconds)")
    }
    _ = try stream.receive(packet(100), now: virtualTime(0)).get()
    _ = try stream.receive(packet(101), now: virtualTime(0.033)).get()
    poll(0.080)
    XCTAssertEqual(released, [100, 101])

    // 103 arrived at 70 ms but was read after the poll at 80 ms: 102 missing since 70 ms.
    _ = try stream.receive(packet(103), now: virtualTime(0.070)).get()
    XCTAssertEqual(
      (stream.nextDeadline - virtualTime(0.090)).seconds, 0, accuracy: 1e-9,
      "NACK 20 ms after the gap showed")
    poll(0.085)
    poll(0.090)
    poll(0.095)
    XCTAssertEqual(nacked, [[102]], "asked for once")
    // 102 came at 88 ms, read after the poll at 90 ms that asked for it: recovered, in order.
    _ = try stream.receive(packet(102), now: virtualTime(0.088)).get()
    poll(0.300)
    poll(0.500)
    XCTAssertEqual(released, [100, 101, 102, 103])
    XCTAssertEqual(nacked, [[102]])
    XCTAssertEqual(stream.nackGenerator.recovered, 1)
    XCTAssertEqual(stream.nackGenerator.requestsSent, 1)
    XCTAssertEqual(stream.jitterBuffer.latePackets, 0)
    XCTAssertEqual(stream.jitterBuffer.duplicates, 0)
  }

  func testAJitterBufferPacketAlreadyDueWhenInsertedIsReleasedOnceAtTheNextRelease() {
    var buffer = JitterBuffer(clockRate: 90_000)
    let origin = virtualTime(0)
    func received(_ sequence: Int64, at arrival: Double) -> ReceivedRTPPacket {
      ReceivedRTPPacket(
        packet: RTPPacket(
          header: RTPHeader(
            payloadType: 96, sequenceNumber: UInt16(sequence), timestamp: UInt32(sequence) * 3000,
            ssrc: remoteSSRC),
          payload: [1]),
        arrival: origin + .seconds(arrival))
    }
    XCTAssertEqual(buffer.insert(received(0, at: 0), sequence: 0), .buffered)
    XCTAssertEqual(
      buffer.release(now: virtualTime(0.5)).map(\.header.sequenceNumber), [0])
    // Arrived at 40 ms, offered after the release at 500 ms: due at once, and only once.
    XCTAssertEqual(buffer.insert(received(1, at: 0.040), sequence: 1), .buffered)
    let deadline = try? XCTUnwrap(buffer.nextDeadline)
    XCTAssertLessThan(deadline ?? .distantFuture, virtualTime(0.5))
    XCTAssertEqual(
      buffer.release(now: virtualTime(0.5)).map(\.header.sequenceNumber), [1])
    XCTAssertNil(buffer.nextDeadline)
    XCTAssertEqual(buffer.insert(received(1, at: 0.045), sequence: 1), .duplicate)
  }

  func testStatisticsTakeAnEarlyArrivalAsJitterAndTheDelaySinceTheSRIsNeverNegative() {
    var statistics = RTPReceiveStatistics(ssrc: remoteSSRC, clockRate: 48_000)
    // 20 ms packets (960 ticks); the third stamped 5 ms early relative to the others.
    for (index, arrival) in [0, 0.020, 0.035, 0.060].enumerated() {
      statistics.record(
        sequenceNumber: UInt16(index), timestamp: UInt32(index) * 960, arrival: virtualTime(arrival)
      )
    }
    // Transits 0, 0, −240, 0: |D| = 0, 240, 240 → J = 15, then 15 + (240 − 15) / 16.
    XCTAssertEqual(statistics.jitter, 29.0625, accuracy: 1e-6)
    // An SR that arrived (kernel time) after the instant a report is made for.
    statistics.recordSenderReport(NTPTimestamp(seconds: 3_900_000_000), arrival: virtualTime(1.000))
    let block = statistics.makeReportBlock(now: virtualTime(0.990))
    XCTAssertEqual(block.delaySinceLastSenderReport, 0)
    XCTAssertEqual(block.jitter, 29)
  }

  func testTransportFeedbackForPacketsArrivingBeforeThePollThatSentTheLastOne() throws {
    var generator = TransportFeedbackGenerator()
    let t0: Int64 = 1_000_000
    for sequence: UInt16 in 0...4 {
      generator.onPacketReceived(
        transportSequenceNumber: sequence, arrivalTime: t0 + Int64(sequence) * 10_000)
    }
    XCTAssertEqual(generator.poll(now: t0 + 100_000).count, 1)
    // Read after that poll, though they came before it; 7 came before 6 (two sockets).
    generator.onPacketReceived(transportSequenceNumber: 5, arrivalTime: t0 + 97_000)
    generator.onPacketReceived(transportSequenceNumber: 7, arrivalTime: t0 + 98_000)
    generator.onPacketReceived(transportSequenceNumber: 6, arrivalTime: t0 + 99_000)
    // The next one is an interval after the poll, not after these arrivals (not in the past).
    XCTAssertEqual(generator.nextDeadline, t0 + 200_000)
    XCTAssertEqual(generator.poll(now: t0 + 199_999), [])
    let feedbacks = generator.poll(now: t0 + 200_000)
    XCTAssertEqual(feedbacks.count, 1)
    let description = try XCTUnwrap(feedbacks.first)
    XCTAssertEqual(description.baseSequenceNumber, 5)
    XCTAssertEqual(
      description.packetFeedbacks().map(\.arrivalMicroseconds),
      [t0 + 97_000, t0 + 99_000, t0 + 98_000])
    // The negative delta (7 after 6) survives the RTCP packet.
    let rtcp = TransportWideCC.feedback(description, senderSSRC: 1, mediaSSRC: 2)
    let bytes = try RTCPPacket.serializeCompound([.transportWideFeedback(rtcp)])
    guard case .transportWideFeedback(let parsed) = try RTCPPacket.parseCompound(bytes).first
    else { return XCTFail("not transport-wide feedback") }
    XCTAssertEqual(
      TransportWideCC.description(of: parsed).packetFeedbacks().map(\.arrivalMicroseconds),
      [t0 + 97_000, t0 + 99_000, t0 + 98_000])
  }

  func testAFrameTimedBeforeThePreviousRenderDoesNotMakeTheNextGapAFreeze() throws {
    // Three pictures; the second completed by a late packet handed on at its arrival, 20 ms
    // before the first was rendered; the third 490 ms after the first: no freeze (500 ms).
    let camera = VirtualCamera(width: 160, height: 120, frameRate: 30)
    let encoder = try VP8Encoder(
      configuration: .init(width: 160, height: 120, frameRate: 30, bitrateKbps: 300))
    var packetizer = VP8Packetizer()
    var sequence: UInt16 = 0
    var frames: [[ReceivedRTPPacket]] = []
    for index in 0..<3 {
      for encoded in try encoder.encode(camera.frame(index), timestamp: UInt32(index) * 3000) {
        frames.append(
          packetizer.packetize(encoded).map { payload in
            defer { sequence &+= 1 }
            return ReceivedRTPPacket(
              packet: RTPPacket(
                header: RTPHeader(
                  marker: payload.marker, payloadType: 96, sequenceNumber: sequence,
                  timestamp: payload.timestamp, ssrc: remoteSSRC),
                payload: payload.payload),
              arrival: virtualTime(0))
          })
      }
    }
    XCTAssertEqual(frames.count, 3)
    let receiver = try VideoDecodePipeline.decodingI420()
    var decoded = 0
    for (frame, seconds) in zip(frames, [1.000, 0.980, 1.490]) {
      decoded += receiver.handle(frame, now: virtualTime(seconds)).frames.count
    }
    XCTAssertEqual(decoded, 3)
    XCTAssertEqual(receiver.statistics.freezes, 0)
    XCTAssertEqual(receiver.statistics.longestGap, 0.490, accuracy: 1e-9)
  }
}
