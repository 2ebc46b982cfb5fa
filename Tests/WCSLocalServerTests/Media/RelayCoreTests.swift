import Foundation
import WCSMedia
import XCTest

@testable import WCSLocalServer

/// The Sans-I/O pieces of the SFU relay: packet cache, per-player rewrite, key frame request
/// limit, receiver statistics, payload type mapping.
final class RelayCoreTests: XCTestCase {
  /// V=2, M=1, PT=96, seq 0xFFFE, ts 0xFFFFFF00, SSRC 0x11223344, payload DE AD.
  let packet: [UInt8] = [
    0x80, 0xE0, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF, 0x00, 0x11, 0x22, 0x33, 0x44, 0xDE, 0xAD,
  ]

  func testRewriteChangesSSRCPayloadTypeSequenceAndTimestampOnly() throws {
    var rewriter = RelayRTPRewriter(
      ssrc: 0xAABB_CCDD, payloadTypes: [96: 100], sequenceOffset: 5, timestampOffset: 0x200)
    let out = try XCTUnwrap(rewriter.rewrite(packet, now: ms(1000)))
    XCTAssertEqual(
      out,
      [0x80, 0xE4, 0x00, 0x03, 0x00, 0x00, 0x01, 0x00, 0xAA, 0xBB, 0xCC, 0xDD, 0xDE, 0xAD],
      "marker kept, PT 100, seq wraps to 3, ts wraps to 0x100")
    XCTAssertEqual(rewriter.packetCount, 1)
    XCTAssertEqual(rewriter.octetCount, 2)
    XCTAssertEqual(rewriter.lastTimestamp, 0x100)
    XCTAssertEqual(rewriter.sourceSequenceNumber(3), 0xFFFE, "a NACK for 3 means source 0xFFFE")
    // Not relayed: unknown payload type, short packet, wrong version.
    var other = packet
    other[1] = 0x61
    XCTAssertNil(rewriter.rewrite(other, now: ms(0)))
    XCTAssertNil(rewriter.rewrite(Array(packet.prefix(11)), now: ms(0)))
    other = packet
    other[0] = 0x40
    XCTAssertNil(rewriter.rewrite(other, now: ms(0)))
    XCTAssertEqual(rewriter.packetCount, 1)
  }

  func testRewriteDropsHeaderExtensionsTheBrowserNegotiatedDifferently() throws {
    // X=1, one-byte extension profile BEDE, 1 word: id 1 len 1 (2 bytes) + padding.
    let withExtension: [UInt8] = [
      0x90, 0x60, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x01, 0x02, 0x03, 0x04,
      0xBE, 0xDE, 0x00, 0x01, 0x10, 0xAA, 0xBB, 0x00, 0x42,
    ]
    var rewriter = RelayRTPRewriter(
      ssrc: 7, payloadTypes: [96: 96], sequenceOffset: 0, timestampOffset: 0)
    let out = try XCTUnwrap(rewriter.rewrite(withExtension, now: ms(0)))
    XCTAssertEqual(
      out, [0x80, 0x60, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x07, 0x42])
    // An extension length pointing past the end is refused, not read.
    var truncated = withExtension
    truncated[15] = 9
    XCTAssertNil(rewriter.rewrite(truncated, now: ms(0)))
  }

  func testPacketCacheKeepsTheLastPacketsBySequenceNumber() {
    var cache = RelayPacketCache(capacity: 1000)
    XCTAssertEqual(cache.capacity, 1024)
    for sequence in 0..<1100 {
      let number = UInt16(truncatingIfNeeded: 65000 + sequence)
      cache.store([UInt8(truncatingIfNeeded: sequence)], sequenceNumber: number)
    }
    XCTAssertNil(cache.packet(65000), "evicted by 1024 newer packets")
    XCTAssertNil(cache.packet(UInt16(truncatingIfNeeded: 65000 + 75)))
    XCTAssertEqual(cache.packet(UInt16(truncatingIfNeeded: 65000 + 76)), [76])
    XCTAssertEqual(cache.packet(UInt16(truncatingIfNeeded: 65000 + 1099)), [UInt8(1099 % 256)])
    XCTAssertNil(cache.packet(UInt16(truncatingIfNeeded: 65000 + 1100)), "never stored")
  }

