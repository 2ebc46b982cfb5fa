import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// The released-sequence table is indexed by `sequence & 8191`: sequence numbers 8192 apart
/// share a slot and go to the overflow set. Extended sequence numbers chosen to collide (jumps
/// of 8192, 30,000 and 65,536, late packets from several table cycles back, duplicate floods,
/// numbers near and below zero) must give exactly what the dictionary buffer gives.
final class JitterBufferCollisionTests: XCTestCase {
  private func packet(sequence: Int64, arrival: Double) -> ReceivedRTPPacket {
    ReceivedRTPPacket(
      packet: RTPPacket(
        header: RTPHeader(
          payloadType: 96, sequenceNumber: UInt16(truncatingIfNeeded: sequence),
          timestamp: UInt32(truncatingIfNeeded: sequence &* 960), ssrc: 7),
        payload: [UInt8(truncatingIfNeeded: sequence), UInt8(truncatingIfNeeded: sequence >> 13)]),
      arrival: virtualTime(arrival))
  }

  private func drive(seed: UInt64, start: Int64, releaseEveryInsert: Bool) {
    var random = SplitMix64(seed: seed)
    let configuration = JitterBuffer.Configuration(maxPackets: 64)
    var buffer = JitterBuffer(clockRate: 48_000, configuration: configuration)
    var reference = ReferenceJitterBuffer(clockRate: 48_000, configuration: configuration)
    var next = start
    var sent: [Int64] = []
    var now = 0.0
    var counts: [JitterBuffer.InsertResult: Int] = [:]
    for step in 0..<12_000 {
      now += 0.002
      let sequence: Int64
      switch Int.random(in: 0..<20, using: &random) {
      case 0..<9:
        sequence = next
        next += 1
      case 9:
        // Jumps that land on an occupied slot of the table (or far beyond it).
        next += [8192, 16_384, 30_000, 65_536, 8191, 8193].randomElement(using: &random) ?? 0
        sequence = next
        next += 1
      case 10..<14:
        // A number whose slot an earlier one (released or not) holds.
        let earlier = sent.randomElement(using: &random) ?? next
        sequence = earlier + 8192 * Int64.random(in: -3...3, using: &random)
      case 14..<18:
        // Duplicate flood of the recent ones.
        sequence = sent.suffix(8).randomElement(using: &random) ?? next
      default:
        sequence = sent.randomElement(using: &random) ?? next
      }
      sent.append(sequence)
      let received = packet(sequence: sequence, arrival: now)
      let expected = reference.insert(received, sequence: sequence)
      if releaseEveryInsert {
        var out: [ReceivedRTPPacket] = []
        let result = buffer.insert(
          received.packet, arrival: received.arrival, sequence: sequence, releasingAtOnce: true,
          into: &out)
        if result == .buffered { buffer.release(now: .distantFuture, into: &out) }
        XCTAssertEqual(result, expected, "seed \(seed) step \(step) sequence \(sequence)")
        switch expected {
        case .duplicate: XCTAssertEqual(out, [])
        case .late: XCTAssertEqual(out, [received])
        case .buffered: XCTAssertEqual(out, reference.release(now: .distantFuture))
        }
        counts[result, default: 0] += 1
      } else {
        let result = buffer.insert(received, sequence: sequence)
        XCTAssertEqual(result, expected, "seed \(seed) step \(step) sequence \(sequence)")
        counts[result, default: 0] += 1
        if step % 3 == 0 {
          XCTAssertEqual(
            buffer.release(now: virtualTime(now)), reference.release(now: virtualTime(now)),
            "step \(step)")
        }
      }
      XCTAssertEqual(buffer.count, reference.count)
      XCTAssertEqual(buffer.nextDeadline, reference.nextDeadline)
      XCTAssertEqual(buffer.duplicates, reference.duplicates)
      XCTAssertEqual(buffer.latePackets, reference.latePackets)
    }
    XCTAssertGreaterThan(counts[.buffered] ?? 0, 3000, "seed \(seed)")
    XCTAssertGreaterThan(counts[.duplicate] ?? 0, 1000, "seed \(seed)")
    XCTAssertGreaterThan(counts[.late] ?? 0, 500, "seed \(seed)")
  }

  func testCollidingSequenceNumbersMatchTheDictionaryBuffer() {
    for seed: UInt64 in [11, 12, 13] {
      drive(seed: seed, start: 0x1_0000 - 300, releaseEveryInsert: false)
    }
  }

  func testCollidingSequenceNumbersMatchWhenReleasedAtOnce() {
    for seed: UInt64 in [21, 22] {
      drive(seed: seed, start: 0x1_0000 - 300, releaseEveryInsert: true)
    }
  }

  func testNumbersAroundZeroAndNegativeMatch() {
    drive(seed: 31, start: -40_000, releaseEveryInsert: false)
    drive(seed: 32, start: -20_000, releaseEveryInsert: true)
  }
}
