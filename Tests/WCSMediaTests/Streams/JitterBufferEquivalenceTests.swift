import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// The jitter buffer keeps its packets in a sorted array instead of dictionaries keyed by
/// sequence number: driven with the same seeded input (loss, reordering, duplicates, very late
/// packets, 16-bit sequence and 32-bit timestamp wraps, overflow of `maxPackets`, eviction of
/// the released set), it must do exactly what the dictionary version did.
final class JitterBufferEquivalenceTests: XCTestCase {
  private func packet(_ sequenceNumber: UInt16, timestamp: UInt32, arrival: Double)
    -> ReceivedRTPPacket
  {
    ReceivedRTPPacket(
      packet: RTPPacket(
        header: RTPHeader(
          payloadType: 96, sequenceNumber: sequenceNumber, timestamp: timestamp, ssrc: 7),
        payload: [UInt8(truncatingIfNeeded: sequenceNumber)]),
      arrival: virtualTime(arrival))
  }

  /// `releaseEveryInsert`: as the receive stream drives an audio buffer, every buffered packet
  /// followed by `release(now: .infinity)`, through the internal insert that hands it out at once.
  private func drive(
    seed: UInt64, maxPackets: Int, steps: Int, releaseEveryInsert: Bool = false,
    file: StaticString = #filePath
  ) {
    var generator = SplitMix64(seed: seed)
    let configuration = JitterBuffer.Configuration(maxPackets: maxPackets)
    var buffer = JitterBuffer(clockRate: 90_000, configuration: configuration)
    var reference = ReferenceJitterBuffer(clockRate: 90_000, configuration: configuration)
    // Start close to both wraps.
    var next = UInt16.max - 200
    var timestamp = UInt32.max - 90_000
    var highest: Int64?
    var now = 0.0
    var sent: [(UInt16, UInt32)] = []
    var results: [JitterBuffer.InsertResult: Int] = [:]
    var releasedTotal = 0
    func extend(_ sequenceNumber: UInt16) -> Int64 {
      guard let current = highest else {
        highest = Int64(sequenceNumber) + 0x1_0000
        return Int64(sequenceNumber) + 0x1_0000
      }
      let value =
        current
        + Int64(
          RTPSequenceNumber.distance(from: UInt16(truncatingIfNeeded: current), to: sequenceNumber))
      highest = max(current, value)
      return value
    }
    for step in 0..<steps {
      now += Double.random(in: 0...0.02, using: &generator)
      let roll = Double.random(in: 0..<1, using: &generator)
      var offer: (UInt16, UInt32)?
      if roll < 0.70 || sent.isEmpty {
        // Next packet; sometimes after a loss, sometimes several per frame.
        if Double.random(in: 0..<1, using: &generator) < 0.05 {
          next &+= UInt16.random(in: 1...30, using: &generator)
        }
        if Double.random(in: 0..<1, using: &generator) < 0.4 { timestamp &+= 3000 }
        offer = (next, timestamp)
        next &+= 1
      } else if roll < 0.85 {
        // Reordered or duplicated: one of the recent ones.
        let back = Int.random(in: 1...min(sent.count, 40), using: &generator)
        offer = sent[sent.count - back]
      } else if roll < 0.93 {
        // Very late: far behind, beyond the released set's memory.
        let back = Int.random(in: 1...sent.count, using: &generator)
        offer = sent[sent.count - back]
      } else if roll < 0.95 {
        // A bogus timestamp.
        offer = (next, UInt32.random(in: 0...UInt32.max, using: &generator))
        next &+= 1
      }
      if let (sequenceNumber, packetTimestamp) = offer {
        if sent.last.map({ $0 != (sequenceNumber, packetTimestamp) }) ?? true {
          sent.append((sequenceNumber, packetTimestamp))
        }
        let jitter = Double.random(in: 0...0.05, using: &generator)
        let extra = Double.random(in: 0...0.3, using: &generator)
        buffer.updateTargetDelay(jitterSeconds: jitter, extraDelay: extra)
        reference.updateTargetDelay(jitterSeconds: jitter, extraDelay: extra)
        let sequence = extend(sequenceNumber)
        let received = packet(sequenceNumber, timestamp: packetTimestamp, arrival: now)
        if releaseEveryInsert {
          var out: [ReceivedRTPPacket] = []
          let result = buffer.insert(
            received.packet, arrival: received.arrival, sequence: sequence,
            releasingAtOnce: true, into: &out)
          if result == .buffered { buffer.release(now: .distantFuture, into: &out) }
          let expected = reference.insert(received, sequence: sequence)
          XCTAssertEqual(result, expected, "insert at step \(step)", file: file)
          switch expected {
          case .duplicate: XCTAssertEqual(out, [], file: file)
          case .late: XCTAssertEqual(out, [received], file: file)
          case .buffered:
            XCTAssertEqual(out, reference.release(now: .distantFuture), file: file)
          }
          results[result, default: 0] += 1
          releasedTotal += out.count
        } else {
          let result = buffer.insert(received, sequence: sequence)
          XCTAssertEqual(
            result, reference.insert(received, sequence: sequence),
            "insert at step \(step)", file: file)
          results[result, default: 0] += 1
        }
      }
      if Double.random(in: 0..<1, using: &generator) < 0.3 {
        let at =
          Double.random(in: 0..<1, using: &generator) < 0.05 ? .distantFuture : virtualTime(now)
        let out = buffer.release(now: at)
        XCTAssertEqual(out, reference.release(now: at), "release at step \(step)", file: file)
        releasedTotal += out.count
      }
      XCTAssertEqual(buffer.nextDeadline, reference.nextDeadline, "step \(step)", file: file)
      XCTAssertEqual(buffer.count, reference.count, file: file)
      XCTAssertEqual(buffer.delay, reference.delay, file: file)
      XCTAssertEqual(buffer.duplicates, reference.duplicates, file: file)
      XCTAssertEqual(buffer.latePackets, reference.latePackets, file: file)
    }
    // The input really went through every path.
    XCTAssertGreaterThan(results[.buffered] ?? 0, steps / 2, file: file)
    XCTAssertGreaterThan(results[.duplicate] ?? 0, 100, file: file)
    XCTAssertGreaterThan(results[.late] ?? 0, 50, file: file)
    XCTAssertGreaterThan(releasedTotal, 5000, "beyond the released set's 4096", file: file)
    XCTAssertGreaterThan(highest ?? 0, 0x2_0000, "the 16-bit sequence number wrapped", file: file)
  }

