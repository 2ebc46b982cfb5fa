/// Holds received RTP packets until their playout time and releases them in sequence order.
///
/// The playout time of a packet with timestamp `ts` is `ts / clockRate + minimum transit + delay`,
/// but never later than its arrival + `maxDelay` (a bogus timestamp cannot hold the buffer up):
/// the minimum transit is the smallest `arrival − ts / clockRate` seen (the fastest packet), let
/// rise by `transitDrift` per packet so clock drift does not fix it forever, and deaf to a single
/// packet claiming a transit far below it (a bogus timestamp); the delay follows `jitterFactor × jitter + extraDelay` (the RFC 3550 §A.8 jitter measured by the
/// stream, the extra covering retransmissions), clamped to `minDelay...maxDelay`, moving a tenth of
/// the way towards that target per packet so playout does not jump.
///
/// A packet arriving after a later one has been released is "late": counted and handed out at once
/// (a frame assembler that is still waiting for it can use it). A sequence number already buffered
/// or released recently is a duplicate and dropped.
public struct JitterBuffer: Sendable {
  /// Tuning of the buffer.
  public struct Configuration: Sendable, Equatable {
    /// Lower bound of the playout delay.
    public var minDelay: Duration
    /// Upper bound of the playout delay.
    public var maxDelay: Duration
    /// Multiplier of the measured jitter.
    public var jitterFactor: Double
    /// Packets held at most; the oldest are released early beyond this.
    public var maxPackets: Int

    /// Creates a configuration (defaults: 10...1000 ms, 4 × jitter, 2000 packets).
    public init(
      minDelay: Duration = .milliseconds(10), maxDelay: Duration = .seconds(1),
      jitterFactor: Double = 4, maxPackets: Int = 2000
    ) {
      self.minDelay = minDelay
      self.maxDelay = maxDelay
      self.jitterFactor = jitterFactor
      self.maxPackets = max(16, maxPackets)
    }
  }

  /// What `insert` did with a packet.
  public enum InsertResult: Equatable, Sendable {
    /// Held until its playout time.
    case buffered
    /// Already buffered or released: dropped.
    case duplicate
    /// Older than a released packet: hand it on at once.
    case late
  }

  /// The configuration in use.
  public let configuration: Configuration
  /// RTP clock rate in Hz.
  public let clockRate: Int
  /// Current playout delay in seconds (added to the minimum transit).
  public private(set) var delay: Double
  /// The delay `delay` moves towards, in seconds: `jitterFactor × jitter + extraDelay` of the
  /// last update, clamped to `minDelay...maxDelay` (`minDelay` before the first update).
  public private(set) var targetDelay: Double
  /// Packets dropped as duplicates.
  public private(set) var duplicates = 0
  /// Packets that arrived after a later packet had been released.
  public private(set) var latePackets = 0

  /// Rise of the minimum-transit estimate per packet.
  static let transitDrift = MediaDuration.microseconds(100)

  /// A held packet with what its playout time needs.
  private struct Held: Sendable {
    var sequence: Int64
    var playoutTimestamp: Int64
    var arrival: MediaInstant
    /// nil once released (moved out).
    var packet: RTPPacket?
  }

  /// Held packets in ascending sequence order from `heldStart` (before it: released slots not
  /// yet removed): packets mostly arrive in order, so an insert is an append and a release
  /// moves a prefix out, with no hashing and no sort per call.
  private var held: [Held] = []
  private var heldStart = 0
  private var lastReleased: Int64?
  private var released = ReleasedSequences()
  /// The smallest arrival less media time seen (`updateMinimumTransit`).
  private var minimumTransit: MediaDuration?
  private var outliers = 0
  /// Consecutive outlying transits that move the minimum.
  static let outlierRun = 10
  private var lastTimestamp: Int64?
  /// `configuration`'s durations, converted once.
  private let minDelay: MediaDuration
  private let maxDelay: MediaDuration
  /// `delay`, as the playout arithmetic adds it.
  private var delayDuration: MediaDuration

  /// Creates an empty buffer for a source with RTP clock `clockRate` Hz.
  public init(clockRate: Int, configuration: Configuration = Configuration()) {
    self.clockRate = max(1, clockRate)
    self.configuration = configuration
    minDelay = MediaDuration(configuration.minDelay)
    maxDelay = MediaDuration(configuration.maxDelay)
    delay = minDelay.seconds
    targetDelay = minDelay.seconds
    delayDuration = minDelay
  }

