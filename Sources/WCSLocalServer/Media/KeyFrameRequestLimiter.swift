/// Lets at most one key frame request (PLI/FIR, RFC 4585 §6.3.1, RFC 5104 §4.3.1) per
/// `intervalMillis` through to a publisher: many players asking at once, or one asking in a
/// loop, must not make the encoder send key frames back to back.
struct KeyFrameRequestLimiter {
  /// Minimum time between forwarded requests, ms.
  let intervalMillis: Int64
  private var lastForwardedAt: Int64?

  init(intervalMillis: Int64 = 1000) { self.intervalMillis = intervalMillis }

  /// Whether a request arriving at `now` (ms) goes to the publisher; records it when it does.
  mutating func shouldForward(now: Int64) -> Bool {
    if let last = lastForwardedAt, now - last < intervalMillis { return false }
    lastForwardedAt = now
    return true
  }
}
