import XCTest

@testable import WCSProtocols

/// The publish session numbers a frame's packets on its stream, paces video and audio with
/// transport-wide numbers in the order they leave, answers NACK with RTX and PLI with a key
/// frame request, and hands the congestion controller's target to the video stream.
final class RTPPublishSessionTests: XCTestCase {
  private let videoSSRC: UInt32 = 0x1111
  private let audioSSRC: UInt32 = 0x2222
  private let rtx = RTPRetransmission(ssrc: 0x3333, payloadType: 97)
  private let start = MediaInstant(nanoseconds: 5_000_000_000)
  private let wallClock = NTPTimestamp(value: 0xE8A1_0000_4000_0000)

  private func session(video: Bool = true, transportWideCCID: UInt8? = 3) -> RTPPublishSession {
    RTPPublishSession(
      configuration: .init(
        video: video
          ? .init(
            ssrc: videoSSRC, payloadType: 96, clockRate: 90_000, retransmission: rtx,
            cname: "wcs-test", minBitrate: 100_000, maxBitrate: 2_000_000,
            startBitrate: 300_000, initialSequenceNumber: 100, timestampOffset: 0)
          : nil,
        audio: .init(
          ssrc: audioSSRC, payloadType: 111, clockRate: 48_000, cname: "wcs-test",
          minBitrate: 6_000, maxBitrate: 510_000, startBitrate: 32_000,
          initialSequenceNumber: 500, timestampOffset: 0),
        transportWideCCID: transportWideCCID),
      now: start, wallClock: wallClock)
  }

  private func frame(_ count: Int, size: Int = 1000, timestamp: UInt32 = 9000)
    -> [PacketizedPayload]
  {
    (0..<count).map {
      PacketizedPayload(
        payload: [UInt8](repeating: UInt8($0), count: size), marker: $0 == count - 1,
        timestamp: timestamp)
    }
  }

  private func parse(_ output: RTPPublishSession.Output) throws -> [RTPPacket] {
    try output.packets.map { try RTPPacket.parse($0) }
  }

  func testVideoAndAudioLeaveThePacerWithTransportNumbersInSendOrder() throws {
    var session = session()
    // A key frame of 30 packets is more than one burst at the start target: some wait.
    let video = try parse(
      session.send(frame(30), kind: .video, now: start, captureTime: start))
    XCTAssertGreaterThan(video.count, 0)
    XCTAssertLessThan(video.count, 30, "the pacer holds back part of the frame")
    let waiting = try XCTUnwrap(session.nextPacedSendTime)
    XCTAssertGreaterThan(waiting, start)
    // Audio queued behind the video goes out before the rest of it.
    let audio = try parse(
      session.send(frame(1, size: 80), kind: .audio, now: waiting, captureTime: waiting))
    XCTAssertEqual(audio.first?.header.ssrc, audioSSRC)
    var rest: [RTPPacket] = audio.dropFirst().map { $0 }
    var now = waiting
    while let next = session.nextPacedSendTime, rest.count + video.count < 31 {
      now = max(now, next)
      rest += try parse(session.releasePaced(now: now))
    }
    let all = video + audio.prefix(1) + rest
    XCTAssertEqual(
      all.filter { $0.header.ssrc == videoSSRC }.map(\.header.sequenceNumber),
      (100..<130).map { UInt16($0) })
    XCTAssertEqual(
      all.map { TransportWideCC.sequenceNumber(in: $0.header, id: 3) },
      (0..<31).map { UInt16($0) })
    var videoBytes = 0
    for packet in all where packet.header.ssrc == videoSSRC {
      videoBytes += try packet.serialized().count
    }
    XCTAssertEqual(session.counters.videoBytesSent, UInt64(videoBytes))
  }

  func testAudioAloneIsNotPacedAndCarriesNoTransportNumberWithoutTheExtension() throws {
    var session = session(video: false, transportWideCCID: nil)
    XCTAssertNil(session.pacer)
    XCTAssertNil(session.estimator)
    let packets = try parse(
      session.send(frame(1, size: 80), kind: .audio, now: start, captureTime: start))
    XCTAssertEqual(packets.map(\.header.sequenceNumber), [500])
    XCTAssertNil(TransportWideCC.sequenceNumber(in: packets[0].header, id: 3))
    XCTAssertNil(session.nextPacedSendTime)
  }

  func testNACKIsAnsweredWithRTXAndPLIAsksForAKeyFrame() throws {
    var session = session()
    var now = start
    var sent: [RTPPacket] = try parse(
      session.send(frame(3, size: 100), kind: .video, now: now, captureTime: now))
    while sent.count < 3, let next = session.nextPacedSendTime {
      now = max(now, next)
      sent += try parse(session.releasePaced(now: now))
    }
    XCTAssertEqual(sent.map(\.header.sequenceNumber), [100, 101, 102])
    now = now + .milliseconds(50)
    let answered = session.handle(
      [
        .genericNACK(RTCPGenericNACK(senderSSRC: 9, mediaSSRC: videoSSRC, lost: [101])),
        .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 9, mediaSSRC: videoSSRC)),
      ], now: now)
    let retransmitted = try XCTUnwrap(try parse(answered).first)
    XCTAssertEqual(retransmitted.header.ssrc, rtx.ssrc)
    let original = try XCTUnwrap(
      try RTXPacketFormat.unwrap(retransmitted, ssrc: videoSSRC, payloadType: 96))
    XCTAssertEqual(original.header.sequenceNumber, 101)
    XCTAssertEqual(original.payload, sent[1].payload)
    XCTAssertEqual(answered.events, [.keyFrameRequested])
  }

  func testAREMBBelowTheTargetLowersTheVideoStreamAndThePacer() throws {
    var session = session()
    let before = try XCTUnwrap(session.pacer?.pacingRate)
    let output = session.handle(
      [
        .receiverEstimatedMaxBitrate(
          RTCPReceiverEstimatedMaxBitrate(senderSSRC: 9, bitrate: 150_000, ssrcs: [videoSSRC]))
      ], now: start + .milliseconds(10))
    XCTAssertEqual(output.events, [.targetBitrateChanged(150_000)])
    XCTAssertEqual(session.videoSend?.targetBitrate, 150_000)
    XCTAssertLessThan(try XCTUnwrap(session.pacer?.pacingRate), before)
    // The same estimate again changes nothing.
    let again = session.handle(
      [
        .receiverEstimatedMaxBitrate(
          RTCPReceiverEstimatedMaxBitrate(senderSSRC: 9, bitrate: 150_000, ssrcs: [videoSSRC]))
      ], now: start + .milliseconds(20))
    XCTAssertEqual(again.events, [])
  }

  func testPollSendsEachStreamsSenderReportInItsOwnCompound() throws {
    var session = session()
    _ = session.send(frame(1, size: 100), kind: .video, now: start, captureTime: start)
    _ = session.send(frame(1, size: 80), kind: .audio, now: start, captureTime: start)
    let due = try XCTUnwrap(session.nextDeadline)
    let output = session.poll(now: due + .seconds(5))
    let reporters = output.rtcp.compactMap { compound -> UInt32? in
      if case .senderReport(let report)? = compound.first { report.ssrc } else { nil }
    }
    XCTAssertEqual(Set(reporters), [videoSSRC, audioSSRC])
    XCTAssertEqual(output.rtcp.count, 2)
  }
}