  /// Packets held now.
  public var count: Int { held.count - heldStart }

  /// Moves the delay a tenth of the way to `jitterFactor × jitterSeconds + extraDelay`, clamped.
  public mutating func updateTargetDelay(jitterSeconds: Double, extraDelay: Double) {
    let target = min(
      max(configuration.jitterFactor * jitterSeconds + extraDelay, minDelay.seconds),
      maxDelay.seconds)
    targetDelay = target
    delay += (target - delay) * 0.1
    delayDuration = .seconds(delay)
  }

  /// Offers `packet` (extended sequence number `sequence`, arrived at `packet.arrival`).
  public mutating func insert(_ packet: ReceivedRTPPacket, sequence: Int64) -> InsertResult {
    var late: [ReceivedRTPPacket] = []
    return insert(
      packet.packet, arrival: packet.arrival, sequence: sequence, releasingAtOnce: false,
      into: &late)
  }

  /// `insert(_:sequence:)` taking the packet over: a late packet is appended to `out` (the
  /// receive stream hands it out at once) instead of being copied by the caller first.
  ///
  /// `releasingAtOnce` is for a caller that follows a `.buffered` result with
  /// `release(now: .distantFuture)`: when nothing else is held, the packet goes straight to
  /// `out` (as that release would put it there) without being stored.
  mutating func insert(
    _ packet: consuming RTPPacket, arrival: MediaInstant, sequence: Int64, releasingAtOnce: Bool,
    into out: inout [ReceivedRTPPacket]
  ) -> InsertResult {
    let position = insertionIndex(of: sequence)
    // Nothing above `lastReleased` was ever released, so the common in-order packet skips the
    // hashed lookup.
    if (position < held.count && held[position].sequence == sequence)
      || ((lastReleased.map { sequence <= $0 } ?? false) && released.contains(sequence))
    {
      duplicates += 1
      return .duplicate
    }
    let timestamp = unwrap(packet.header.timestamp)
    if let lastReleased, sequence < lastReleased {
      latePackets += 1
      markReleased(sequence)
      out.append(ReceivedRTPPacket(packet: packet, arrival: arrival))
      return .late
    }
    updateMinimumTransit(timestamp: timestamp, arrival: arrival)
    if releasingAtOnce, heldStart == held.count {
      markReleased(sequence)
      lastReleased = max(lastReleased ?? sequence, sequence)
      out.append(ReceivedRTPPacket(packet: packet, arrival: arrival))
      return .buffered
    }
    let entry = Held(
      sequence: sequence, playoutTimestamp: timestamp, arrival: arrival, packet: packet)
    if position == held.count {
      held.append(entry)
    } else {
      held.insert(entry, at: position)
    }
    return .buffered
  }

