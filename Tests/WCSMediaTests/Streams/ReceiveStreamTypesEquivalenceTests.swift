import TestSupport
import XCTest

@testable import WCSProtocols

/// `VideoReceiveStream` and `AudioReceiveStream` against the flagged `RTPReceiveStream` they
/// replace, configured as the play connection configures it for each kind (video: NACK and a
/// jitter buffer; audio: neither): the same seeded packets (loss, reordering, duplicates, very
/// late packets, 16-bit wraps, restarts, RTX, wrong SSRC and payload type), SRs, key frame
/// requests and polls must give the same outputs, counters, statistics, NACK state, jitter
/// buffer and deadlines after every step.
final class ReceiveStreamTypesEquivalenceTests: XCTestCase {
  private static let ssrc: UInt32 = 0x1111_0001
  private static let rtxSSRC: UInt32 = 0x1111_0002
  private static let payloadType: UInt8 = 96
  private static let rtxPayloadType: UInt8 = 97

  /// What a seeded run handed out and sent, summed over every step.
  struct Totals: Equatable {
    var packets = 0
    var payloadOctets = 0
    var nacks = 0
    var plis = 0
    var receiverReports = 0
    var failures = 0
  }

  private static func add(
    _ result: Result<RTPReceiveStream.Output, RTPStreamError>, to totals: inout Totals
  ) {
    switch result {
    case .success(let output): add(output, to: &totals)
    case .failure: totals.failures += 1
    }
  }

  private static func add(_ output: RTPReceiveStream.Output, to totals: inout Totals) {
    totals.packets += output.packets.count
    totals.payloadOctets += output.packets.reduce(0) { $0 + $1.packet.payload.count }
    for packet in output.rtcp {
      switch packet {
      case .genericNACK: totals.nacks += 1
      case .pictureLossIndication: totals.plis += 1
      case .receiverReport: totals.receiverReports += 1
      default: break
      }
    }
  }

  /// The next packet of a seeded sender: mostly media of the source, now and then of another
  /// SSRC or payload type, or (`rtx`) a retransmission of a recent one on the RTX stream.
  private struct Sender {
    var generator: SplitMix64
    var numbering: RTPTestNumbering
    let clockRate: UInt32
    let rtx: Bool
    var rtxSequenceNumber: UInt16 = 7
    var recent: [RTPPacket] = []

    mutating func next() -> RTPPacket {
      let roll = Double.random(in: 0..<1, using: &generator)
      if rtx, roll < 0.06, !recent.isEmpty {
        let original = recent[Int.random(in: 0..<recent.count, using: &generator)]
        rtxSequenceNumber &+= 1
        return RTXPacketFormat.wrap(
          original, ssrc: ReceiveStreamTypesEquivalenceTests.rtxSSRC,
          payloadType: ReceiveStreamTypesEquivalenceTests.rtxPayloadType,
          sequenceNumber: rtxSequenceNumber)
      }
      let sequenceNumber = numbering.draw(using: &generator)
      let jitter = UInt32.random(in: 0...(clockRate / 50), using: &generator)
      var header = RTPHeader(
        marker: sequenceNumber % 3 == 0,
        payloadType: ReceiveStreamTypesEquivalenceTests.payloadType,
        sequenceNumber: sequenceNumber,
        timestamp: UInt32(sequenceNumber) &* (clockRate / 50) &+ jitter,
        ssrc: ReceiveStreamTypesEquivalenceTests.ssrc)
      if roll > 0.99 { header.ssrc &+= 9 }
      if roll > 0.98, roll <= 0.99 { header.payloadType = 100 }
      let packet = RTPPacket(
        header: header, payload: [UInt8(truncatingIfNeeded: sequenceNumber), 1, 2, 3])
      recent.append(packet)
      if recent.count > 30 { recent.removeFirst() }
      return packet
    }
  }