  /// One PLI per second reaches the publisher; a request inside the interval is deferred to
  /// its end (not dropped), and every request made meanwhile folds into that one.
  func testKeyFrameRequestInsideTheIntervalIsDeferredNotDropped() {
    var limiter = KeyFrameRequestLimiter(interval: .seconds(1))
    XCTAssertEqual(limiter.request(now: ms(0)), .forward)
    XCTAssertEqual(limiter.request(now: ms(10)), .deferred(until: ms(1000)))
    XCTAssertEqual(limiter.request(now: ms(999)), .deferred(until: ms(1000)))
    XCTAssertEqual(limiter.deferredRequests, 2)
    XCTAssertFalse(limiter.takeDeferred(now: ms(999)))
    XCTAssertTrue(limiter.takeDeferred(now: ms(1000)))
    XCTAssertFalse(limiter.takeDeferred(now: ms(1001)), "served once")
    XCTAssertNil(limiter.deferredDeadline)
    // The deferred PLI counts as forwarded at 1000: the next request waits for 2000.
    XCTAssertEqual(limiter.request(now: ms(1500)), .deferred(until: ms(2000)))
    XCTAssertTrue(limiter.takeDeferred(now: ms(2003)))
    XCTAssertEqual(limiter.request(now: ms(5000)), .forward)
  }

  /// Once the last PLI was answered by a key frame, a waiting request goes out a quarter
  /// interval after that PLI instead of a whole one; it is not dropped as served.
  func testAnAnsweredPLILetsTheNextFollowAfterAQuarterInterval() {
    var limiter = KeyFrameRequestLimiter(interval: .seconds(1))
    XCTAssertNil(limiter.keyFrameArrived(), "no PLI sent yet")
    XCTAssertEqual(limiter.request(now: ms(0)), .forward)
    XCTAssertEqual(limiter.request(now: ms(20)), .deferred(until: ms(1000)))
    XCTAssertEqual(limiter.keyFrameArrived(), ms(250), "the deferred PLI moves up")
    XCTAssertNil(limiter.keyFrameArrived(), "a second key frame changes nothing")
    XCTAssertEqual(limiter.deferredDeadline, ms(250))
    XCTAssertTrue(limiter.takeDeferred(now: ms(250)))
    // That PLI is unanswered so far: the full interval again.
    XCTAssertEqual(limiter.request(now: ms(300)), .deferred(until: ms(1250)))
    // Its key frame comes: the waiting request moves up to a quarter interval after it.
    XCTAssertEqual(limiter.keyFrameArrived(), ms(500))
    XCTAssertTrue(limiter.takeDeferred(now: ms(500)))
  }

  /// A PLI flood: a thousand requests within one interval cost one deferred PLI.
  func testKeyFrameRequestFloodYieldsOnePLIPerInterval() {
    var limiter = KeyFrameRequestLimiter(interval: .seconds(1))
    var forwarded = 0
    for now in stride(from: Int64(0), to: 3000, by: 3) {
      if limiter.takeDeferred(now: ms(now)) { forwarded += 1 }
      if limiter.request(now: ms(now)) == .forward { forwarded += 1 }
    }
    XCTAssertEqual(forwarded, 3)
  }

  /// A NACK storm (every sequence number, asked again and again) gets the burst at once and
  /// then the per-second rate; a number resent within the interval is refused as too soon.
  func testResendLimiterBoundsANACKStorm() {
    var limiter = RelayResendLimiter(perSecond: 100, burst: 50, capacity: 1024)
    var sent = 0
    var tooSoon = 0
    var limited = 0
    for round in 0..<10 {
      for sequenceNumber in UInt16(0)..<1000 {
        switch limiter.admit(
          sequenceNumber, now: ms(Int64(round) * 100), minimumInterval: .milliseconds(40))
        {
        case .send: sent += 1
        case .tooSoon: tooSoon += 1
        case .rateLimited: limited += 1
        }
      }
    }
    // 50 at once, then 10 per 100 ms for 900 ms.
    XCTAssertEqual(sent, 50 + 9 * 10)
    XCTAssertEqual(sent + tooSoon + limited, 10_000)
    XCTAssertEqual(limiter.admit(0, now: ms(10_000), minimumInterval: .milliseconds(40)), .send)
    XCTAssertEqual(limiter.admit(0, now: ms(10_010), minimumInterval: .milliseconds(40)), .tooSoon)
    XCTAssertEqual(limiter.admit(0, now: ms(10_050), minimumInterval: .milliseconds(40)), .send)
  }

