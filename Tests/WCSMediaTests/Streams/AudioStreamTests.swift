import XCTest

@testable import WCSMedia

/// Opus over a lossy, jittery link: playout every 20 ms with FEC and PLC, and A/V sync offsets.
final class AudioStreamTests: XCTestCase {
  private struct Run {
    var statistics: AudioReceiver.Statistics
    var played: [PCMAudioFrame]
    var sourceEnergy: Double
    var framesSent: Int
    var malformed: Int
    var garbageDelivered: Int
  }

  private func run(fec: Bool, seconds: Double, seed: UInt64) throws -> Run {
    let ssrc: UInt32 = 0xA0D1_0001
    let microphone = VirtualMicrophone(signal: .tone(frequency: 440), amplitude: 8000)
    let encoder = try OpusEncoder(
      configuration: .init(bitrate: 32_000, inbandFEC: fec, expectedPacketLossPercent: 10))
    var sender = RTPSendStream(
      configuration: .init(
        ssrc: ssrc, payloadType: 111, clockRate: 48_000, cname: "audio",
        initialSequenceNumber: 65_500, timestampOffset: 77),
      now: at(0), wallClock: NTPTimestamp(seconds: 3_900_000_000))
    var stream = RTPReceiveStream(
      configuration: .init(
        ssrc: ssrc, localSSRC: 1, payloadType: 111, clockRate: 48_000, nackEnabled: false,
        buffersPackets: false),
      now: at(0))
    let receiver = try AudioReceiver(playoutDelay: .milliseconds(100))
    var link = VirtualLink<[UInt8]>(seed: seed, lossRate: 0.10, baseDelay: 0.020, jitter: 0.050)

    var played: [PCMAudioFrame] = []
    var sourceEnergy = 0.0
    var garbageDelivered = 0
    let frames = Int(seconds * 50)
    for tick in 0..<(frames + 20) {
      let now = Double(tick) * 0.020
      if tick < frames {
        let pcm = microphone.frame(tick)
        sourceEnergy += pcm.energy
        let payload = OpusPayloadFormat.packetize(try encoder.encode(pcm), timestamp: pcm.timestamp)
        link.send(try sender.send(payload, now: at(now)).serialized(), now: now)
        if tick % 7 == 3 {
          // Garbage on the same port now and then: dropped with a count, playout unaffected.
          link.send([0x80, 111, 0, 1, 0, 0], now: now)
        }
      }
      for (arrival, bytes) in link.deliver(upTo: now) {
        if bytes.count == 6 { garbageDelivered += 1 }
        guard case .success(let output) = stream.receive(bytes, now: at(arrival)) else { continue }
        for packet in output.packets { receiver.insert(packet) }
      }
      // Stop with the last source frame so the statistics hold no concealment of the silence after.
      if played.count < frames { played += receiver.pull(now: at(now)) }
    }
    return Run(
      statistics: receiver.statistics, played: played, sourceEnergy: sourceEnergy / Double(frames),
      framesSent: frames, malformed: stream.counters.malformedPackets,
      garbageDelivered: garbageDelivered)
  }

  func testOpusWithFECOverALossyLinkKeepsTheSignal() throws {
    let result = try run(fec: true, seconds: 5, seed: 0xA0D10)
    let stats = result.statistics
    print("audio e2e: \(stats)")
    // One frame per 20 ms from the first packet's playout on, however many packets were lost.
    XCTAssertEqual(
      stats.decodedFrames + stats.fecRecoveredFrames + stats.concealedFrames, result.played.count)
    XCTAssertGreaterThanOrEqual(result.played.count, result.framesSent)
    XCTAssertEqual(result.malformed, result.garbageDelivered)
    XCTAssertGreaterThan(result.garbageDelivered, 20)
    // ~10 % of 300 packets lost: almost all rebuilt from FEC (the next packet is there within the
    // 100 ms playout delay), PLC only when two in a row are lost.
    XCTAssertGreaterThanOrEqual(stats.fecRecoveredFrames, 15)
    XCTAssertLessThanOrEqual(stats.concealedFrames, stats.fecRecoveredFrames / 3)
    XCTAssertEqual(stats.latePackets, 0)
    XCTAssertEqual(stats.decodeErrors, 0)
    // The decoded energy over the stream matches the source within 25 %, and the tone is there.
    let steady = result.played.dropFirst(5).prefix(result.framesSent - 10)
    let energy = steady.map(\.energy).reduce(0, +) / Double(steady.count)
    print("audio e2e: decoded / source energy \(energy / result.sourceEnergy)")
    XCTAssertEqual(energy / result.sourceEnergy, 1, accuracy: 0.25)
    let samples = steady.flatMap(\.samples)
    XCTAssertEqual(CodecAudioAnalysis.dominantFrequency(in: samples), 450, accuracy: 50)
  }