  func testMatchesTheDictionaryBufferOnRandomInput() {
    for seed: UInt64 in [1, 2, 3] {
      drive(seed: seed, maxPackets: 2000, steps: 9000)
    }
  }

  func testMatchesTheDictionaryBufferWhenEveryPacketIsReleasedAtOnce() {
    for seed: UInt64 in [7, 8] {
      drive(seed: seed, maxPackets: 2000, steps: 9000, releaseEveryInsert: true)
    }
  }

  func testMatchesTheDictionaryBufferWhenItOverflows() {
    // 16 packets at most: the oldest go out early.
    drive(seed: 42, maxPackets: 16, steps: 9000)
  }
}

/// The dictionary-based jitter buffer as it was before the sorted array, kept as the model.
struct ReferenceJitterBuffer {
  let configuration: JitterBuffer.Configuration
  let clockRate: Int
  private(set) var delay: Double
  private(set) var duplicates = 0
  private(set) var latePackets = 0

  static let transitDrift = MediaDuration.microseconds(100)

  private var packets: [Int64: (packet: ReceivedRTPPacket, playoutTimestamp: Int64)] = [:]
  private var arrivals: [Int64: MediaInstant] = [:]
  private var lastReleased: Int64?
  private var released: Set<Int64> = []
  private var releasedOrder: [Int64] = []
  private var minimumTransit: MediaDuration?
  private var outliers = 0
  static let outlierRun = 10
  private var lastTimestamp: Int64?