  /// The index in `held` of the first held packet whose sequence number is not below `sequence`.
  private func insertionIndex(of sequence: Int64) -> Int {
    // Field reads by index: `held.last` would copy the whole packet.
    guard heldStart < held.count, sequence <= held[held.count - 1].sequence else {
      return held.count
    }
    var low = heldStart
    var high = held.count - 1
    while low < high {
      let middle = (low + high) / 2
      if held[middle].sequence < sequence { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Records the transit of a packet with unwrapped RTP `timestamp` that arrived at `arrival`
  /// (inserted, appended or passed through alike).
  @inline(__always)
  private mutating func updateMinimumTransit(timestamp: Int64, arrival: MediaInstant) {
    updateMinimumTransit(
      MediaDuration(nanoseconds: arrival.nanoseconds) - mediaTime(timestamp).duration)
  }

  /// The unwrapped RTP `timestamp` as time on the source's clock.
  @inline(__always)
  private func mediaTime(_ timestamp: Int64) -> MediaTime {
    MediaTime(ticks: timestamp, clockRate: clockRate)
  }

  /// A transit (arrival less the RTP timestamp in seconds) more than `maxDelay` below the
  /// minimum is an outlier (a bogus timestamp) unless `outlierRun` packets in a row say so (the
  /// sender's timestamps jumped): then it is the new minimum.
  private mutating func updateMinimumTransit(_ transit: MediaDuration) {
    guard let current = minimumTransit else {
      minimumTransit = transit
      return
    }
    if transit < current - maxDelay {
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

  /// The playout time of the held packet at `index`.
  private func playoutTime(at index: Int) -> MediaInstant {
    let scheduled =
      MediaInstant(nanoseconds: 0) + mediaTime(held[index].playoutTimestamp).duration
      + (minimumTransit ?? .zero) + delayDuration
    return min(scheduled, held[index].arrival + maxDelay)
  }

  /// Releases, in sequence order, the packets whose playout time is at or before `now` (and the
  /// oldest ones beyond `maxPackets`). A gap does not hold back later packets that are due.
  public mutating func release(now: MediaInstant) -> [ReceivedRTPPacket] {
    var out: [ReceivedRTPPacket] = []
    release(now: now, into: &out)
    return out
  }

  /// `release(now:)` appending to `out` (no array of its own per call).
  mutating func release(now: MediaInstant, into out: inout [ReceivedRTPPacket]) {
    let overflow = count - configuration.maxPackets
    guard heldStart < held.count else { return }
    var index = heldStart
    while index < held.count {
      guard index - heldStart < overflow || playoutTime(at: index) <= now else { break }
      // Room for every held packet at the first one due: the packets of a frame go out
      // together, and growing the array one by one reallocated it two or three times a call.
      if index == heldStart { out.reserveCapacity(out.count + held.count - heldStart) }
      let sequence = held[index].sequence
      markReleased(sequence)
      lastReleased = max(lastReleased ?? sequence, sequence)
      if let packet = held[index].packet.take() {
        out.append(ReceivedRTPPacket(packet: packet, arrival: held[index].arrival))
      }
      index += 1
    }
    heldStart = index
    // Released slots are dropped when nothing is left, or in bulk once they are the majority.
    if heldStart == held.count {
      held.removeAll(keepingCapacity: true)
      heldStart = 0
    } else if heldStart >= 64, heldStart * 2 >= held.count {
      held.removeFirst(heldStart)
      heldStart = 0
    }
  }

  /// When the oldest held packet becomes due, or nil when empty.
  public var nextDeadline: MediaInstant? {
    guard heldStart < held.count else { return nil }
    return playoutTime(at: heldStart)
  }

  private mutating func markReleased(_ sequence: Int64) {
    released.insert(sequence)
  }

  /// Extends the 32-bit timestamp to 64 bits around the previous one (wrap-aware).
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

/// A media packet with the time it arrived (for the frame's arrival time and playout).
public struct ReceivedRTPPacket: Sendable, Equatable {
  /// The packet (RTX already unwrapped).
  public var packet: RTPPacket
  /// When it arrived, on the driver's clock.
  public var arrival: MediaInstant

  /// Pairs a packet with its arrival time.
  public init(packet: RTPPacket, arrival: MediaInstant) {
    self.packet = packet
    self.arrival = arrival
  }

  /// The RTP header of the packet.
  public var header: RTPHeader { packet.header }
}

/// The sequence numbers a jitter buffer released (or handed out late) most recently, for
/// duplicate detection: the last 3073...4096 of them in release order (beyond 4096, the oldest
/// 1024 are forgotten at once).
///
/// Membership is a table indexed by `sequence & mask` (no hashing, one cache line touched), exact
/// through an overflow set for the rare member whose slot another member holds (members more than
/// `mask + 1` apart, from very late packets).
private struct ReleasedSequences: Sendable {
  private static let mask: Int64 = 8191
  /// Marks a free slot; a member with this value lives in `overflow`.
  private static let free = Int64.min
  private var slots: [Int64] = []
  private var overflow: Set<Int64> = []
  /// Members in the order they came, oldest first (a repeat included, as a set's list would).
  private var order: [Int64] = []

  func contains(_ sequence: Int64) -> Bool {
    if sequence != Self.free, !slots.isEmpty, slots[Int(sequence & Self.mask)] == sequence {
      return true
    }
    return !overflow.isEmpty && overflow.contains(sequence)
  }

  mutating func insert(_ sequence: Int64) {
    if !contains(sequence) {
      if slots.isEmpty { slots = Array(repeating: Self.free, count: Int(Self.mask) + 1) }
      let slot = Int(sequence & Self.mask)
      if sequence != Self.free, slots[slot] == Self.free {
        slots[slot] = sequence
      } else {
        overflow.insert(sequence)
      }
    }
    order.append(sequence)
    if order.count > 4096 {
      for old in order.prefix(1024) { remove(old) }
      order.removeFirst(1024)
    }
  }

  private mutating func remove(_ sequence: Int64) {
    let slot = Int(sequence & Self.mask)
    if sequence != Self.free, slots[slot] == sequence {
      slots[slot] = Self.free
    } else {
      overflow.remove(sequence)
    }
  }
}
