import Foundation
import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// Loss on the publisher's link itself, before the receiving side's SRTP (`DroppingUDPProxy`):
/// what a real network does, so the repair must get through SRTP replay protection too.
final class NativeMediaBackendLinkLossTests: XCTestCase {
  private static let videoOnly = MediaConnectionRequest(
    direction: .publish, audio: nil, video: .init(maxWidth: 320, maxHeight: 240, maxFrameRate: 30))

  /// Runs a call where the first copy of every 7th VP8 packet is lost on the publisher's link;
  /// returns the publisher's and the player's statistics once 40 frames were shown in order.
  private func runLossyCall(negotiatesRTX: Bool) throws -> (
    sent: NativeMediaConnection.DetailedStatistics, got: NativeMediaConnection.DetailedStatistics,
    payloadTypes: Set<UInt8>, dropped: Int
  ) {
    let call = try LoopbackCall(publish: Self.videoOnly)
    defer { call.close() }
    call.relay.negotiatesRTX = negotiatesRTX
    let seen = BackendTestBox<Set<UInt16>>([])
    call.relay.publisherLinkDrop = { payloadType, sequenceNumber in
      guard payloadType == 96, sequenceNumber % 7 == 3 else { return false }
      return seen.mutate { $0.insert(sequenceNumber).inserted }
    }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("40 frames despite loss") { call.frames.value.count >= 40 }
    let numbers = call.frameNumbers
    XCTAssertEqual(numbers, numbers.sorted())
    XCTAssertGreaterThanOrEqual(numbers.count, call.frames.value.count - 2)
    // The player's counters first: the call still runs, and what it received by then the
    // publisher had sent by the later read (`rtxPacketsReceived ≤ retransmissions` holds).
    let got = try XCTUnwrap(call.statistics(of: call.player, self))
    let sent = try XCTUnwrap(call.statistics(of: call.publisher, self))
    return (
      sent, got, Set(call.relay.ssrcsByPayloadType.value.keys),
      call.relay.publisherLinkDropped.value
    )
  }

  /// Without RTX the publisher answers each NACK with the packet as first sent (RFC 4585
  /// §6.2.1): the same SSRC, sequence number and SRTP index, which libsrtp protects again only
  /// with `allow_repeat_tx`; the relay's SRTP, which never got the first copy, accepts it.
  func testNACKedPacketArrivesByPlainResendOverSRTP() throws {
    let result = try runLossyCall(negotiatesRTX: false)
    XCTAssertGreaterThan(result.dropped, 0)
    XCTAssertEqual(result.payloadTypes, [96], "no RTX stream without RTX negotiated")
    XCTAssertGreaterThan(result.sent.retransmissions, 0)
    XCTAssertEqual(result.sent.rtpSendFailures, 0, "every resend was protected and sent")
    XCTAssertGreaterThan(result.got.nacksSent, 0)
    XCTAssertGreaterThan(result.got.packetsRecovered, 0)
  }

  /// With RTX negotiated the same loss is repaired on the RTX stream (RFC 4588).
  func testNACKedPacketArrivesByRTXWhenNegotiated() throws {
    let result = try runLossyCall(negotiatesRTX: true)
    XCTAssertGreaterThan(result.dropped, 0)
    XCTAssertTrue(result.payloadTypes.contains(97), "RTX payload type seen")
    XCTAssertGreaterThan(result.sent.retransmissions, 0)
    XCTAssertEqual(result.sent.rtpSendFailures, 0)
    XCTAssertGreaterThan(result.got.packetsRecovered, 0)
    // The player restored them from RTX and counts them so (not as first copies).
    XCTAssertGreaterThan(result.got.rtxPacketsReceived, 0)
    XCTAssertLessThanOrEqual(result.got.rtxPacketsReceived, result.sent.retransmissions)
  }
}
