import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// Receive statistics, receiver reports, NACK and PLI generation of `VideoReceiveStream` and
/// `AudioReceiveStream`, with values worked out by hand from RFC 3550 §A.3 / §A.8 and RFC 4585
/// §6.2.1.
final class ReceiveStreamTests: XCTestCase {
  private let remoteSSRC: UInt32 = 0x1122_3344
  private let localSSRC: UInt32 = 0x5566_7788

  private var source: RTPReceiveSource.Configuration {
    .init(ssrc: remoteSSRC, localSSRC: localSSRC, payloadType: 96, clockRate: 90_000)
  }

  /// A video stream; `retransmissionDelayFactor` 0 keeps the playout delay to the jitter's.
  private func makeVideoStream(
    rtx: RTPRetransmission? = nil, retransmissionDelayFactor: Double = 2
  ) -> VideoReceiveStream {
    VideoReceiveStream(
      configuration: .init(
        source: source, retransmission: rtx,
        retransmissionDelayFactor: retransmissionDelayFactor),
      now: virtualTime(0))
  }

  /// A stream handing every packet out on arrival (the audio kind), on the video clock rate.
  private func makeAudioStream() -> AudioReceiveStream {
    AudioReceiveStream(configuration: source, now: virtualTime(0))
  }

  /// Packets every 20 ms (1800 ticks at 90 kHz) starting at sequence 65530 so the sequence wraps;
  /// indices 2 and 5 are lost; each packet gets the extra network delay listed (ms).
  func testReceiverReportMatchesHandComputedRFC3550Values() throws {
    var stream = makeVideoStream()
    let extraDelayMs: [Int: Double] = [0: 0, 1: 5, 3: 2, 4: 10, 6: 0, 7: 7, 8: 3, 9: 3]
    for index in 0..<10 {
      guard let extra = extraDelayMs[index] else { continue }
      let arrival = 0.1 + Double(index) * 0.020 + extra / 1000
      let packet = streamTestPacket(
        ssrc: remoteSSRC, sequenceNumber: UInt16(truncatingIfNeeded: 65_530 + index),
        timestamp: UInt32(5000 + index * 1800))
      XCTAssertNoThrow(try stream.receive(packet, now: virtualTime(arrival)).get())
    }
    // §A.8 by hand: the transit differences |D| in ms between consecutive arrivals are
    // 5, 3, 8, 10, 7, 4, 0; J += (|D| − J) / 16 gives J = 1.868072468787432 ms = 168.1265 ticks.
    var expectedJitter = 0.0
    for d in [5.0, 3, 8, 10, 7, 4, 0] { expectedJitter += (d * 90 - expectedJitter) / 16 }
    XCTAssertEqual(expectedJitter, 168.126_522_190_868_9, accuracy: 1e-6)
    XCTAssertEqual(stream.source.statistics.jitter, expectedJitter, accuracy: 1e-4)

    // An SR from the source at 0.5 s, the report at 1.0 s: DLSR = 0.5 s = 32768 / 65536 s.
    let ntp = NTPTimestamp(value: 0xE1A2_B3C4_8000_0000)
    stream.handleSenderReport(
      RTCPSenderReport(
        ssrc: remoteSSRC, ntpTimestamp: ntp.value, rtpTimestamp: 123, packetCount: 8,
        octetCount: 32), now: virtualTime(0.5))

    let output = stream.poll(now: virtualTime(1.0))
    guard case .receiverReport(let report) = output.rtcp.first else {
      return XCTFail("no RR in \(output.rtcp)")
    }
    XCTAssertEqual(report.ssrc, localSSRC)
    XCTAssertEqual(
      report.reports,
      [
        RTCPReportBlock(
          ssrc: remoteSSRC,
          // §A.3: expected 10, received 8, lost 2 → fraction (2 << 8) / 10 = 51.
          fractionLost: 51, packetsLost: 2,
          // 65530 + 9 wraps once: cycles 1 << 16, highest 3.
          highestSequence: 0x1_0003, jitter: 168, lastSenderReport: 0xB3C4_8000,
          delaySinceLastSenderReport: 32_768)
      ])

    // Second interval: 10 more packets, one lost → fraction (1 << 8) / 10 = 25, cumulative 3.
    for index in 10..<20 where index != 11 {
      let packet = streamTestPacket(
        ssrc: remoteSSRC, sequenceNumber: UInt16(truncatingIfNeeded: 65_530 + index),
        timestamp: UInt32(5000 + index * 1800))
      _ = stream.receive(packet, now: virtualTime(1.0 + Double(index) * 0.02))
    }
    let second = stream.poll(now: virtualTime(2.0))
    guard case .receiverReport(let next) = second.rtcp.first, let block = next.reports.first else {
      return XCTFail("no second RR")
    }
    XCTAssertEqual(block.fractionLost, 25)
    XCTAssertEqual(block.packetsLost, 3)
    XCTAssertEqual(block.highestSequence, 0x1_000D)
    XCTAssertEqual(stream.source.counters.receiverReportsSent, 2)
  }