  private static func assertSame(
    _ source: RTPReceiveSource, _ reference: RTPReceiveStream, _ context: String,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertEqual(
      source.counters, reference.counters, "counters \(context)", file: file, line: line)
    XCTAssertEqual(
      source.statistics.packetsReceived, reference.statistics.packetsReceived, context,
      file: file, line: line)
    XCTAssertEqual(
      source.statistics.jitter, reference.statistics.jitter, "jitter \(context)", file: file,
      line: line)
    XCTAssertEqual(
      source.statistics.extendedHighestSequence, reference.statistics.extendedHighestSequence,
      context, file: file, line: line)
    XCTAssertEqual(
      source.statistics.cumulativeLost, reference.statistics.cumulativeLost, context, file: file,
      line: line)
    XCTAssertEqual(
      source.statistics.restarts, reference.statistics.restarts, context, file: file, line: line)
    XCTAssertEqual(source.lastPacketAt, reference.lastPacketAt, context, file: file, line: line)
    XCTAssertEqual(
      source.lastSenderReport?.ntp, reference.lastSenderReport?.ntp, context, file: file, line: line
    )
  }

  private static func senderReport(at now: MediaInstant, step: Int) -> RTCPSenderReport {
    RTCPSenderReport(
      ssrc: ssrc, ntpTimestamp: UInt64(step) << 32 | 0x8000_0000,
      rtpTimestamp: UInt32(truncatingIfNeeded: step &* 1_800), packetCount: UInt32(step),
      octetCount: UInt32(step * 4))
  }

  /// Drives a video stream and its reference for `steps` steps from `seed`; the totals.
  @discardableResult
  private func driveVideo(seed: UInt64, steps: Int, rtx: Bool) -> Totals {
    var generator = SplitMix64(seed: seed)
    var now = virtualTime(1)
    let retransmission =
      rtx
      ? RTPReceiveStream.Retransmission(ssrc: Self.rtxSSRC, payloadType: Self.rtxPayloadType) : nil
    var reference = RTPReceiveStream(
      configuration: RTPReceiveStream.Configuration(
        ssrc: Self.ssrc, localSSRC: 1, payloadType: Self.payloadType, clockRate: 90_000,
        retransmission: retransmission),
      now: now)
    var stream = VideoReceiveStream(
      configuration: VideoReceiveStream.Configuration(
        source: RTPReceiveSource.Configuration(
          ssrc: Self.ssrc, localSSRC: 1, payloadType: Self.payloadType, clockRate: 90_000),
        retransmission: retransmission),
      now: now)
    var sender = Sender(
      generator: SplitMix64(seed: seed ^ 0x5EED), numbering: RTPTestNumbering(next: 65_300),
      clockRate: 90_000, rtx: rtx)
    var totals = Totals()
    for step in 0..<steps {
      now = now + .microseconds(Int.random(in: 0...12_000, using: &generator))
      let context = "seed \(seed) step \(step)"
      let roll = Double.random(in: 0..<1, using: &generator)
      if roll < 0.15 {
        let output = stream.poll(now: now)
        XCTAssertEqual(output, reference.poll(now: now), "poll \(context)")
        Self.add(output, to: &totals)
        stream.recycleReleased(output.packets)
      } else if roll < 0.17 {
        stream.requestKeyFrame()
        reference.requestKeyFrame()
      } else if roll < 0.19 {
        let report = Self.senderReport(at: now, step: step)
        stream.handleSenderReport(report, now: now)
        reference.handleSenderReport(report, now: now)
      } else if roll < 0.20 {
        let rtt = Double.random(in: 0.01...0.3, using: &generator)
        stream.roundTripTime = rtt
        reference.roundTripTime = rtt
      } else {
        let packet = sender.next()
        let restored = Double.random(in: 0..<1, using: &generator) < 0.02
        let result = stream.receive(packet, now: now, restored: restored)
        XCTAssertEqual(result, reference.receive(packet, now: now, restored: restored), context)
        Self.add(result, to: &totals)
      }
      Self.assertSame(stream.source, reference, context)
      XCTAssertEqual(
        stream.nackGenerator.missingSequenceNumbers, reference.nackGenerator.missingSequenceNumbers,
        "missing \(context)")
      XCTAssertEqual(stream.jitterBuffer.count, reference.jitterBuffer.count, context)
      XCTAssertEqual(stream.jitterBuffer.delay, reference.jitterBuffer.delay, context)
      XCTAssertEqual(stream.jitterBuffer.nextDeadline, reference.jitterBuffer.nextDeadline, context)
      XCTAssertEqual(stream.nextDeadline, reference.nextDeadline, "deadline \(context)")
      XCTAssertEqual(
        stream.makeReportBlock(now: now), reference.makeReportBlock(now: now), context)
    }
    return totals
  }

