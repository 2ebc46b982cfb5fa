import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// The transport-feedback generator keeps arrivals in a table indexed by sequence number instead
/// of a dictionary: driven with the same seeded input (loss, reordering, duplicates, very late
/// packets, 16-bit wraps, jumps that collide in the table, restarts), it must build exactly the
/// feedback the dictionary version built.
final class TransportFeedbackGeneratorEquivalenceTests: XCTestCase {
  private func drive(seed: UInt64, steps: Int, jumpRate: Double, file: StaticString = #filePath) {
    var generator = SplitMix64(seed: seed)
    var subject = TransportFeedbackGenerator()
    var reference = ReferenceTransportFeedbackGenerator()
    var next = UInt16.max - 300
    var now: Int64 = 1_000_000
    var recent: [UInt16] = []
    var descriptions = 0
    var statuses = 0
    for step in 0..<steps {
      now += Int64.random(in: 0...4_000, using: &generator)
      let roll = Double.random(in: 0..<1, using: &generator)
      var sequence: UInt16?
      if roll < 0.75 || recent.isEmpty {
        if Double.random(in: 0..<1, using: &generator) < 0.05 {
          next &+= UInt16.random(in: 1...20, using: &generator)  // a loss
        }
        if Double.random(in: 0..<1, using: &generator) < jumpRate {
          // A jump: within the gap limit (collides in the table) or beyond it (a restart).
          next &+= UInt16.random(in: 900...9_000, using: &generator)
        }
        sequence = next
        next &+= 1
      } else if roll < 0.9 {
        // Reordered or duplicated.
        sequence =
          recent[recent.count - Int.random(in: 1...min(recent.count, 30), using: &generator)]
      } else if roll < 0.93 {
        sequence = recent[recent.count - Int.random(in: 1...recent.count, using: &generator)]
      }
      if let sequence {
        recent.append(sequence)
        // Arrival times may go back a little (kernel timestamps of reordered reads).
        let arrival = now - Int64.random(in: 0...2_000, using: &generator)
        subject.onPacketReceived(transportSequenceNumber: sequence, arrivalTime: arrival)
        reference.onPacketReceived(transportSequenceNumber: sequence, arrivalTime: arrival)
      }
      XCTAssertEqual(subject.nextDeadline, reference.nextDeadline, "step \(step)", file: file)
      let roll2 = Double.random(in: 0..<1, using: &generator)
      if roll2 < 0.1 {
        let built = subject.poll(now: now)
        XCTAssertEqual(built, reference.poll(now: now), "poll at step \(step)", file: file)
        descriptions += built.count
        statuses += built.reduce(0) { $0 + $1.packetStatuses.count }
      } else if roll2 < 0.11 {
        let built = subject.flush()
        XCTAssertEqual(built, reference.flush(), "flush at step \(step)", file: file)
        descriptions += built.count
      }
    }
    XCTAssertGreaterThan(descriptions, 50, file: file)
    XCTAssertGreaterThan(statuses, steps / 2, file: file)
  }

  func testMatchesTheDictionaryGeneratorOnRandomInput() {
    for seed: UInt64 in [1, 2, 3] {
      drive(seed: seed, steps: 8000, jumpRate: 0)
    }
  }

  func testMatchesTheDictionaryGeneratorWithJumpsThatCollideAndRestarts() {
    for seed: UInt64 in [4, 5] {
      drive(seed: seed, steps: 8000, jumpRate: 0.01)
    }
  }
}

/// The dictionary-based generator as it was before the table, kept as the model.
struct ReferenceTransportFeedbackGenerator {
  let interval: Int64
  let maxStatusesPerFeedback: Int
  let historyDuration: Int64

  private var unwrapper = RTPExtendedSequenceNumber()
  private var arrivals: [Int64: Int64] = [:]
  private var lowestKept: Int64?
  private var windowStart: Int64?
  private var highestReceived: Int64?
  private var latestArrival: Int64?
  private var feedbackCount: UInt8 = 0
  private var nextSendTime: Int64?

  init(
    interval: Int64 = 100_000, maxStatusesPerFeedback: Int = 1000, historyDuration: Int64 = 500_000
  ) {
    self.interval = max(1_000, interval)
    self.maxStatusesPerFeedback = max(1, maxStatusesPerFeedback)
    self.historyDuration = historyDuration
  }