  func testDuplicatesCountAsReceivedAndAreDroppedByTheJitterBuffer() throws {
    var stream = makeAudioStream()
    var delivered: [UInt16] = []
    for sequence: UInt16 in [10, 11, 11, 12, 12, 13] {
      let output = try stream.receive(
        streamTestPacket(
          ssrc: remoteSSRC, sequenceNumber: sequence, timestamp: UInt32(sequence) * 3000),
        now: virtualTime(0.01 * Double(sequence))
      ).get()
      delivered += output.packets.map(\.header.sequenceNumber)
    }
    XCTAssertEqual(delivered, [10, 11, 12, 13])
    XCTAssertEqual(stream.jitterBuffer.duplicates, 2)
    // RFC 3550 §A.3: duplicates make the cumulative loss negative.
    XCTAssertEqual(stream.source.statistics.cumulativeLost, -2)
    XCTAssertEqual(stream.makeReportBlock(now: virtualTime(1))?.fractionLost, 0)
  }

  /// A reordered start (a packet overtaking the ones sent before it, as the first to arrive)
  /// moves the base back to the earlier ones: they are expected, not extra, so the cumulative
  /// loss stays what was really lost instead of going negative.
  func testPacketsSentBeforeTheFirstArrivalAreExpected() {
    var statistics = RTPReceiveStatistics(ssrc: remoteSSRC, clockRate: 90_000)
    for (index, sequence) in [UInt16(12), 13, 10, 14, 16].enumerated() {
      statistics.record(
        sequenceNumber: sequence, timestamp: UInt32(index * 3000),
        arrival: virtualTime(Double(index) * 0.03))
    }
    XCTAssertEqual(statistics.packetsExpected, 7)
    XCTAssertEqual(statistics.cumulativeLost, 2, "11 and 15")
    let block = statistics.makeReportBlock(now: virtualTime(1))
    XCTAssertEqual(block.packetsLost, 2)
    XCTAssertEqual(block.highestSequence, 16)
    // Near the bottom of the sequence space the base cannot move below 0 without a cycle: left.
    var low = RTPReceiveStatistics(ssrc: remoteSSRC, clockRate: 90_000)
    for sequence: UInt16 in [1, 2, 65_534] {
      low.record(sequenceNumber: sequence, timestamp: 0, arrival: virtualTime(0))
    }
    XCTAssertEqual(low.packetsExpected, 2)
  }