  init(clockRate: Int, configuration: JitterBuffer.Configuration = JitterBuffer.Configuration()) {
    self.clockRate = max(1, clockRate)
    self.configuration = configuration
    delay = MediaDuration(configuration.minDelay).seconds
  }

  var count: Int { packets.count }

  mutating func updateTargetDelay(jitterSeconds: Double, extraDelay: Double) {
    let target = min(
      max(
        configuration.jitterFactor * jitterSeconds + extraDelay,
        MediaDuration(configuration.minDelay).seconds),
      MediaDuration(configuration.maxDelay).seconds)
    delay += (target - delay) * 0.1
  }

  mutating func insert(_ packet: ReceivedRTPPacket, sequence: Int64) -> JitterBuffer.InsertResult {
    let arrival = packet.arrival
    if packets[sequence] != nil || released.contains(sequence) {
      duplicates += 1
      return .duplicate
    }
    let timestamp = unwrap(packet.packet.header.timestamp)
    if let lastReleased, sequence < lastReleased {
      latePackets += 1
      markReleased(sequence)
      return .late
    }
    let transit =
      MediaDuration(nanoseconds: arrival.nanoseconds)
      - MediaTime(ticks: timestamp, clockRate: clockRate).duration
    updateMinimumTransit(transit)
    packets[sequence] = (packet, timestamp)
    arrivals[sequence] = arrival
    return .buffered
  }

  private mutating func updateMinimumTransit(_ transit: MediaDuration) {
    guard let current = minimumTransit else {
      minimumTransit = transit
      return
    }
    if transit < current - MediaDuration(configuration.maxDelay) {
      outliers += 1
      if outliers >= Self.outlierRun {
        minimumTransit = transit
        outliers = 0
      }
      return
    }
    outliers = 0
    minimumTransit = min(current + Self.transitDrift, transit)
  }

  private func playoutTime(_ sequence: Int64, timestamp: Int64) -> MediaInstant {
    let scheduled =
      MediaInstant(nanoseconds: 0) + MediaTime(ticks: timestamp, clockRate: clockRate).duration
      + (minimumTransit ?? .zero) + .seconds(delay)
    guard let arrival = arrivals[sequence] else { return scheduled }
    return min(scheduled, arrival + MediaDuration(configuration.maxDelay))
  }

  mutating func release(now: MediaInstant) -> [ReceivedRTPPacket] {
    var out: [ReceivedRTPPacket] = []
    let overflow = packets.count - configuration.maxPackets
    for (index, sequence) in packets.keys.sorted().enumerated() {
      guard let entry = packets[sequence] else { continue }
      guard index < overflow || playoutTime(sequence, timestamp: entry.playoutTimestamp) <= now
      else { break }
      packets[sequence] = nil
      arrivals[sequence] = nil
      markReleased(sequence)
      lastReleased = max(lastReleased ?? sequence, sequence)
      out.append(entry.packet)
    }
    return out
  }

  var nextDeadline: MediaInstant? {
    guard let first = packets.keys.min(), let entry = packets[first] else { return nil }
    return playoutTime(first, timestamp: entry.playoutTimestamp)
  }

  private mutating func markReleased(_ sequence: Int64) {
    released.insert(sequence)
    releasedOrder.append(sequence)
    if releasedOrder.count > 4096 {
      for old in releasedOrder.prefix(1024) { released.remove(old) }
      releasedOrder.removeFirst(1024)
    }
  }

  private mutating func unwrap(_ timestamp: UInt32) -> Int64 {
    guard let lastTimestamp else {
      lastTimestamp = Int64(timestamp)
      return Int64(timestamp)
    }
    let delta = Int64(Int32(bitPattern: timestamp &- UInt32(truncatingIfNeeded: lastTimestamp)))
    let value = lastTimestamp + delta
    if value > lastTimestamp { self.lastTimestamp = value }
    return value
  }
}
