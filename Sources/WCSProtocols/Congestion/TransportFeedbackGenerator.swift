/// Receive side of transport-wide congestion control: records when each transport sequence
/// number arrived and, every `interval`, describes the packets since the last feedback
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3; libwebrtc sends ~every 100 ms).
///
/// Sans-I/O: feed arrivals with `onPacketReceived`, call `poll(now:)` at or after
/// `nextDeadline`, and hand the returned descriptions to the RTCP writer.
/// A packet that arrives after its sequence number was already reported as lost moves the
/// window back so it is reported again (the sender ignores repeats).
public struct TransportFeedbackGenerator: Sendable {
  /// Time between feedbacks, microseconds.
  public let interval: Int64
  /// Most statuses in one description; longer ranges are split (keeps the RTCP packet small).
  public let maxStatusesPerFeedback: Int
  /// How long arrivals are kept for re-reporting, microseconds.
  public let historyDuration: Int64

  private var unwrapper = RTPExtendedSequenceNumber()
  private var arrivals = SequenceArrivals()
  private var lowestKept: Int64?
  private var windowStart: Int64?
  private var highestReceived: Int64?
  private var latestArrival: Int64?
  private var feedbackCount: UInt8 = 0
  private var nextSendTime: Int64?

  /// Creates a generator; `interval` and `historyDuration` in microseconds.
  public init(
    interval: Int64 = 100_000, maxStatusesPerFeedback: Int = 1000, historyDuration: Int64 = 500_000
  ) {
    self.interval = max(1_000, interval)
    self.maxStatusesPerFeedback = max(1, maxStatusesPerFeedback)
    self.historyDuration = historyDuration
  }

  /// When `poll(now:)` should next be called (microseconds), or `nil` if nothing is pending.
  public var nextDeadline: Int64? {
    guard hasPending else { return nil }
    return nextSendTime
  }

  private var hasPending: Bool {
    guard let windowStart, let highestReceived else { return false }
    return highestReceived >= windowStart
  }

  /// Records that the packet with transport sequence number `transportSequenceNumber` arrived at
  /// `arrivalTime` (microseconds, receiver clock). Duplicates keep their first arrival time.
  public mutating func onPacketReceived(transportSequenceNumber: UInt16, arrivalTime: Int64) {
    let sequence = unwrapper.extend(transportSequenceNumber)
    // A jump this far is a restarted sender (or garbage): start over rather than report
    // thousands of losses.
    if let highestReceived, sequence - highestReceived > Self.maximumGap {
      restart()
    }
    if let lowestKept, sequence < lowestKept { return }  // older than anything we can report
    // A duplicate keeps its first arrival and changes nothing.
    guard arrivals.insertIfAbsent(sequence, arrival: arrivalTime) else { return }
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

  /// The recorded state that the next feedbacks depend on, for tests comparing two generators:
  /// the kept history's bounds, the newest arrival, the next feedback time and count, and the
  /// arrivals recorded from the oldest kept number to the highest (nil for a missing one).
  var recordedState: [Int64?] {
    var state: [Int64?] = [
      lowestKept, windowStart, highestReceived, latestArrival, nextSendTime,
      Int64(feedbackCount), unwrapper.extended(0),
    ]
    if let lowest = lowestKept, let highest = highestReceived, lowest <= highest {
      for sequence in lowest...highest { state.append(arrivals[sequence]) }
    }
    return state
  }

  /// Builds the feedback descriptions due at `now` (microseconds): empty before `nextDeadline`
  /// or when nothing arrived since the last one.
  public mutating func poll(now: Int64) -> [TransportFeedbackDescription] {
    guard let due = nextSendTime, now >= due, hasPending else { return [] }
    nextSendTime = now + interval
    return flush()
  }

  /// Builds descriptions for everything not yet reported, regardless of the timer.
  public mutating func flush() -> [TransportFeedbackDescription] {
    var result: [TransportFeedbackDescription] = []
    while let start = windowStart, let end = highestReceived, start <= end {
      guard let description = buildDescription(from: start, through: end) else { break }
      result.append(description.0)
      windowStart = description.1
    }
    prune()
    return result
  }

  /// Returns the description and the first sequence number it did not cover.
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

  /// Largest sequence-number jump treated as loss rather than a restart.
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
      arrivals.remove(lowest)
      lowest += 1
    }
    lowestKept = lowest
  }
}

/// Division rounding toward negative infinity (Swift's `/` truncates toward zero).
func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
  let quotient = value / divisor
  return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
}

/// Arrival times (microseconds) by unwrapped transport sequence number, for the generator.
///
/// A table indexed by `sequence & mask` (no hashing; the kept range, about half a second of
/// packets, normally fits it without collisions), exact through an overflow dictionary for a
/// sequence number whose slot another one holds.
private struct SequenceArrivals: Sendable {
  private static let mask: Int64 = 1023
  /// Marks a free slot; a sequence number with this value lives in `overflow`.
  private static let free = Int64.min
  /// A sequence number and its arrival side by side: one array, so a recorded arrival costs
  /// one uniqueness check and touches one cache line.
  private struct Slot: Sendable {
    var sequence: Int64
    var arrival: Int64
  }
  private var slots: [Slot] = []
  private var overflow: [Int64: Int64] = [:]

  /// The arrival recorded for `sequence`, or nil.
  subscript(sequence: Int64) -> Int64? {
    if sequence != Self.free, !slots.isEmpty {
      let slot = slots[Int(sequence & Self.mask)]
      if slot.sequence == sequence { return slot.arrival }
    }
    return overflow.isEmpty ? nil : overflow[sequence]
  }

  /// Records `arrival` for `sequence` unless it has one; returns whether it did.
  mutating func insertIfAbsent(_ sequence: Int64, arrival: Int64) -> Bool {
    guard self[sequence] == nil else { return false }
    if slots.isEmpty {
      slots = Array(repeating: Slot(sequence: Self.free, arrival: 0), count: Int(Self.mask) + 1)
    }
    let index = Int(sequence & Self.mask)
    if sequence != Self.free, slots[index].sequence == Self.free {
      slots[index] = Slot(sequence: sequence, arrival: arrival)
    } else {
      overflow[sequence] = arrival
    }
    return true
  }

  /// Forgets `sequence`.
  mutating func remove(_ sequence: Int64) {
    if sequence != Self.free, !slots.isEmpty {
      let index = Int(sequence & Self.mask)
      if slots[index].sequence == sequence {
        slots[index].sequence = Self.free
        return
      }
    }
    if !overflow.isEmpty { overflow[sequence] = nil }
  }

  /// Forgets everything.
  mutating func removeAll() {
    slots = []
    overflow = [:]
  }
}
