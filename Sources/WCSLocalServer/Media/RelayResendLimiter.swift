import WCSProtocols

/// Bounds the retransmissions the relay sends one player (RFC 4585 §6.2.1 NACK answers): a token
/// bucket of `perSecond` resends with a burst of `burst`, and no second resend of the same
/// sequence number within a minimum interval (the first may still be on its way). A NACK
/// storm — every sequence number, repeated — costs at most the bucket, whatever it lists.
///
/// Memory is fixed: the last resend time of each sequence number sits in a ring of `capacity`
/// slots (the relay's packet cache size), so nothing grows with what a peer sends. One thread.
struct RelayResendLimiter {
  /// What to do with one NACKed sequence number.
  enum Verdict: Equatable {
    /// Resend it.
    case send
    /// Already resent less than the minimum interval ago.
    case tooSoon
    /// The player's resend budget is spent for now.
    case rateLimited
  }

  let perSecond: Int
  let burst: Int
  private var tokens: Double
  private var refilledAt: MediaInstant?
  private var lastResent: [(sequenceNumber: UInt16, at: MediaInstant)?]

  /// A limiter of `perSecond` resends a second (burst `burst`), remembering `capacity`
  /// sequence numbers (rounded up to a power of two).
  init(perSecond: Int, burst: Int, capacity: Int) {
    self.perSecond = max(1, perSecond)
    self.burst = max(1, burst)
    tokens = Double(self.burst)
    var size = 16
    while size < capacity { size <<= 1 }
    lastResent = Array(repeating: nil, count: size)
  }

  /// Decides on resending `sequenceNumber` at `now` and records the resend when it is
  /// allowed; a resend of the same number less than `minimumInterval` ago is `tooSoon`.
  mutating func admit(_ sequenceNumber: UInt16, now: MediaInstant, minimumInterval: MediaDuration)
    -> Verdict
  {
    let slot = Int(sequenceNumber) & (lastResent.count - 1)
    if let last = lastResent[slot], last.sequenceNumber == sequenceNumber,
      now - last.at < minimumInterval
    {
      return .tooSoon
    }
    if let refilledAt {
      let elapsed = max(0, (now - refilledAt).seconds)
      tokens = min(Double(burst), tokens + elapsed * Double(perSecond))
    }
    refilledAt = now
    guard tokens >= 1 else { return .rateLimited }
    tokens -= 1
    lastResent[slot] = (sequenceNumber, now)
    return .send
  }
}
