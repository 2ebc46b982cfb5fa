import XCTest

@testable import WCSProtocols

/// The play session routes packets to one video and one audio stream, keeps unknown sources
/// out, restores RTX, emits transport feedback when it falls due, and counts.
final class RTPPlaySessionTests: XCTestCase {
  private let origin = MediaInstant(nanoseconds: 0)
  private let start = MediaInstant(nanoseconds: 5_000_000_000)

  private func session(rtx: UInt8? = nil, transportWideCCID: UInt8? = nil) -> RTPPlaySession {
    RTPPlaySession(
      configuration: .init(
        localSSRC: 99, videoPayloadType: 96, audioPayloadType: 111, rtxPayloadType: rtx,
        transportWideCCID: transportWideCCID, feedbackClockOrigin: origin))
  }

  private func bytes(
    ssrc: UInt32, sequenceNumber: UInt16, payloadType: UInt8, transportSequenceNumber: UInt16? = nil
  ) throws -> [UInt8] {
    var packet = RTPPacket(
      header: RTPHeader(
        payloadType: payloadType, sequenceNumber: sequenceNumber,
        timestamp: UInt32(sequenceNumber) * 960, ssrc: ssrc),
      payload: [1, 2, 3, 4])
    if let transportSequenceNumber {
      TransportWideCC.stamp(&packet.header, id: 3, sequenceNumber: transportSequenceNumber)
    }
    return try packet.serialized()
  }

  private func receive(
    _ bytes: [UInt8], ssrc: UInt32, at now: MediaInstant, into session: inout RTPPlaySession
  ) -> RTPPlaySession.Reception {
    bytes.withUnsafeBytes { session.receive($0, ssrc: ssrc, now: now) }
  }

  func testPacketsRouteToTheStreamOfTheirPayloadTypeAndCount() throws {
    var play = session()
    let audio = try bytes(ssrc: 20, sequenceNumber: 1, payloadType: 111)
    let video = try bytes(ssrc: 10, sequenceNumber: 1, payloadType: 96)
    let heard = receive(audio, ssrc: 20, at: start, into: &play)
    XCTAssertEqual(heard.kind, .audio)
    XCTAssertEqual(heard.output.packets.map(\.packet.header.sequenceNumber), [1])
    XCTAssertEqual(heard.pollBy, start + .seconds(1), "the audio stream's first RR")
    let seen = receive(video, ssrc: 10, at: start, into: &play)
    XCTAssertEqual(seen.kind, .video)
    XCTAssertTrue(seen.output.packets.isEmpty, "video waits in the jitter buffer")
    XCTAssertFalse(seen.videoSourceChanged)
    XCTAssertEqual(play.video?.source.configuration.ssrc, 10)
    XCTAssertEqual(play.audio?.source.configuration.ssrc, 20)
    XCTAssertEqual(play.source(of: 20)?.kind, .audio)
    XCTAssertNil(play.source(of: 30))
    XCTAssertEqual(play.counters.packetsReceived, 2)
    XCTAssertEqual(play.counters.bytesReceived, UInt64(audio.count + video.count))
    XCTAssertEqual(play.counters.videoBytesReceived, UInt64(video.count))
    XCTAssertEqual(play.counters.malformedPackets, 0)
    // Released by the poll once its playout delay passed, with the first RR.
    let polled = play.poll(now: start + .seconds(1))
    XCTAssertEqual(polled.video.packets.map(\.packet.header.sequenceNumber), [1])
    XCTAssertTrue(
      polled.video.rtcp.contains { if case .receiverReport = $0 { true } else { false } })
    XCTAssertTrue(polled.transportFeedback.isEmpty, "no transport feedback negotiated")
  }

