import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// RTX packet format, history-served retransmission, key frame requests, SR and RTT of
/// `RTPSendStream`.
final class RTPSendStreamTests: XCTestCase {
  private let ssrc: UInt32 = 0x0102_0304
  private let rtx = RTPRetransmission(ssrc: 0x0A0B_0C0D, payloadType: 97)
  private let wallClock = NTPTimestamp(value: 0xE8A1_0000_4000_0000)  // x.25 s

  private func makeStream(rtx: RTPRetransmission? = nil) -> RTPSendStream {
    RTPSendStream(
      configuration: .init(
        ssrc: ssrc, payloadType: 96, clockRate: 90_000, retransmission: rtx, cname: "wcs-test",
        minBitrate: 100_000, maxBitrate: 1_500_000, initialSequenceNumber: 65_534,
        timestampOffset: 1000),
      now: virtualTime(0), wallClock: wallClock)
  }

  func testRTXPacketCarriesTheOriginalSequenceNumberAndRoundTrips() throws {
    let original = RTPPacket(
      header: RTPHeader(
        marker: true, payloadType: 96, sequenceNumber: 0xBEEF, timestamp: 123_456, ssrc: ssrc),
      payload: [0x10, 0x20, 0x30])
    let wrapped = RTXPacketFormat.wrap(original, ssrc: rtx.ssrc, payloadType: 97, sequenceNumber: 7)
    let bytes = try wrapped.serialized()
    // RFC 4588 §4: header with the RTX SSRC/PT/sequence, then the OSN, then the original payload.
    XCTAssertEqual(
      bytes,
      [
        0x80, 0x80 | 97, 0x00, 0x07, 0x00, 0x01, 0xE2, 0x40, 0x0A, 0x0B, 0x0C, 0x0D,
        0xBE, 0xEF, 0x10, 0x20, 0x30,
      ])
    let restored = try RTXPacketFormat.unwrap(
      RTPPacket.parse(bytes), ssrc: ssrc, payloadType: 96)
    XCTAssertEqual(restored, original)
    XCTAssertNil(
      try RTXPacketFormat.unwrap(
        RTPPacket(header: wrapped.header, payload: []), ssrc: ssrc, payloadType: 96))
    XCTAssertThrowsError(
      try RTXPacketFormat.unwrap(
        RTPPacket(header: wrapped.header, payload: [1]), ssrc: ssrc, payloadType: 96))
  }

  func testHistoryServesNACKWithRTXRateLimitedPerRTT() throws {
    var stream = makeStream(rtx: rtx)
    var sent: [RTPPacket] = []
    for index in 0..<5 {
      sent.append(
        stream.send(
          PacketizedPayload(payload: [UInt8(index)], marker: false, timestamp: 3000),
          now: virtualTime(0.01 * Double(index))))
    }
    // Sequence numbers continue from 65534 across the wrap.
    XCTAssertEqual(sent.map(\.header.sequenceNumber), [65_534, 65_535, 0, 1, 2])
    XCTAssertEqual(sent.map(\.header.timestamp), Array(repeating: 4000, count: 5))

    let nack = RTCPPacket.genericNACK(
      RTCPGenericNACK(senderSSRC: 9, mediaSSRC: ssrc, lost: [65_535, 1]))
    let output = stream.handle(nack, now: virtualTime(0.1))
    XCTAssertEqual(output.packets.count, 2)
    let restored = try output.packets.map {
      try XCTUnwrap(try RTXPacketFormat.unwrap(RTPPacket.parse($0), ssrc: ssrc, payloadType: 96))
    }
    XCTAssertEqual(restored, [sent[1], sent[3]])
    let rtxSequence = try output.packets.map { try RTPPacket.parse($0).header.sequenceNumber }
    XCTAssertEqual(rtxSequence[1], rtxSequence[0] &+ 1)

    // Again within one RTT (100 ms assumed before a measurement): skipped; after it: resent.
    XCTAssertTrue(stream.handle(nack, now: virtualTime(0.15)).packets.isEmpty)
    XCTAssertEqual(stream.handle(nack, now: virtualTime(0.21)).packets.count, 2)
    // Unknown and foreign requests are not served.
    XCTAssertTrue(
      stream.handle(
        .genericNACK(RTCPGenericNACK(senderSSRC: 9, mediaSSRC: ssrc, lost: [500])),
        now: virtualTime(0.3)
      ).packets.isEmpty)
    XCTAssertTrue(
      stream.handle(
        .genericNACK(RTCPGenericNACK(senderSSRC: 9, mediaSSRC: 77, lost: [0])),
        now: virtualTime(0.3)
      ).packets.isEmpty)
    // Too old for the 2 s history.
    XCTAssertTrue(stream.handle(nack, now: virtualTime(3.0)).packets.isEmpty)
    XCTAssertEqual(stream.counters.retransmissions, 4)
  }