  func testJitterBufferReordersAndHoldsUntilPlayout() throws {
    var stream = makeVideoStream(retransmissionDelayFactor: 0)
    // Sequence 3 overtakes 2; all sent 20 ms apart, 1800 ticks apart.
    let arrivals: [(UInt16, Double)] = [(10, 0.010), (11, 0.030), (13, 0.070), (12, 0.075)]
    for (sequence, arrival) in arrivals {
      let output = try stream.receive(
        streamTestPacket(
          ssrc: remoteSSRC, sequenceNumber: sequence, timestamp: UInt32(sequence - 10) * 1800),
        now: virtualTime(arrival)
      ).get()
      XCTAssertTrue(output.packets.isEmpty, "released on arrival")
    }
    let delay = stream.jitterBuffer.delay
    XCTAssertGreaterThanOrEqual(delay, 0.010)
    // Packet 0's playout: its transit 10 ms + delay.
    XCTAssertTrue(stream.poll(now: virtualTime(0.010 + delay - 0.001)).packets.isEmpty)
    var released: [UInt16] = []
    // (The minimum transit estimate rises 0.1 ms per packet until a faster packet pulls it down.)
    released += stream.poll(now: virtualTime(0.010 + delay + 0.000_3)).packets.map(
      \.header.sequenceNumber)
    XCTAssertEqual(released, [10])
    released += stream.poll(now: virtualTime(0.5)).packets.map(\.header.sequenceNumber)
    XCTAssertEqual(released, [10, 11, 12, 13])

    // A packet older than released ones is late: counted and handed on at once.
    let late = try stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 9, timestamp: 0),
      now: virtualTime(0.6)
    ).get()
    XCTAssertEqual(late.packets.map(\.header.sequenceNumber), [9])
    XCTAssertEqual(stream.jitterBuffer.latePackets, 1)
  }

  func testPlayoutDelayFollowsMeasuredJitter() {
    var quiet = JitterBuffer(clockRate: 90_000)
    var noisy = JitterBuffer(clockRate: 90_000)
    for _ in 0..<100 {
      quiet.updateTargetDelay(jitterSeconds: 0.001, extraDelay: 0)
      noisy.updateTargetDelay(jitterSeconds: 0.030, extraDelay: 0.1)
    }
    // Targets: max(10 ms, 4 × 1 ms) = 10 ms; 4 × 30 ms + 100 ms = 220 ms (approached geometrically).
    XCTAssertEqual(quiet.delay, 0.010, accuracy: 0.0005)
    XCTAssertEqual(noisy.delay, 0.220, accuracy: 0.001)
  }

  func testNACKForAGapRetriesEveryRTTAndGivesUp() throws {
    var stream = makeVideoStream()
    stream.roundTripTime = .milliseconds(100)
    for sequence: UInt16 in [100, 101, 105] {
      _ = stream.receive(
        streamTestPacket(
          ssrc: remoteSSRC, sequenceNumber: sequence, timestamp: UInt32(sequence) * 3000),
        now: virtualTime(0))
    }
    func nacked(_ output: RTPReceiveSource.Output) -> [UInt16] {
      output.rtcp.flatMap { packet -> [UInt16] in
        if case .genericNACK(let nack) = packet {
          XCTAssertEqual(nack.senderSSRC, localSSRC)
          XCTAssertEqual(nack.mediaSSRC, remoteSSRC)
          return nack.lostSequenceNumbers
        }
        return []
      }
    }
    // Reorder tolerance 20 ms: nothing at 10 ms, then 102...104 in one item (PID 102, BLP 0b11).
    XCTAssertEqual(nacked(stream.poll(now: virtualTime(0.010))), [])
    let first = stream.poll(now: virtualTime(0.020))
    XCTAssertEqual(nacked(first), [102, 103, 104])
    if case .genericNACK(let nack) = first.rtcp.first {
      XCTAssertEqual(nack.items, [RTCPNACKItem(packetID: 102, lostBitmask: 0b11)])
    }
    // 103 arrives (retransmitted); the others are asked again one RTT later, not before.
    _ = stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 103, timestamp: 309_000),
      now: virtualTime(0.05))
    XCTAssertEqual(nacked(stream.poll(now: virtualTime(0.110))), [])
    XCTAssertEqual(nacked(stream.poll(now: virtualTime(0.120))), [102, 104])
    XCTAssertEqual(stream.nackGenerator.recovered, 1)
    // Up to 10 requests in all, at least one RTT apart, then given up.
    var requests = 2
    for step in 25...300 {
      let time = Double(step) * 0.005
      let sequences = nacked(stream.poll(now: virtualTime(time)))
      if !sequences.isEmpty {
        XCTAssertEqual(sequences, [102, 104])
        requests += 1
      }
    }
    XCTAssertEqual(requests, 10)
    XCTAssertEqual(stream.nackGenerator.givenUp, 2)
    XCTAssertTrue(stream.nackGenerator.missingSequenceNumbers.isEmpty)
  }

  /// A missing packet the generator gives up on leaves its frame undecodable: the same poll
  /// asks for a key frame (PLI) instead of waiting for the next one.
  func testAGivenUpPacketAsksForAKeyFrame() {
    var stream = makeVideoStream()
    func plis(_ output: RTPReceiveSource.Output) -> Int {
      output.rtcp.filter {
        if case .pictureLossIndication = $0 { return true } else { return false }
      }.count
    }
    _ = stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 10, timestamp: 0),
      now: virtualTime(0))
    _ = stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 12, timestamp: 3000),
      now: virtualTime(0))
    var plisBeforeGivingUp = 0
    var time = 0.0
    while stream.nackGenerator.givenUp == 0, time < 3 {
      time += 0.005
      let output = stream.poll(now: virtualTime(time))
      if stream.nackGenerator.givenUp == 0 {
        plisBeforeGivingUp += plis(output)
      } else {
        XCTAssertEqual(plis(output), 1, "the PLI goes out with the give-up")
      }
    }
    XCTAssertEqual(stream.nackGenerator.givenUp, 1)
    XCTAssertEqual(plisBeforeGivingUp, 0, "no PLI while the packet can still come")
    XCTAssertEqual(stream.source.counters.plisSent, 1)
  }

  /// A sender whose sequence numbers jump by 400 again and again: never more than
  /// `maxMissing` packets are missing at once; the generator asks for a key frame instead.
  func testJumpingSequenceNumbersKeepTheMissingSetBounded() {
    var generator = NACKGenerator(configuration: .init(maxMissing: 500))
    var keyFrameRequests = 0
    for step in 0..<1000 {
      generator.packetArrived(Int64(step) * 401, now: virtualTime(Double(step) * 0.001))
      XCTAssertLessThanOrEqual(generator.missingSequenceNumbers.count, 500)
      if generator.takeKeyFrameRequest() { keyFrameRequests += 1 }
    }
    XCTAssertEqual(keyFrameRequests, 499, "every second jump overflows the bound")
  }

  /// A missing packet that arrives before its NACK was due (reordered) is recovered but was
  /// never asked for: only the ones that arrive after a request count as NACKed and recovered,
  /// so that count never exceeds the packets requested.
  func testOnlyPacketsArrivingAfterTheirNACKCountAsRecoveredByIt() {
    var generator = NACKGenerator(configuration: .init(reorderTolerance: .milliseconds(20)))
    generator.packetArrived(1, now: virtualTime(0))
    generator.packetArrived(4, now: virtualTime(0))
    generator.packetArrived(2, now: virtualTime(0.005))
    XCTAssertEqual(generator.due(now: virtualTime(0.03), roundTripTime: .milliseconds(50)), [3])
    generator.packetArrived(3, now: virtualTime(0.06))
    XCTAssertEqual(generator.recovered, 2)
    XCTAssertEqual(generator.recoveredAfterRequest, 1)
    XCTAssertEqual(generator.requestsSent, 1)
  }

  func testNACKGivesUpAfterMaxAge() {
    var generator = NACKGenerator(
      configuration: .init(maxRetries: 100, maxAge: .milliseconds(300)))
    generator.packetArrived(1, now: virtualTime(0))
    generator.packetArrived(3, now: virtualTime(0))
    var requested = 0
    var time = 0.0
    while time < 0.5 {
      time += 0.01
      requested += generator.due(now: virtualTime(time), roundTripTime: .milliseconds(50)).count
    }
    // Requests at 20, 70, ..., 270 ms (every 50 ms), then gone at 300 ms.
    XCTAssertEqual(requested, 6)
    XCTAssertEqual(generator.givenUp, 1)
  }

  func testAWideGapAsksForAKeyFrameInsteadOfNACKs() {
    var stream = makeVideoStream()
    _ = stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 0, timestamp: 0), now: virtualTime(0))
    _ = stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 900, timestamp: 0),
      now: virtualTime(0))
    let output = stream.poll(now: virtualTime(0.05))
    XCTAssertEqual(
      output.rtcp.filter {
        if case .pictureLossIndication = $0 { return true } else { return false }
      }.count, 1)
    XCTAssertFalse(output.rtcp.contains { if case .genericNACK = $0 { true } else { false } })
  }

  func testPLIIsRateLimited() {
    var stream = makeVideoStream()
    func plis(_ output: RTPReceiveSource.Output) -> Int {
      output.rtcp.filter {
        if case .pictureLossIndication(let pli) = $0 {
          return pli.mediaSSRC == remoteSSRC && pli.senderSSRC == localSSRC
        }
        return false
      }.count
    }
    stream.requestKeyFrame()
    XCTAssertEqual(plis(stream.poll(now: virtualTime(0.1))), 1)
    stream.requestKeyFrame()
    XCTAssertEqual(plis(stream.poll(now: virtualTime(0.3))), 0, "within 500 ms")
    XCTAssertEqual(stream.nextDeadline, virtualTime(0.6))
    XCTAssertEqual(plis(stream.poll(now: virtualTime(0.6))), 1, "the deferred request goes out")
    XCTAssertEqual(plis(stream.poll(now: virtualTime(1.5))), 0, "nothing pending")
    XCTAssertEqual(stream.source.counters.plisSent, 2)
  }

  /// A NACK that crossed a late original is answered by RTX: the second copy has its own SSRC
  /// and SRTP index, so only the stream can tell it is a duplicate. Counted as received it made
  /// the cumulative loss negative (wcs-demo: "517 / -54"); it is dropped and counted apart.
  func testARetransmissionOfAPacketThatArrivedIsNotReceivedTwice() throws {
    let rtx = RTPRetransmission(ssrc: 0xAAAA, payloadType: 97)
    var stream = makeVideoStream(rtx: rtx)
    func media(_ sequence: UInt16) -> RTPPacket {
      streamTestPacket(
        ssrc: remoteSSRC, sequenceNumber: sequence, timestamp: UInt32(sequence) * 3000)
    }
    func retransmission(_ sequence: UInt16, _ rtxSequence: UInt16) -> RTPPacket {
      RTXPacketFormat.wrap(
        media(sequence), ssrc: 0xAAAA, payloadType: 97, sequenceNumber: rtxSequence)
    }
    for sequence: UInt16 in [10, 11, 13, 15] {
      _ = try stream.receive(media(sequence), now: virtualTime(0.01 * Double(sequence))).get()
    }
    _ = try stream.receive(media(12), now: virtualTime(0.2)).get()  // late, not lost
    _ = try stream.receive(retransmission(12, 1), now: virtualTime(0.25)).get()
    _ = try stream.receive(retransmission(14, 2), now: virtualTime(0.26)).get()  // lost: repaired
    XCTAssertEqual(stream.source.counters.duplicateRetransmissions, 1)
    XCTAssertEqual(stream.source.counters.retransmittedPackets, 1)
    XCTAssertEqual(stream.source.statistics.packetsReceived, 6)
    XCTAssertEqual(stream.source.statistics.cumulativeLost, 0)
  }

  func testCorruptAndForeignPacketsAreCountedNotFatal() throws {
    let rtx = RTPRetransmission(ssrc: 0xAAAA, payloadType: 97)
    var stream = makeVideoStream(rtx: rtx)
    var generator = SplitMix64(seed: 7)
    let good = streamTestPacketBytes(ssrc: remoteSSRC, sequenceNumber: 1, timestamp: 0)
    // Datagrams that do not parse never reach the stream (the driver counts them); the ones
    // that parse but are not of this source are counted by the stream.
    var unparsed = 0
    var rejected = 0
    func offer(_ bytes: [UInt8]) {
      guard let packet = try? RTPPacket.parse(bytes) else { return unparsed += 1 }
      if case .failure = stream.receive(packet, now: virtualTime(0)) { rejected += 1 }
    }
    // Every truncation of a valid packet with the padding bit set, and random garbage.
    var padded = good
    padded[0] |= 0x20
    for length in 0..<padded.count { offer(Array(padded.prefix(length))) }
    for _ in 0..<200 {
      let length = Int.random(in: 0...40, using: &generator)
      var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      if !bytes.isEmpty {
        bytes[0] = (bytes[0] & 0x3F) | (Bool.random(using: &generator) ? 0x80 : 0)
      }
      offer(bytes)
    }
    XCTAssertEqual(stream.source.counters.malformedPackets, rejected)
    XCTAssertGreaterThan(unparsed + rejected, 200)
    // Foreign SSRC, wrong payload type, RTX without a whole OSN.
    XCTAssertEqual(
      stream.receive(
        streamTestPacket(ssrc: 1, sequenceNumber: 1, timestamp: 0), now: virtualTime(0)),
      .failure(.unknownSSRC(1)))
    XCTAssertEqual(
      stream.receive(
        streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 1, timestamp: 0, payloadType: 100),
        now: virtualTime(0)),
      .failure(.unexpectedPayloadType(100)))
    XCTAssertEqual(
      stream.receive(
        streamTestPacket(
          ssrc: 0xAAAA, sequenceNumber: 1, timestamp: 0, payloadType: 97, payload: [7]),
        now: virtualTime(0)),
      .failure(.truncatedRetransmission(length: 1)))
    // The stream still works: the next packet is played out after its delay (after packet 1,
    // which the truncations that keep a whole header and padding length still are).
    let output = try stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 2, timestamp: 0),
      now: virtualTime(0.1)
    ).get()
    XCTAssertEqual(output.packets.map(\.header.sequenceNumber), [])
    XCTAssertEqual(
      stream.poll(now: virtualTime(1.2)).packets.map(\.header.sequenceNumber), [1, 2])
  }

  func testABogusTimestampDoesNotHoldTheBufferUp() throws {
    var stream = makeVideoStream(retransmissionDelayFactor: 0)
    _ = stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 1, timestamp: 0), now: virtualTime(0))
    // A packet claiming a time 6 hours ahead, then ordinary ones.
    _ = stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 2, timestamp: 0x7000_0000),
      now: virtualTime(0.02))
    _ = stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 3, timestamp: 1800),
      now: virtualTime(0.04))
    // Everything is out by arrival + the 1 s maximum delay.
    let released = stream.poll(now: virtualTime(1.05)).packets.map(\.header.sequenceNumber)
    XCTAssertEqual(released, [1, 2, 3])
    // The outlier did not move the playout schedule: a packet arriving on time (media time 1.2 s
    // at 1.2 s) still waits for its playout delay.
    _ = stream.receive(
      streamTestPacket(ssrc: remoteSSRC, sequenceNumber: 4, timestamp: 108_000),
      now: virtualTime(1.2))
    XCTAssertTrue(stream.poll(now: virtualTime(1.2)).packets.isEmpty)
    XCTAssertEqual(stream.poll(now: virtualTime(2.3)).packets.map(\.header.sequenceNumber), [4])
  }

  func testGarbageVideoPayloadsAreCountedNotDecoded() throws {
    let video = try VideoDecodePipeline.decodingI420()
    var generator = SplitMix64(seed: 99)
    var packets: [ReceivedRTPPacket] = []
    for sequence in 0..<300 {
      let length = Int.random(in: 0...60, using: &generator)
      var payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      // Half of them claim to start a key frame so they reach the decoder.
      if sequence % 2 == 0, payload.count > 4 {
        payload[0] = 0x10
        payload[1] &= 0xFE
      }
      packets.append(
        ReceivedRTPPacket(
          packet: RTPPacket(
            header: RTPHeader(
              marker: true, payloadType: 96, sequenceNumber: UInt16(sequence),
              timestamp: UInt32(sequence * 3000), ssrc: remoteSSRC), payload: payload),
          arrival: virtualTime(0)))
    }
    let output = video.handle(packets, now: virtualTime(0))
    let stats = video.statistics
    XCTAssertGreaterThan(stats.malformedPackets + stats.decodeErrors, 0)
    XCTAssertEqual(stats.framesDecoded, output.frames.count)
  }

  /// RFC 3550 §A.1: a jump of thousands is dropped until the next packet confirms it; then the
  /// stream starts over from the new numbering.
  func testSequenceRestartIsConfirmedByASecondPacket() throws {
    var stream = makeAudioStream()
    var delivered: [UInt16] = []
    for (sequence, time) in [
      (100, 0.0), (101, 0.02), (40_000, 0.04), (40_001, 0.06), (40_002, 0.08),
    ] {
      let output = try stream.receive(
        streamTestPacket(
          ssrc: remoteSSRC, sequenceNumber: UInt16(sequence), timestamp: UInt32(time * 90_000)),
        now: virtualTime(time)
      ).get()
      delivered += output.packets.map(\.header.sequenceNumber)
    }
    XCTAssertEqual(delivered, [100, 101, 40_001, 40_002])
    XCTAssertEqual(stream.source.counters.outOfSequencePackets, 1)
    XCTAssertEqual(stream.source.statistics.restarts, 1)
    let block = try XCTUnwrap(stream.makeReportBlock(now: virtualTime(1)))
    XCTAssertEqual(block.highestSequence, 40_002)
    XCTAssertEqual(block.packetsLost, 0)
  }
}