  func testVP8KeyFrameStartIsRecognised() {
    // Descriptor with S=1 PID=0, then a frame tag with P=0 (key) / P=1 (delta).
    XCTAssertTrue(LocalServerRelayEngine.startsVP8KeyFrame([0x10, 0x50, 0x2A, 0x00]))
    XCTAssertFalse(LocalServerRelayEngine.startsVP8KeyFrame([0x10, 0x51, 0x2A, 0x00]))
    // Not the start of partition 0.
    XCTAssertFalse(LocalServerRelayEngine.startsVP8KeyFrame([0x00, 0x50, 0x2A, 0x00]))
    // Extended descriptor (X, I with a 15-bit picture ID) before the tag.
    XCTAssertTrue(LocalServerRelayEngine.startsVP8KeyFrame([0x90, 0x80, 0x81, 0x23, 0x50]))
    XCTAssertFalse(LocalServerRelayEngine.startsVP8KeyFrame([0x10]))
    XCTAssertFalse(LocalServerRelayEngine.startsVP8KeyFrame([]))
  }

  func testReceptionStatisticsCountLossAcrossTheWrap() throws {
    var statistics = RelayReceptionStatistics(ssrc: 9, clockRate: 90_000)
    XCTAssertNil(statistics.reportBlock(now: ms(0)))
    // 65530 ... 65535, 0 ... 9 with 65533 and 4 missing: 16 expected, 14 received.
    var sequences = Array(65530...65535).map { UInt16($0) } + (0...9).map { UInt16($0) }
    sequences.removeAll { $0 == 65533 || $0 == 4 }
    for (index, sequence) in sequences.enumerated() {
      statistics.record(
        sequenceNumber: sequence, timestamp: UInt32(index * 3000), now: ms(Int64(index * 33)))
    }
    statistics.senderReportReceived(ntpTimestamp: 0x1234_5678_9ABC_DEF0, now: ms(1000))
    let block = try XCTUnwrap(statistics.reportBlock(now: ms(1500)))
    XCTAssertEqual(block.ssrc, 9)
    XCTAssertEqual(block.highestSequence, 65536 + 9)
    XCTAssertEqual(block.packetsLost, 2)
    XCTAssertEqual(block.fractionLost, UInt8(2 * 256 / 16))
    XCTAssertEqual(block.lastSenderReport, 0x5678_9ABC)
    XCTAssertEqual(block.delaySinceLastSenderReport, 32768, "0.5 s in 1/65536 s")
    // Arrivals every 33 ms with 3000-tick steps: |D| = |2970 - 3000| = 30 ticks per packet.
    XCTAssertGreaterThan(block.jitter, 5)
    XCTAssertLessThanOrEqual(block.jitter, 30)
    let next = try XCTUnwrap(statistics.reportBlock(now: ms(2500)))
    XCTAssertEqual(next.fractionLost, 0, "no new packets, no new loss in this interval")
  }

  /// Packets sent before the first one to arrive (a reordered start) are expected too: the
  /// base moves back to them, so the cumulative loss never goes negative.
  func testReceptionStatisticsTakePacketsBeforeTheFirstArrivalAsExpected() throws {
    var statistics = RelayReceptionStatistics(ssrc: 9, clockRate: 90_000)
    for (index, sequence) in [UInt16(12), 13, 10, 14, 16].enumerated() {
      statistics.record(
        sequenceNumber: sequence, timestamp: UInt32(index * 3000), now: ms(Int64(index * 33)))
    }
    // 10 ... 16 expected (7), 5 received: 11 and 15 lost.
    let block = try XCTUnwrap(statistics.reportBlock(now: ms(500)))
    XCTAssertEqual(block.packetsLost, 2)
    XCTAssertEqual(block.highestSequence, 16)
    XCTAssertEqual(block.fractionLost, UInt8(2 * 256 / 7))
  }

