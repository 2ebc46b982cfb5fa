/// Lets at most one key frame request (PLI/FIR, RFC 4585 §6.3.1, RFC 5104 §4.3.1) per
/// `intervalMillis` through to a publisher: many players asking at once, or one asking in a
/// loop, must not make the encoder send key frames back to back.
///
/// A request inside the interval is not dropped but deferred: it is sent once the interval has
/// passed (`deferredDeadline`), so a player that joins or loses the picture just after a key
/// frame waits at most one interval, and every request made meanwhile is served by that one PLI
/// (the key frame it brings reaches every player of the publisher).
struct KeyFrameRequestLimiter {
  /// What to do with a request.
  enum Decision: Equatable {
    /// Send the PLI now.
    case forward
    /// Folded into the PLI due at this time (ms): the caller runs `takeDeferred` then.
    case deferred(until: Int64)
  }

  /// Minimum time between forwarded requests, ms.
  let intervalMillis: Int64
  private var lastForwardedAt: Int64?
  /// When the deferred PLI is due, ms; nil when none is waiting.
  private(set) var deferredDeadline: Int64?
  /// Requests folded into a deferred PLI (several players asking within one interval count once
  /// each here and once as a forwarded PLI).
  private(set) var deferredRequests = 0

  init(intervalMillis: Int64 = 1000) { self.intervalMillis = max(0, intervalMillis) }

  /// Decides on a request arriving at `now` (ms) and records it.
  mutating func request(now: Int64) -> Decision {
    if let deferredDeadline {
      deferredRequests += 1
      return .deferred(until: deferredDeadline)
    }
    if let last = lastForwardedAt, now - last < intervalMillis {
      let deadline = last + intervalMillis
      deferredDeadline = deadline
      deferredRequests += 1
      return .deferred(until: deadline)
    }
    lastForwardedAt = now
    return .forward
  }

  /// Whether the deferred PLI is due at `now` (ms); when it is, records it as forwarded.
  mutating func takeDeferred(now: Int64) -> Bool {
    guard let deadline = deferredDeadline, now >= deadline else { return false }
    deferredDeadline = nil
    lastForwardedAt = now
    return true
  }
}