  func testPlainResendWithoutRTXIsTheOriginalPacket() throws {
    var stream = makeStream()
    let packet = stream.send(
      PacketizedPayload(payload: [1, 2, 3], marker: true, timestamp: 90), now: virtualTime(0))
    let output = stream.handle(
      .genericNACK(
        RTCPGenericNACK(senderSSRC: 9, mediaSSRC: ssrc, lost: [packet.header.sequenceNumber])),
      now: virtualTime(0.05))
    XCTAssertEqual(output.packets, [try packet.serialized()])
  }

  func testPLIAndFIRRaiseARateLimitedKeyFrameRequest() {
    var stream = makeStream()
    let pli = RTCPPacket.pictureLossIndication(
      RTCPPictureLossIndication(senderSSRC: 9, mediaSSRC: ssrc))
    XCTAssertEqual(stream.handle(pli, now: virtualTime(1.0)).events, [.keyFrameRequested])
    XCTAssertEqual(stream.handle(pli, now: virtualTime(1.2)).events, [], "within 300 ms")
    let fir = RTCPPacket.fullIntraRequest(
      RTCPFullIntraRequest(senderSSRC: 9, entries: [.init(ssrc: ssrc, sequenceNumber: 4)]))
    XCTAssertEqual(stream.handle(fir, now: virtualTime(1.31)).events, [.keyFrameRequested])
    // The same FIR sequence number again is a repeat (RFC 5104 §4.3.1.2).
    XCTAssertEqual(stream.handle(fir, now: virtualTime(2.0)).events, [])
    XCTAssertEqual(
      stream.handle(
        .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 9, mediaSSRC: 1)),
        now: virtualTime(3)
      ).events, [])
    XCTAssertEqual(stream.counters.keyFrameRequests, 2)
    XCTAssertEqual(stream.counters.keyFrameRequestsSuppressed, 1)
  }

  /// A PLI inside the interval is deferred, not dropped: `poll` raises the request when the
  /// interval ends (`nextDeadline` says when), once for every PLI that came meanwhile.
  func testPLIInsideTheIntervalIsDeferredToItsEnd() {
    var stream = makeStream()
    let pli = RTCPPacket.pictureLossIndication(
      RTCPPictureLossIndication(senderSSRC: 9, mediaSSRC: ssrc))
    XCTAssertEqual(stream.handle(pli, now: virtualTime(1.0)).events, [.keyFrameRequested])
    XCTAssertEqual(stream.handle(pli, now: virtualTime(1.1)).events, [])
    XCTAssertEqual(stream.handle(pli, now: virtualTime(1.2)).events, [])
    XCTAssertTrue(stream.keyFrameRequestPending)
    XCTAssertLessThanOrEqual(stream.nextDeadline, virtualTime(1.3))
    XCTAssertFalse(stream.poll(now: virtualTime(1.28)).events.contains(.keyFrameRequested))
    XCTAssertTrue(stream.poll(now: virtualTime(1.31)).events.contains(.keyFrameRequested))
    XCTAssertFalse(stream.keyFrameRequestPending)
    XCTAssertFalse(stream.poll(now: virtualTime(2.0)).events.contains(.keyFrameRequested))
    XCTAssertEqual(stream.counters.keyFrameRequests, 2)
    XCTAssertEqual(stream.counters.keyFrameRequestsSuppressed, 2)
  }

  func testSenderReportMapsWallClockToRTPTimeAndRTTFromReportBlock() throws {
    var stream = makeStream()
    XCTAssertTrue(stream.poll(now: virtualTime(0)).rtcp.isEmpty, "nothing sent yet")
    // A frame at media time 0 sent at 0 s, the next (3000 ticks later) at 1/30 s.
    _ = stream.send(
      PacketizedPayload(payload: [0, 0], marker: true, timestamp: 0), now: virtualTime(0))
    _ = stream.send(
      PacketizedPayload(payload: [1, 1, 1], marker: true, timestamp: 3000),
      now: virtualTime(1.0 / 30))
    let output = stream.poll(now: virtualTime(1.0))
    guard output.rtcp.count == 2, case .senderReport(let report) = output.rtcp[0],
      case .sourceDescription(let sdes) = output.rtcp[1]
    else { return XCTFail("expected SR + SDES, got \(output.rtcp)") }
    XCTAssertEqual(sdes.chunks.first?.ssrc, ssrc)
    XCTAssertEqual(sdes.chunks.first?.cname, "wcs-test")
    // NTP = wall clock at the origin + 1 s; RTP = offset 1000 + 3000 + (1 − 1/30) × 90 000.
    XCTAssertEqual(report.ntpTimestamp >> 32, (wallClock.value >> 32) + 1)
    XCTAssertEqual(Double(report.ntpTimestamp & 0xFFFF_FFFF) / 4_294_967_296, 0.25, accuracy: 1e-6)
    XCTAssertEqual(report.rtpTimestamp, 1000 + 3000 + 87_000)
    XCTAssertEqual(report.packetCount, 2)
    XCTAssertEqual(report.octetCount, 5)
    XCTAssertEqual(stream.nextDeadline, virtualTime(2.0))

    // The receiver answers at 1.3 s with LSR = that SR and DLSR = 0.2 s: RTT = 0.1 s.
    let block = RTCPReportBlock(
      ssrc: ssrc, fractionLost: 10, highestSequence: 1,
      lastSenderReport: NTPTimestamp(value: report.ntpTimestamp).middle32,
      delaySinceLastSenderReport: UInt32(0.2 * 65_536))
    let events = stream.handle(
      .receiverReport(RTCPReceiverReport(ssrc: 9, reports: [block])), now: virtualTime(1.3)
    ).events
    XCTAssertEqual(events.first, .receptionReport(block))
    XCTAssertEqual(try XCTUnwrap(stream.roundTripTime?.seconds), 0.1, accuracy: 2.0 / 65_536)
    // A block naming an SR we never sent gives no RTT.
    var stale = block
    stale.lastSenderReport &+= 12_345
    XCTAssertEqual(
      stream.handle(
        .receiverReport(RTCPReceiverReport(ssrc: 9, reports: [stale])), now: virtualTime(1.4)
      )
      .events, [.receptionReport(stale)])
  }

  func testTargetBitrateIsHeldWithinMinAndMax() {
    var stream = makeStream()
    XCTAssertEqual(stream.targetBitrate, 1_000_000)
    stream.targetBitrate = 5_000_000
    XCTAssertEqual(stream.targetBitrate, 1_500_000)
    stream.targetBitrate = 10
    XCTAssertEqual(stream.targetBitrate, 100_000)
    stream.targetBitrate = 640_000
    XCTAssertEqual(stream.targetBitrate, 640_000)
  }

  func testSenderReportCarriesTheReceiveSideReportBlock() throws {
    var sender = makeStream()
    var receiver = AudioReceiveStream(
      configuration: .init(
        ssrc: 0xCAFE, localSSRC: ssrc, clockRate: 48_000, sendsReceiverReports: false),
      now: virtualTime(0))
    for sequence: UInt16 in [1, 2, 4] {
      _ = receiver.receive(
        streamTestPacket(
          ssrc: 0xCAFE, sequenceNumber: sequence, timestamp: UInt32(sequence) * 960),
        now: virtualTime(0.02 * Double(sequence)))
    }
    XCTAssertFalse(
      receiver.poll(now: virtualTime(1)).rtcp.contains {
        if case .receiverReport = $0 { true } else { false }
      }, "no RR of its own")
    _ = sender.send(
      PacketizedPayload(payload: [1], marker: true, timestamp: 0), now: virtualTime(0))
    let block = try XCTUnwrap(receiver.makeReportBlock(now: virtualTime(1)))
    let output = sender.poll(now: virtualTime(1), reportBlocks: [block])
    guard case .senderReport(let report) = output.rtcp.first else { return XCTFail("no SR") }
    XCTAssertEqual(report.reports, [block])
    XCTAssertEqual(block.ssrc, 0xCAFE)
    XCTAssertEqual(block.packetsLost, 1)
    XCTAssertEqual(block.fractionLost, 64)  // 1 of 4: (1 << 8) / 4
    // The compound goes on the wire and parses back the same.
    let bytes = try RTCPPacket.serializeCompound(output.rtcp)
    XCTAssertEqual(try RTCPPacket.parseCompound(bytes), output.rtcp)
  }
}