  func testPayloadTypeMapMatchesCodecsByNameAndClockRate() throws {
    let publisherSDP = try SDPParser.parse(Self.offer(audio: "111 0", video: "96 97")).description
    let playerSDP = try SDPParser.parse(Self.offer(audio: "109 0", video: "120 121")).description
    let publisher = RelayCodecs.payloadTypes(in: publisherSDP)
    XCTAssertEqual(publisher[111], RelayCodec(kind: .audio, name: "opus", clockRate: 48_000))
    XCTAssertEqual(publisher[96], RelayCodec(kind: .video, name: "VP8", clockRate: 90_000))
    XCTAssertNil(publisher[0], "PCMU is not relayed")
    XCTAssertNil(publisher[97], "rtx is not relayed")
    let player = RelayCodecs.payloadTypes(in: playerSDP)
    XCTAssertEqual(
      RelayCodecs.payloadTypeMap(publisher: publisher, player: player), [111: 109, 96: 120])
  }

  static func offer(audio: String, video: String) -> String {
    let audioTypes = audio.split(separator: " ")
    let videoTypes = video.split(separator: " ")
    return [
      "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0",
      "m=audio 9 UDP/TLS/RTP/SAVPF \(audio)", "c=IN IP4 0.0.0.0",
      "a=rtpmap:\(audioTypes[0]) opus/48000/2", "a=rtpmap:0 PCMU/8000",
      "m=video 9 UDP/TLS/RTP/SAVPF \(video)", "c=IN IP4 0.0.0.0",
      "a=rtpmap:\(videoTypes[0]) VP8/90000", "a=rtpmap:\(videoTypes[1]) rtx/90000",
      "a=fmtp:\(videoTypes[1]) apt=\(videoTypes[0])", "",
    ].joined(separator: "\r\n")
  }

  /// Clients see WCS wording or a generic text, never Swift type names or errno values.
  func testFailureReasonsHideInternalDetail() {
    let socketError = PeerConnectionError.socket(.socketCreationFailed(errno: 24))
    let text = LocalServerRelayEngine.reason(socketError)
    XCTAssertEqual(text, "Failed by internal error")
    XCTAssertFalse(text.contains("EventLoopError"))
    XCTAssertEqual(
      LocalServerRelayEngine.reason(PeerConnectionError.iceFailed), "Failed by ICE timeout")
    XCTAssertEqual(
      LocalServerRelayEngine.reason(RelayAnswerError.noCommonCodecs), "No common codecs")
    XCTAssertEqual(
      LocalServerRelayEngine.reason(PeerConnectionError.unanswerableOffer(.noMediaSections)),
      "Offer has no media sections")
    XCTAssertEqual(
      LocalServerRelayEngine.reason(RelayAnswerError.offer(.allMediaSectionsRejected)),
      "Every media section is rejected (port 0)")
    XCTAssertEqual(
      LocalServerRelayEngine.reason(CocoaError(.fileNoSuchFile)), "Failed by internal error")
  }

  /// An offer that does not parse, or lacks ICE credentials or a fingerprint, is the client's
  /// fault: FAILED says the offer is malformed (the detail goes to the log), not "internal error".
  func testMalformedOfferFailsWithItsOwnInfo() {
    XCTAssertEqual(
      LocalServerRelayEngine.reason(PeerConnectionError.sdp(reason: "offer: no a=fingerprint")),
      "Malformed SDP offer")
    XCTAssertEqual(
      LocalServerRelayEngine.reason(PeerConnectionError.incompatibleSetup(reason: "both active")),
      "Malformed SDP offer")
    XCTAssertEqual(LocalServerRelayEngine.reason(SDPParseError.empty), "Malformed SDP offer")
  }
}

/// The instant `value` ms after the clock's epoch: the limiters' and statistics' `now`.
private func ms(_ value: Int64) -> MediaInstant { .milliseconds(value) }
