import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia
@testable import WCSProtocols

/// Opus over a lossy, jittery link: playout every 20 ms with FEC and PLC.
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
      now: virtualTime(0), wallClock: NTPTimestamp(seconds: 3_900_000_000))
    var stream = AudioReceiveStream(
      configuration: .init(ssrc: ssrc, localSSRC: 1, payloadType: 111, clockRate: 48_000),
      now: virtualTime(0))
    // Datagrams that do not parse, counted as the driver counts them (before the stream).
    var unparsed = 0
    let receiver = try AudioReceiver(playoutDelay: .milliseconds(100))
    var link = StreamTestLink<[UInt8]>(seed: seed, lossRate: 0.10, baseDelay: 0.020, jitter: 0.050)

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
        link.send(try sender.send(payload, now: virtualTime(now)).serialized(), now: now)
        if tick % 7 == 3 {
          // Garbage on the same port now and then: dropped with a count, playout unaffected.
          link.send([0x80, 111, 0, 1, 0, 0], now: now)
        }
      }
      for (arrival, bytes) in link.deliver(upTo: now) {
        if bytes.count == 6 { garbageDelivered += 1 }
        guard let packet = try? RTPPacket.parse(bytes) else {
          unparsed += 1
          continue
        }
        guard case .success(let output) = stream.receive(packet, now: virtualTime(arrival)) else {
          continue
        }
        for packet in output.packets { receiver.insert(packet) }
      }
      // Stop with the last source frame so the statistics hold no concealment of the silence after.
      if played.count < frames { played += receiver.pull(now: virtualTime(now)) }
    }
    return Run(
      statistics: receiver.statistics, played: played, sourceEnergy: sourceEnergy / Double(frames),
      framesSent: frames, malformed: unparsed + stream.source.counters.malformedPackets,
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
    receiver.insert(try packet(0), now: virtualTime(0))
    XCTAssertEqual(receiver.nextDeadline, virtualTime(0.04))
    XCTAssertEqual(receiver.pull(now: virtualTime(0.039)).count, 0)
    XCTAssertEqual(
      receiver.pull(now: virtualTime(0.08)).count, 3, "frames 0, 1, 2 at 40, 60, 80 ms")
    receiver.insert(try packet(1), now: virtualTime(0.09))
    XCTAssertEqual(receiver.statistics.latePackets, 1)
    XCTAssertEqual(receiver.statistics.decodedFrames, 1)
    XCTAssertEqual(receiver.statistics.concealedFrames, 2)
    // A packet far ahead (the sender restarted its numbering) restarts playout from it.
    receiver.insert(try packet(1000), now: virtualTime(0.1))
    XCTAssertEqual(receiver.statistics.restarts, 1)
    let restartAt = try XCTUnwrap(receiver.nextDeadline)
    XCTAssertEqual((restartAt - virtualTime(0.14)).seconds, 0, accuracy: 1e-9)
    XCTAssertEqual(receiver.pull(now: restartAt).count, 1)
    XCTAssertEqual(receiver.statistics.decodedFrames, 2)
  }

  /// A sender that restarts its numbering lower (or a new source taking over after a pause,
  /// with numbering of its own) is played, not dropped as late for good.
  func testNumberingRestartedLowerRestartsPlayout() throws {
    let encoder = try OpusEncoder()
    let microphone = VirtualMicrophone()
    func packet(_ sequence: Int, _ index: Int) throws -> RTPPacket {
      RTPPacket(
        header: RTPHeader(
          payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: sequence),
          timestamp: UInt32(index * 960), ssrc: 5),
        payload: try encoder.encode(microphone.frame(index)))
    }
    func assertDue(
      _ receiver: AudioReceiver, at seconds: Double, file: StaticString = #filePath,
      line: UInt = #line
    ) throws {
      let due = try XCTUnwrap(receiver.nextDeadline, file: file, line: line)
      XCTAssertEqual(
        (due - virtualTime(seconds)).seconds, 0, accuracy: 1e-9, file: file, line: line)
    }
    // While playing: a packet 1000 behind playout restarts it; one 3 behind is late.
    let playing = try AudioReceiver(playoutDelay: .milliseconds(40))
    for index in 0..<3 { playing.insert(try packet(5000 + index, index), now: virtualTime(0)) }
    XCTAssertEqual(playing.pull(now: virtualTime(0.08)).count, 3)
    playing.insert(try packet(5000, 0), now: virtualTime(0.085))
    XCTAssertEqual(playing.statistics.latePackets, 1)
    XCTAssertEqual(playing.statistics.restarts, 0)
    playing.insert(try packet(4000, 3), now: virtualTime(0.09))
    XCTAssertEqual(playing.statistics.restarts, 1)
    try assertDue(playing, at: 0.13)
    playing.insert(try packet(4001, 4), now: virtualTime(0.1))
    XCTAssertEqual(playing.pull(now: virtualTime(0.15)).count, 2)
    XCTAssertEqual(playing.statistics.decodedFrames, 5)
    XCTAssertEqual(playing.statistics.latePackets, 1)

    // After a pause that stopped playout: a new sender 10 behind the old numbering plays.
    let paused = try AudioReceiver(playoutDelay: .milliseconds(40))
    paused.insert(try packet(60_000, 0), now: virtualTime(0))
    let frames = paused.pull(now: virtualTime(2))
    XCTAssertEqual(frames.count, 1 + AudioReceiver.maxConcealedRun, "stops after the run")
    XCTAssertNil(paused.nextDeadline)
    paused.insert(try packet(59_990, 1), now: virtualTime(3))
    XCTAssertEqual(paused.statistics.latePackets, 0)
    try assertDue(paused, at: 3.04)
    paused.insert(try packet(59_991, 2), now: virtualTime(3.02))
    XCTAssertEqual(paused.pull(now: virtualTime(3.06)).count, 2)
    XCTAssertEqual(paused.statistics.decodedFrames, 3)
  }
}
