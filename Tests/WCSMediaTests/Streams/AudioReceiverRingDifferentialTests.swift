import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSMedia
@testable import WCSProtocols

/// `AudioReceiver`'s ring of held packets (since perfpoll) against the dictionary keyed by
/// sequence number it replaced, on seeded random Opus streams (real libopus packets with FEC)
/// with loss and loss bursts, duplicates, reordering, very late packets, wraps of the 16-bit
/// sequence number, jumps of it (restarted senders, forwards and backwards) and pauses that stop
/// playout: every pull gives the same frames, the same statistics and the same next deadline.
final class AudioReceiverRingDifferentialTests: XCTestCase {
  private struct Arrival {
    var at: Double
    var packet: RTPPacket
  }

  private static func payloads(count: Int) throws -> [[UInt8]] {
    let encoder = try OpusEncoder(
      configuration: .init(bitrate: 24_000, inbandFEC: true, expectedPacketLossPercent: 20))
    var payloads: [[UInt8]] = []
    for index in 0..<count {
      let samples = (0..<PCMAudioFrame.samplesPer20ms).map { sample -> Int16 in
        let t = Double(index * PCMAudioFrame.samplesPer20ms + sample) / 48_000
        return Int16(6000 * sin(2 * Double.pi * 330 * t) + 2000 * sin(2 * Double.pi * 1250 * t))
      }
      payloads.append(try encoder.encode(PCMAudioFrame(samples: samples, channels: 1)))
    }
    return payloads
  }

  private static func arrivals(
    _ payloads: [[UInt8]], random: inout SplitMix64
  ) -> [Arrival] {
    func chance(_ probability: Double) -> Bool {
      Double.random(in: 0..<1, using: &random) < probability
    }
    var sequence =
      chance(0.4)
      ? UInt16.max - UInt16.random(in: 0...40, using: &random)
      : UInt16.random(in: 0...UInt16.max, using: &random)
    var timestamp = UInt32.random(in: 0...UInt32.max, using: &random)
    let loss = Double.random(in: 0...0.2, using: &random)
    var sendTime = 0.0
    var burst = 0
    var out: [Arrival] = []
    for (index, payload) in payloads.enumerated() {
      sendTime += 0.020
      defer {
        sequence &+= 1
        timestamp &+= UInt32(PCMAudioFrame.samplesPer20ms)
      }
      if chance(0.005) {
        // A restarted sender: the numbering jumps ahead or back.
        sequence &+= UInt16.random(in: 60...65_000, using: &random)
      }
      if chance(0.004) { sendTime += Double.random(in: 0.5...2, using: &random) }  // a pause
      if burst > 0 {
        burst -= 1
        continue
      }
      if chance(0.01) {
        burst = Int.random(in: 1...12, using: &random)
        continue
      }
      if chance(loss) { continue }
      let header = RTPHeader(
        marker: index == 0, payloadType: 111, sequenceNumber: sequence, timestamp: timestamp,
        ssrc: 0x0A0D_1000)
      let packet = RTPPacket(header: header, payload: payload)
      var delay = 0.010 + Double.random(in: 0...0.060, using: &random)
      if chance(0.02) { delay += Double.random(in: 0.1...1.5, using: &random) }  // very late
      out.append(Arrival(at: sendTime + delay, packet: packet))
      if chance(0.03) {
        out.append(
          Arrival(at: sendTime + delay + Double.random(in: 0...0.1, using: &random), packet: packet)
        )
      }
    }
    return out.sorted { $0.at < $1.at }
  }

