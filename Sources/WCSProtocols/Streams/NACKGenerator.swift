/// Decides which missing sequence numbers to ask for in generic NACKs (RFC 4585 §6.2.1).
///
/// A gap in the sequence numbers makes its packets "missing". A missing packet is first requested
/// once it has been missing for `reorderTolerance` (it may only be reordered), then again each
/// `retryInterval(rtt)` (a retransmission lost too), at most `maxRetries` times; it is given up
/// once older than `maxAge` or after the last retry. A gap wider than `maxMissing` is not
/// requested at all: it is cheaper to ask for a key frame (`needsKeyFrame`); so is a gap that
/// would make more than `maxMissing` packets missing at once, which bounds the work and memory
/// a sender's jumping sequence numbers can cost.
public struct NACKGenerator: Sendable {
  /// Tuning of the generator.
  public struct Configuration: Sendable, Equatable {
    /// How long a gap may be mere reordering before the first request.
    public var reorderTolerance: Duration
    /// Requests per missing packet, the first included (default 10).
    public var maxRetries: Int
    /// A packet missing this long is given up (default 1 s).
    public var maxAge: Duration
    /// Lower bound of the re-request interval when the RTT is small or unknown.
    public var minRetryInterval: Duration
    /// A gap of more packets than this, or more packets missing at once, is abandoned in
    /// favour of a key frame request.
    public var maxMissing: Int

    /// Creates a configuration; the defaults suit 30 fps video with up to ~100 ms of jitter.
    public init(
      reorderTolerance: Duration = .milliseconds(20), maxRetries: Int = 10,
      maxAge: Duration = .seconds(1), minRetryInterval: Duration = .milliseconds(20),
      maxMissing: Int = 500
    ) {
      self.reorderTolerance = reorderTolerance
      self.maxRetries = max(1, maxRetries)
      self.maxAge = maxAge
      self.minRetryInterval = minRetryInterval
      self.maxMissing = max(1, maxMissing)
    }
  }

  struct Missing: Sendable {
    var detectedAt: MediaInstant
    var lastRequestedAt: MediaInstant?
    var requests: Int
  }

  /// The configuration in use.
  public let configuration: Configuration
  /// Missing packets given up without arriving.
  public private(set) var givenUp = 0
  /// Sequence numbers requested so far, retries included.
  public private(set) var requestsSent = 0
  /// Missing packets that arrived after all (reordered or retransmitted).
  public private(set) var recovered = 0
  /// Missing packets that arrived after at least one request for them (retransmitted, or
  /// later than the NACK): the part of `recovered` the NACKs can claim, never more than the
  /// packets requested.
  public private(set) var recoveredAfterRequest = 0
  /// Set when a gap was too wide to request; cleared by `takeKeyFrameRequest()`.
  public private(set) var needsKeyFrame = false

  private var missing: [Int64: Missing] = [:]
  private var highest: Int64?
  /// `configuration`'s durations, converted once.
  private let reorderTolerance: MediaDuration
  private let maxAge: MediaDuration
  private let minRetryInterval: MediaDuration

  /// Creates a generator that has seen no packet.
  public init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
    reorderTolerance = MediaDuration(configuration.reorderTolerance)
    maxAge = MediaDuration(configuration.maxAge)
    minRetryInterval = MediaDuration(configuration.minRetryInterval)
  }

  /// Whether `sequence` (extended) already arrived, as far as this generator knows: at or below
  /// the highest seen and not missing (nor given up).
  public func hasArrived(_ sequence: Int64) -> Bool {
    guard let highest, sequence <= highest else { return false }
    return missing[sequence] == nil
  }

  /// Sequence numbers (extended) currently missing, oldest first.
  public var missingSequenceNumbers: [Int64] { missing.keys.sorted() }

  /// Records the arrival of the packet with extended sequence number `sequence` at `now`.
  public mutating func packetArrived(_ sequence: Int64, now: MediaInstant) {
    guard let highest else {
      highest = sequence
      return
    }
    if sequence > highest {
      let gap = sequence - highest - 1
      if gap > Int64(configuration.maxMissing) - Int64(missing.count) {
        missing.removeAll()
        needsKeyFrame = true
      } else if gap > 0 {
        for lost in (highest + 1)..<sequence {
          missing[lost] = Missing(detectedAt: now, lastRequestedAt: nil, requests: 0)
        }
      }
      self.highest = sequence
    } else if let entry = missing.removeValue(forKey: sequence) {
      recovered += 1
      if entry.requests > 0 { recoveredAfterRequest += 1 }
    }
  }

  /// Clears and returns the key frame request raised by a gap too wide to repair.
  public mutating func takeKeyFrameRequest() -> Bool {
    defer { needsKeyFrame = false }
    return needsKeyFrame
  }

  /// The interval between requests for the same packet: the RTT (100 ms when unknown), at
  /// least `minRetryInterval`.
  public func retryInterval(roundTripTime: MediaDuration?) -> MediaDuration {
    max(minRetryInterval, roundTripTime ?? .milliseconds(100))
  }

  /// The missing sequence numbers due for a (re)request at `now`, oldest first; marks them
  /// requested and gives up those past `maxAge` or `maxRetries`. `roundTripTime` sets the retry
  /// interval (`retryInterval(roundTripTime:)`; nil: 100 ms).
  public mutating func due(now: MediaInstant, roundTripTime: MediaDuration?) -> [Int64] {
    guard !missing.isEmpty else { return [] }
    let tolerance = reorderTolerance
    let interval = retryInterval(roundTripTime: roundTripTime)
    var out: [Int64] = []
    for sequence in missing.keys.sorted() {
      guard var entry = missing[sequence] else { continue }
      if now - entry.detectedAt > maxAge
        || (entry.requests >= configuration.maxRetries
          && now - (entry.lastRequestedAt ?? entry.detectedAt) >= interval)
      {
        missing[sequence] = nil
        givenUp += 1
        continue
      }
      guard entry.requests < configuration.maxRetries else { continue }
      let ready =
        entry.lastRequestedAt.map { now - $0 >= interval } ?? (now - entry.detectedAt >= tolerance)
      guard ready else { continue }
      entry.lastRequestedAt = now
      entry.requests += 1
      missing[sequence] = entry
      requestsSent += 1
      out.append(sequence)
    }
    return out
  }

  /// The earliest time at which `due` has something to do, or nil when nothing is missing;
  /// `roundTripTime` as for `due`.
  public func nextDeadline(roundTripTime: MediaDuration?) -> MediaInstant? {
    guard !missing.isEmpty else { return nil }
    let tolerance = reorderTolerance
    let interval = retryInterval(roundTripTime: roundTripTime)
    var earliest: MediaInstant?
    for entry in missing.values {
      let next: MediaInstant
      if let last = entry.lastRequestedAt {
        next = min(last + interval, entry.detectedAt + maxAge)
      } else {
        next = entry.detectedAt + tolerance
      }
      earliest = min(earliest ?? next, next)
    }
    return earliest
  }
}