  func testWithoutFECLossIsConcealed() throws {
    let result = try run(fec: false, seconds: 3, seed: 0xA0D10)
    XCTAssertEqual(result.statistics.fecRecoveredFrames, 0)
    XCTAssertGreaterThanOrEqual(result.statistics.concealedFrames, 10)
  }

  func testLatePacketsAreDroppedAndCounted() throws {
    let receiver = try AudioReceiver(playoutDelay: .milliseconds(40))
    let encoder = try OpusEncoder()
    let microphone = VirtualMicrophone()
    func packet(_ index: Int) throws -> RTPPacket {
      RTPPacket(
        header: RTPHeader(
          payloadType: 111, sequenceNumber: UInt16(index), timestamp: UInt32(index * 960), ssrc: 5),
        payload: try encoder.encode(microphone.frame(index)))
    }
    receiver.insert(try packet(0), now: at(0))
    XCTAssertEqual(receiver.nextDeadline, at(0.04))
    XCTAssertEqual(receiver.pull(now: at(0.039)).count, 0)
    XCTAssertEqual(receiver.pull(now: at(0.08)).count, 3, "frames 0, 1, 2 at 40, 60, 80 ms")
    receiver.insert(try packet(1), now: at(0.09))
    XCTAssertEqual(receiver.statistics.latePackets, 1)
    XCTAssertEqual(receiver.statistics.decodedFrames, 1)
    XCTAssertEqual(receiver.statistics.concealedFrames, 2)
    // A packet far ahead (the sender restarted its numbering) restarts playout from it.
    receiver.insert(try packet(1000), now: at(0.1))
    XCTAssertEqual(receiver.statistics.restarts, 1)
    let restartAt = try XCTUnwrap(receiver.nextDeadline)
    XCTAssertEqual((restartAt - at(0.14)).streamSeconds, 0, accuracy: 1e-9)
    XCTAssertEqual(receiver.pull(now: restartAt).count, 1)
    XCTAssertEqual(receiver.statistics.decodedFrames, 2)
  }

  func testAVSyncOffsetFromSenderReports() {
    var sync = AVSync(now: at(0))
    XCTAssertNil(sync.offset)
    // Both SRs name NTP 1000 s; audio RTP 48 000 ↔ that instant, video RTP 90 000.
    sync.updateAudio(
      senderReport: NTPTimestamp(seconds: 1000), rtpTimestamp: 48_000, clockRate: 48_000)
    sync.updateVideo(
      senderReport: NTPTimestamp(seconds: 1000), rtpTimestamp: 90_000, clockRate: 90_000)
    // Audio captured at 1000.1 s plays at local 5.3 s; video captured at 1000.1 s shows at 5.45 s.
    sync.audioPlayed(rtpTimestamp: 48_000 + 4800, at: at(5.3))
    sync.videoRendered(rtpTimestamp: 90_000 + 9000, at: at(5.45))
    XCTAssertEqual(try XCTUnwrap(sync.offset), 0.15, accuracy: 1e-6)
    let delays = try? XCTUnwrap(sync.targetExtraDelay)
    XCTAssertEqual(delays?.audio.streamSeconds ?? 0, 0.15, accuracy: 1e-6)
    XCTAssertEqual(delays?.video, .zero)
    // Video captured 0.2 s later than that audio shows 0.05 s after it: video 0.15 s early.
    sync.videoRendered(rtpTimestamp: 90_000 + 27_000, at: at(5.35))
    XCTAssertEqual(try XCTUnwrap(sync.offset), -0.15, accuracy: 1e-6)
    XCTAssertEqual(sync.targetExtraDelay?.video.streamSeconds ?? 0, 0.15, accuracy: 1e-6)
    // Timestamps that wrapped past 2^32 since the SR still map forward.
    sync.updateAudio(
      senderReport: NTPTimestamp(seconds: 2000), rtpTimestamp: 0xFFFF_FF00, clockRate: 48_000)
    sync.audioPlayed(rtpTimestamp: 0x0000_0100 &+ 48_000, at: at(10))
    sync.updateVideo(
      senderReport: NTPTimestamp(seconds: 2000), rtpTimestamp: 5, clockRate: 90_000)
    sync.videoRendered(rtpTimestamp: 5 + 90_000, at: at(10))
    // Audio capture = 2000 + (512 + 48 000) / 48 000 s, video 2001 s, both played at 10 s.
    XCTAssertEqual(try XCTUnwrap(sync.offset), 512.0 / 48_000, accuracy: 1e-6)
  }
}