  func testRingMatchesTheDictionaryOnRandomStreams() throws {
    let payloads = try Self.payloads(count: 400)
    var random = SplitMix64(seed: 0xA0D1_0F1F)
    var totals = AudioReceiver.Statistics()
    var frames = 0
    for run in 0..<40 {
      let delay = MediaDuration.milliseconds(Int.random(in: 20...120, using: &random))
      let receiver = try AudioReceiver(playoutDelay: delay.duration)
      let reference = try ReferenceAudioReceiver(playoutDelay: delay)
      let arrivals = Self.arrivals(payloads, random: &random)
      var next = 0
      var now = 0.0
      while next < arrivals.count || now < (arrivals.last?.at ?? 0) + 2 {
        now += Double.random(in: 0.002...0.030, using: &random)
        while next < arrivals.count, arrivals[next].at <= now {
          let arrival = arrivals[next]
          receiver.insert(arrival.packet, now: virtualTime(arrival.at))
          reference.insert(arrival.packet, now: virtualTime(arrival.at))
          next += 1
        }
        let played = receiver.pull(now: virtualTime(now))
        let expected = reference.pull(now: virtualTime(now))
        XCTAssert(
          played == expected,
          "run \(run) at \(now): frames \(played.map(\.timestamp)), expected \(expected.map(\.timestamp))"
        )
        XCTAssertEqual(receiver.nextDeadline, reference.nextDeadline, "run \(run) at \(now)")
        var statistics = receiver.statistics
        statistics.decodeCPUTime = reference.statistics.decodeCPUTime
        XCTAssertEqual(statistics, reference.statistics, "run \(run) at \(now)")
        guard played == expected, statistics == reference.statistics else { return }
        frames += played.count
      }
      totals.decodedFrames += receiver.statistics.decodedFrames
      totals.fecRecoveredFrames += receiver.statistics.fecRecoveredFrames
      totals.concealedFrames += receiver.statistics.concealedFrames
      totals.latePackets += receiver.statistics.latePackets
      totals.restarts += receiver.statistics.restarts
    }
    print("audio ring differential: \(frames) frames, \(totals)")
    // Every path ran: decoding, FEC, concealment, late packets, restarts.
    XCTAssertGreaterThan(totals.decodedFrames, 5_000)
    XCTAssertGreaterThan(totals.fecRecoveredFrames, 50)
    XCTAssertGreaterThan(totals.concealedFrames, 200)
    XCTAssertGreaterThan(totals.latePackets, 50)
    XCTAssertGreaterThan(totals.restarts, 20)
  }
}

/// `AudioReceiver` as it was before perfpoll, with its packets in a dictionary, as the
/// reference.
private final class ReferenceAudioReceiver {
  typealias Statistics = AudioReceiver.Statistics

  /// Samples per channel of one frame: 20 ms at 48 kHz.
  static let frameSamples = PCMAudioFrame.samplesPer20ms
  /// Playout stops after this many frames in a row with no packet (the sender paused); the next
  /// packet starts playout afresh.
  static let maxConcealedRun = 50
  /// One frame: 20 ms (made once: `.milliseconds` multiplies 128-bit integers).
  static let frameDuration: MediaDuration = .milliseconds(20)

  /// Statistics so far.
  private(set) var statistics = Statistics()
  /// Delay between the first packet's arrival and its playout.
  let playoutDelay: MediaDuration

  private let decoder: OpusDecoder
  private var packets: [Int64: RTPPacket] = [:]
  private var highest: Int64?
  private var nextSequence: Int64?
  private var nextPlayoutAt: MediaInstant?
  private var concealedRun = 0

  /// Creates a receiver.
  ///
  /// - Parameters:
  ///   - channels: 1 or 2 (the Opus decoder output).
  ///   - playoutDelay: arrival-to-playout delay of the first packet; it must cover the network
  ///     jitter plus one packet so the next packet's FEC is there when a packet is missing
  ///     (default 100 ms).
  /// - Throws: `OpusError` when the decoder cannot be created.
  init(channels: Int = 1, playoutDelay: MediaDuration = .milliseconds(100)) throws(OpusError) {
    decoder = try OpusDecoder(channels: channels)
    self.playoutDelay = playoutDelay
  }