  /// Drives an audio stream and its reference for `steps` steps from `seed`; the totals.
  @discardableResult
  private func driveAudio(seed: UInt64, steps: Int) -> Totals {
    var generator = SplitMix64(seed: seed)
    var now = virtualTime(1)
    var reference = RTPReceiveStream(
      configuration: RTPReceiveStream.Configuration(
        ssrc: Self.ssrc, localSSRC: 1, payloadType: Self.payloadType, clockRate: 48_000,
        nackEnabled: false, buffersPackets: false),
      now: now)
    var stream = AudioReceiveStream(
      configuration: RTPReceiveSource.Configuration(
        ssrc: Self.ssrc, localSSRC: 1, payloadType: Self.payloadType, clockRate: 48_000),
      now: now)
    var sender = Sender(
      generator: SplitMix64(seed: seed ^ 0xA0D10), numbering: RTPTestNumbering(next: 65_500),
      clockRate: 48_000, rtx: false)
    var totals = Totals()
    for step in 0..<steps {
      now = now + .microseconds(Int.random(in: 0...30_000, using: &generator))
      let context = "seed \(seed) step \(step)"
      let roll = Double.random(in: 0..<1, using: &generator)
      if roll < 0.1 {
        let output = stream.poll(now: now)
        XCTAssertEqual(output, reference.poll(now: now), "poll \(context)")
        Self.add(output, to: &totals)
      } else if roll < 0.12 {
        let report = Self.senderReport(at: now, step: step)
        stream.handleSenderReport(report, now: now)
        reference.handleSenderReport(report, now: now)
      } else {
        let packet = sender.next()
        let result = stream.receive(packet, now: now)
        XCTAssertEqual(result, reference.receive(packet, now: now), context)
        Self.add(result, to: &totals)
        if case .success(let output) = result { stream.recycle(output.packets) }
      }
      Self.assertSame(stream.source, reference, context)
      XCTAssertEqual(stream.jitterBuffer.duplicates, reference.jitterBuffer.duplicates, context)
      XCTAssertEqual(stream.nextDeadline, reference.nextDeadline, "deadline \(context)")
    }
    return totals
  }

  func testVideoStreamMatchesFlaggedStreamOnLossyReorderedPackets() {
    for seed: UInt64 in 1...6 { driveVideo(seed: seed, steps: 3_000, rtx: false) }
  }

  func testVideoStreamMatchesFlaggedStreamWithRetransmissions() {
    for seed: UInt64 in 11...16 { driveVideo(seed: seed, steps: 3_000, rtx: true) }
  }

  func testAudioStreamMatchesFlaggedStreamOnLossyReorderedPackets() {
    for seed: UInt64 in 21...26 { driveAudio(seed: seed, steps: 3_000) }
  }

  /// Recorded once from the equivalent runs above: the new types alone must keep giving them.
  func testSeededRunsGiveRecordedOutputs() {
    let video = driveVideo(seed: 42, steps: 3_000, rtx: true)
    let audio = driveAudio(seed: 42, steps: 3_000)
    XCTAssertEqual(
      video,
      Totals(
        packets: 1_841, payloadOctets: 7_364, nacks: 166, plis: 33, receiverReports: 17,
        failures: 46))
    XCTAssertEqual(
      audio,
      Totals(
        packets: 2_399, payloadOctets: 9_596, nacks: 0, plis: 0, receiverReports: 38,
        failures: 61))
  }
}
