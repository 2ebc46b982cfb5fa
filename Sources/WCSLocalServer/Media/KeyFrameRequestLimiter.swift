import WCSProtocols

/// Lets at most one key frame request (PLI/FIR, RFC 4585 §6.3.1, RFC 5104 §4.3.1) per
/// `interval` through to a publisher: many players asking at once, or one asking in a
/// loop, must not make the encoder send key frames back to back.
///
/// A request inside the interval is not dropped but deferred: it is sent once the interval has
/// passed (`deferredDeadline`), so a player that joins or loses the picture just after a key
/// frame waits at most one interval, and every request made meanwhile is served by that one PLI
/// (the key frame it brings reaches every player of the publisher). Once the last PLI has been
/// answered by a key frame (`keyFrameArrived`), the next may follow a quarter of the interval
/// after it, so players joining one after another are not held a whole interval each, and a
/// flood still costs at most four PLIs a second.
struct KeyFrameRequestLimiter {
  /// What to do with a request.
  enum Decision: Equatable {
    /// Send the PLI now.
    case forward
    /// Folded into the PLI due at this time: the caller runs `takeDeferred` then.
    case deferred(until: MediaInstant)
  }

  /// Minimum time between forwarded requests while the last one is unanswered.
  let interval: MediaDuration
  private var lastForwardedAt: MediaInstant?
  /// Whether a key frame started since the last forwarded PLI.
  private var answered = false
  /// When the deferred PLI is due; nil when none is waiting.
  private(set) var deferredDeadline: MediaInstant?
  /// Requests folded into a deferred PLI (several players asking within one interval count once
  /// each here and once as a forwarded PLI).
  private(set) var deferredRequests = 0

  init(interval: MediaDuration = .seconds(1)) { self.interval = max(.zero, interval) }

  /// The interval in force: a quarter once the last PLI was answered.
  private var currentInterval: MediaDuration { answered ? interval / 4 : interval }

  /// Decides on a request arriving at `now` and records it.
  mutating func request(now: MediaInstant) -> Decision {
    if let deferredDeadline {
      deferredRequests += 1
      return .deferred(until: deferredDeadline)
    }
    if let last = lastForwardedAt, now - last < currentInterval {
      let deadline = last + currentInterval
      deferredDeadline = deadline
      deferredRequests += 1
      return .deferred(until: deadline)
    }
    lastForwardedAt = now
    answered = false
    return .forward
  }

  /// A key frame started (its first packet went to the players): the last PLI is answered, so
  /// the quarter interval applies. Returns the deferred PLI's new, earlier deadline when that
  /// moved it (the caller re-arms its timer), else nil. The waiting request is not taken as
  /// served: its player may have joined too late in this key frame to decode it.
  mutating func keyFrameArrived() -> MediaInstant? {
    guard let last = lastForwardedAt, !answered else { return nil }
    answered = true
    guard let deadline = deferredDeadline, last + currentInterval < deadline else {
      return nil
    }
    deferredDeadline = last + currentInterval
    return deferredDeadline
  }

  /// Whether the deferred PLI is due at `now`; when it is, records it as forwarded.
  mutating func takeDeferred(now: MediaInstant) -> Bool {
    guard let deadline = deferredDeadline, now >= deadline else { return false }
    deferredDeadline = nil
    lastForwardedAt = now
    answered = false
    return true
  }
}