  func testUnknownSourcesAreDroppedUntilTheCurrentOneFallsSilent() throws {
    var play = session()
    _ = receive(
      try bytes(ssrc: 10, sequenceNumber: 1, payloadType: 96), ssrc: 10, at: start, into: &play)
    for stray in UInt32(11)..<111 {
      let packet = try bytes(ssrc: stray, sequenceNumber: 7, payloadType: 96)
      XCTAssertNil(receive(packet, ssrc: stray, at: start + .milliseconds(10), into: &play).kind)
    }
    let unplayed = try bytes(ssrc: 40, sequenceNumber: 1, payloadType: 50)
    XCTAssertNil(receive(unplayed, ssrc: 40, at: start, into: &play).kind)
    XCTAssertEqual(play.counters.malformedPackets, 101)
    XCTAssertEqual(play.video?.source.configuration.ssrc, 10, "no stray took the stream")
    XCTAssertNil(play.audio)
    // After the current source's silence, a new one takes over and the track starts over.
    let restart = RTPPlaySession.sourceTakeoverSilence
    let newSource = try bytes(ssrc: 12, sequenceNumber: 500, payloadType: 96)
    let taken = receive(newSource, ssrc: 12, at: start + restart, into: &play)
    XCTAssertEqual(taken.kind, .video)
    XCTAssertTrue(taken.videoSourceChanged)
    XCTAssertEqual(play.video?.source.configuration.ssrc, 12)
    XCTAssertNil(play.source(of: 10))
  }

  func testRTXIsRestoredToTheVideoSource() throws {
    var play = session(rtx: 97)
    let media = RTPPacket(
      header: RTPHeader(payloadType: 96, sequenceNumber: 2, timestamp: 3000, ssrc: 10),
      payload: [5, 6])
    let rtx = try RTXPacketFormat.wrap(media, ssrc: 30, payloadType: 97, sequenceNumber: 1)
      .serialized()
    XCTAssertNil(receive(rtx, ssrc: 30, at: start, into: &play).kind, "RTX before any video")
    XCTAssertEqual(play.counters.malformedPackets, 1)
    _ = receive(
      try bytes(ssrc: 10, sequenceNumber: 1, payloadType: 96), ssrc: 10, at: start, into: &play)
    let repaired = receive(rtx, ssrc: 30, at: start + .milliseconds(5), into: &play)
    XCTAssertEqual(repaired.kind, .video)
    XCTAssertEqual(play.video?.source.counters.retransmittedPackets, 1)
    XCTAssertEqual(play.video?.source.counters.packets, 1)
    // A second RTX SSRC within the silence is not taken.
    let other = try RTXPacketFormat.wrap(media, ssrc: 31, payloadType: 97, sequenceNumber: 1)
      .serialized()
    XCTAssertNil(receive(other, ssrc: 31, at: start + .milliseconds(6), into: &play).kind)
    XCTAssertEqual(play.counters.malformedPackets, 2)
  }

  func testTransportFeedbackIsEmittedOneIntervalAfterTheFirstArrival() throws {
    var play = session(transportWideCCID: 3)
    for number in UInt16(0)..<3 {
      let packet = try bytes(
        ssrc: 20, sequenceNumber: number, payloadType: 111, transportSequenceNumber: number)
      let reception = receive(
        packet, ssrc: 20, at: start + .milliseconds(Int(number) * 20), into: &play)
      XCTAssertEqual(reception.pollBy, start + .milliseconds(100), "packet \(number)")
    }
    XCTAssertEqual(play.nextDeadline, start + .milliseconds(100))
    XCTAssertTrue(play.poll(now: start + .milliseconds(99)).transportFeedback.isEmpty)
    let polled = play.poll(now: start + .milliseconds(100))
    XCTAssertEqual(polled.transportFeedback.count, 1)
    guard case .transportWideFeedback(let feedback) = polled.transportFeedback.first else {
      return XCTFail("not transport feedback: \(polled.transportFeedback)")
    }
    XCTAssertEqual(feedback.senderSSRC, 99)
    XCTAssertEqual(feedback.mediaSSRC, 20)
    XCTAssertEqual(feedback.baseSequenceNumber, 0)
    XCTAssertEqual(feedback.packets.count, 3)
    XCTAssertEqual(play.counters.transportFeedbackSent, 1)
    XCTAssertEqual(play.nextDeadline, start + .seconds(1), "then the audio stream's RR")
  }

  func testShortAndUnparsableDatagramsAreCountedApart() {
    var play = session()
    XCTAssertNil(receive(Array(repeating: 0x80, count: 11), ssrc: 1, at: start, into: &play).kind)
    XCTAssertEqual(play.counters.packetsReceived, 0, "shorter than a header: not RTP")
    // Version 0 in the first octet.
    XCTAssertNil(receive(Array(repeating: 0, count: 12), ssrc: 0, at: start, into: &play).kind)
    XCTAssertEqual(play.counters.packetsReceived, 1)
    XCTAssertEqual(play.counters.bytesReceived, 12)
    XCTAssertEqual(play.counters.malformedPackets, 1)
  }
}
