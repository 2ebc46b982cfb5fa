import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// A/V sync from sender reports: hand-made mappings, and the SRs two real send streams emit.
final class AVSyncTests: XCTestCase {
  func testAVSyncOffsetFromSenderReports() {
    var sync = AVSync()
    XCTAssertNil(sync.offset)
    // Both SRs name NTP 1000 s; audio RTP 48 000 ↔ that instant, video RTP 90 000.
    sync.updateAudio(
      senderReport: NTPTimestamp(seconds: 1000), rtpTimestamp: 48_000, clockRate: 48_000)
    sync.updateVideo(
      senderReport: NTPTimestamp(seconds: 1000), rtpTimestamp: 90_000, clockRate: 90_000)
    // Audio captured at 1000.1 s plays at local 5.3 s; video captured at 1000.1 s shows at 5.45 s.
    sync.audioPlayed(rtpTimestamp: 48_000 + 4800, at: virtualTime(5.3))
    sync.videoRendered(rtpTimestamp: 90_000 + 9000, at: virtualTime(5.45))
    XCTAssertEqual(try XCTUnwrap(sync.offset), 0.15, accuracy: 1e-6)
    let delays = try? XCTUnwrap(sync.targetExtraDelay)
    XCTAssertEqual(delays.map { MediaDuration($0.audio).seconds } ?? 0, 0.15, accuracy: 1e-6)
    XCTAssertEqual(delays?.video, .zero)
    // Video captured 0.2 s later than that audio shows 0.05 s after it: video 0.15 s early.
    sync.videoRendered(rtpTimestamp: 90_000 + 27_000, at: virtualTime(5.35))
    XCTAssertEqual(try XCTUnwrap(sync.offset), -0.15, accuracy: 1e-6)
    XCTAssertEqual(
      sync.targetExtraDelay.map { MediaDuration($0.video).seconds } ?? 0, 0.15, accuracy: 1e-6)
    // Timestamps that wrapped past 2^32 since the SR still map forward.
    sync.updateAudio(
      senderReport: NTPTimestamp(seconds: 2000), rtpTimestamp: 0xFFFF_FF00, clockRate: 48_000)
    sync.audioPlayed(rtpTimestamp: 0x0000_0100 &+ 48_000, at: virtualTime(10))
    sync.updateVideo(
      senderReport: NTPTimestamp(seconds: 2000), rtpTimestamp: 5, clockRate: 90_000)
    sync.videoRendered(rtpTimestamp: 5 + 90_000, at: virtualTime(10))
    // Audio capture = 2000 + (512 + 48 000) / 48 000 s, video 2001 s, both played at 10 s.
    XCTAssertEqual(try XCTUnwrap(sync.offset), 512.0 / 48_000, accuracy: 1e-6)
  }

  /// Audio and video captured on one clock, with unrelated random timestamp offsets (video's
  /// wraps 2^32 within the run): the SRs the send streams emit let the receiver recover the true
  /// playout offset.
  func testSenderReportsFromSendStreamsGiveTheTrueOffset() throws {
    let wallClock = NTPTimestamp(seconds: 3_950_000_000.5)
    var audio = RTPSendStream(
      configuration: .init(
        ssrc: 1, payloadType: 111, clockRate: 48_000, cname: "av", timestampOffset: 0x1234),
      now: virtualTime(0), wallClock: wallClock)
    var video = RTPSendStream(
      configuration: .init(
        ssrc: 2, payloadType: 96, clockRate: 90_000, cname: "av", timestampOffset: 0xFFFF_8000),
      now: virtualTime(0), wallClock: wallClock)
    var audioTimestamps: [Int: UInt32] = [:]
    var videoTimestamps: [Int: UInt32] = [:]
    for frame in 0..<50 {
      let packet = audio.send(
        PacketizedPayload(payload: [1], marker: false, timestamp: UInt32(frame * 960)),
        now: virtualTime(Double(frame) * 0.02))
      audioTimestamps[frame] = packet.header.timestamp
    }
    for frame in 0..<30 {
      let packet = video.send(
        PacketizedPayload(payload: [2], marker: true, timestamp: UInt32(frame * 3000)),
        now: virtualTime(Double(frame) / 30))
      videoTimestamps[frame] = packet.header.timestamp
    }
    // The SRs go out at different moments; each maps its own clock to the common NTP time.
    let audioSR = audio.senderReport(now: virtualTime(1.013))
    let videoSR = video.senderReport(now: virtualTime(1.271))
    // Parse them back as a receiver would.
    let parsed = try RTCPPacket.parseCompound(
      RTCPPacket.serializeCompound([.senderReport(audioSR), .senderReport(videoSR)]))
    var sync = AVSync()
    for case .senderReport(let report) in parsed {
      if report.ssrc == 1 {
        sync.updateAudio(
          senderReport: NTPTimestamp(value: report.ntpTimestamp),
          rtpTimestamp: report.rtpTimestamp, clockRate: 48_000)
      } else {
        sync.updateVideo(
          senderReport: NTPTimestamp(value: report.ntpTimestamp),
          rtpTimestamp: report.rtpTimestamp, clockRate: 90_000)
      }
    }
    // Audio captured at 0.8 s plays 150 ms later; video captured at 0.8 s shows 250 ms later.
    sync.audioPlayed(rtpTimestamp: try XCTUnwrap(audioTimestamps[40]), at: virtualTime(100.95))
    sync.videoRendered(rtpTimestamp: try XCTUnwrap(videoTimestamps[24]), at: virtualTime(101.05))
    // Within a tick of either clock plus NTP rounding.
    XCTAssertEqual(try XCTUnwrap(sync.offset), 0.100, accuracy: 0.000_1)
    XCTAssertEqual(
      sync.targetExtraDelay.map { MediaDuration($0.audio).seconds } ?? 0, 0.100, accuracy: 0.000_1)
    XCTAssertEqual(sync.targetExtraDelay?.video, .zero)
  }
}