  /// Takes one packet released by the receive stream at `now`.
  func insert(_ packet: RTPPacket, now: MediaInstant) {
    let sequence = extend(packet.header.sequenceNumber)
    if let nextSequence, sequence < nextSequence {
      // Behind playout: late, unless playout stopped (a new sender after a pause, e.g. a
      // source taking over with numbering of its own) or it is further behind than any late
      // packet is (the sender restarted its numbering lower). Dropping those as late would
      // silence the stream for good.
      guard nextPlayoutAt == nil || nextSequence - sequence > Int64(Self.maxConcealedRun) else {
        statistics.latePackets += 1
        return
      }
      restart(at: sequence)
    } else if let nextSequence, sequence - nextSequence > Int64(Self.maxConcealedRun) {
      // Far ahead of playout: the sender restarted its numbering (or the packet is bogus). Start
      // over from it rather than hold it for seconds.
      restart(at: sequence)
    }
    if nextPlayoutAt == nil {
      nextPlayoutAt = now + playoutDelay
      nextSequence = sequence
    }
    packets[sequence] = packet
  }

  /// Drops what is held and plays from `sequence` on, `playoutDelay` after its arrival.
  private func restart(at sequence: Int64) {
    statistics.restarts += 1
    packets.removeAll()
    nextPlayoutAt = nil
    nextSequence = nil
    concealedRun = 0
    highest = sequence
  }

  /// Takes one packet from `RTPReceiveSource.Output.packets`, at its arrival time.
  func insert(_ received: ReceivedRTPPacket) {
    insert(received.packet, now: received.arrival)
  }

  /// Plays every frame due at or before `now`, in order.
  func pull(now: MediaInstant) -> [PCMAudioFrame] {
    var out: [PCMAudioFrame] = []
    while let due = nextPlayoutAt, due <= now, let sequence = nextSequence {
      var cpu = 0.0
      out.append(CodecCPUTime.measure(into: &cpu) { play(sequence) })
      statistics.decodeCPUTime += cpu
      // `insert` keeps nothing below `nextSequence`, so this is the only key to drop (a
      // `filter` rebuilt the dictionary every 20 ms).
      packets[sequence] = nil
      nextSequence = sequence + 1
      nextPlayoutAt = due + Self.frameDuration
      if concealedRun >= Self.maxConcealedRun && packets.isEmpty {
        // The sender went quiet: stop until a packet restarts playout.
        nextPlayoutAt = nil
        concealedRun = 0
      }
    }
    return out
  }

  /// When the next frame is due, or nil when playout is stopped.
  var nextDeadline: MediaInstant? { nextPlayoutAt }

  private func play(_ sequence: Int64) -> PCMAudioFrame {
    if let packet = packets[sequence] {
      do {
        let frame = try decoder.decode(packet.payload, timestamp: packet.header.timestamp)
        statistics.decodedFrames += 1
        concealedRun = 0
        return frame
      } catch {
        statistics.decodeErrors += 1
      }
    } else if let next = packets[sequence + 1], AudioReceiver.carriesFEC(next.payload) {
      do {
        let frame = try decoder.decodeFEC(
          from: next.payload, frameSize: Self.frameSamples,
          timestamp: next.header.timestamp &- UInt32(Self.frameSamples))
        statistics.fecRecoveredFrames += 1
        concealedRun = 0
        return frame
      } catch {
        statistics.decodeErrors += 1
      }
    }
    statistics.concealedFrames += 1
    concealedRun += 1
    if let frame = try? decoder.decode(nil, lostSamples: Self.frameSamples) { return frame }
    return PCMAudioFrame(
      samples: Array(repeating: 0, count: Self.frameSamples * decoder.channels),
      channels: decoder.channels)
  }

  private func extend(_ sequenceNumber: UInt16) -> Int64 {
    guard let highest else {
      highest = Int64(sequenceNumber) + 0x1_0000
      return Int64(sequenceNumber) + 0x1_0000
    }
    let value =
      highest
      + Int64(
        RTPSequenceNumber.distance(from: UInt16(truncatingIfNeeded: highest), to: sequenceNumber))
    if value > highest { self.highest = value }
    return value
  }
}