  var nextDeadline: Int64? {
    guard hasPending else { return nil }
    return nextSendTime
  }

  private var hasPending: Bool {
    guard let windowStart, let highestReceived else { return false }
    return highestReceived >= windowStart
  }

  mutating func onPacketReceived(transportSequenceNumber: UInt16, arrivalTime: Int64) {
    let sequence = unwrapper.extend(transportSequenceNumber)
    // A jump this far is a restarted sender (or garbage): start over rather than report
    // thousands of losses.
    if let highestReceived, sequence - highestReceived > Self.maximumGap {
      restart()
    }
    if let lowestKept, sequence < lowestKept { return }  // older than anything we can report
    if arrivals[sequence] != nil { return }
    arrivals[sequence] = arrivalTime
    if lowestKept == nil { lowestKept = sequence }
    latestArrival = max(latestArrival ?? arrivalTime, arrivalTime)
    if highestReceived.map({ sequence > $0 }) ?? true { highestReceived = sequence }
    if let start = windowStart {
      if sequence < start { windowStart = sequence }
    } else {
      windowStart = sequence
    }
    if nextSendTime == nil { nextSendTime = arrivalTime + interval }
  }

  mutating func poll(now: Int64) -> [TransportFeedbackDescription] {
    guard let due = nextSendTime, now >= due, hasPending else { return [] }
    nextSendTime = now + interval
    return flush()
  }

  mutating func flush() -> [TransportFeedbackDescription] {
    var result: [TransportFeedbackDescription] = []
    while let start = windowStart, let end = highestReceived, start <= end {
      guard let description = buildDescription(from: start, through: end) else { break }
      result.append(description.0)
      windowStart = description.1
    }
    prune()
    return result
  }

  private mutating func buildDescription(from start: Int64, through end: Int64)
    -> (TransportFeedbackDescription, Int64)?
  {
    // The reference time comes from the first received packet in the range.
    var firstArrival: Int64?
    var probe = start
    while probe <= end {
      if let arrival = arrivals[probe] {
        firstArrival = arrival
        break
      }
      probe += 1
    }
    guard let firstArrival else { return nil }
    // A run of losses longer than one description is skipped rather than reported.
    let start = max(start, probe - Int64(maxStatusesPerFeedback) + 1)
    let unit = TransportFeedbackDescription.referenceTimeUnitMicroseconds
    let tick = TransportFeedbackDescription.deltaTickMicroseconds
    let referenceUnits = floorDivide(firstArrival, unit)
    var reportedTime = referenceUnits * unit
    var statuses: [TransportFeedbackDescription.PacketStatus] = []
    var sequence = start
    while sequence <= end, statuses.count < maxStatusesPerFeedback {
      if let arrival = arrivals[sequence] {
        // Round to the nearest tick and carry the rounding so errors do not accumulate.
        let ticks = floorDivide(arrival - reportedTime + tick / 2, tick)
        guard let delta = Int16(exactly: ticks) else { break }  // next description restarts here
        reportedTime += ticks * tick
        statuses.append(.received(deltaTicks: delta))
      } else {
        statuses.append(.notReceived)
      }
      sequence += 1
    }
    // Trailing losses are never reported: the range ends at a received packet.
    while case .notReceived? = statuses.last {
      statuses.removeLast()
      sequence -= 1
    }
    guard !statuses.isEmpty else { return nil }
    let description = TransportFeedbackDescription(
      baseSequenceNumber: UInt16(truncatingIfNeeded: start),
      referenceTime: UInt32(truncatingIfNeeded: referenceUnits),
      feedbackPacketCount: feedbackCount, packetStatuses: statuses)
    feedbackCount &+= 1
    return (description, sequence)
  }

  static let maximumGap: Int64 = 8192

  private mutating func restart() {
    arrivals.removeAll()
    lowestKept = nil
    windowStart = nil
    highestReceived = nil
    latestArrival = nil
  }

  private mutating func prune() {
    guard var lowest = lowestKept, let start = windowStart, let latestArrival else { return }
    let cutoff = latestArrival - historyDuration
    while lowest < start {
      if let arrival = arrivals[lowest], arrival >= cutoff { break }
      arrivals[lowest] = nil
      lowest += 1
    }
    lowestKept = lowest
  }
}
