/// Holds decoded video frames back by an extra delay, for lip sync: a frame decoded at `t` is
/// rendered at `t + extraDelay`, in decode order. With no extra delay frames pass at once.
///
/// The delay is read at each release, so when it shrinks held frames come out sooner (and when it
/// grows they wait longer). At most `capacity` frames are held; beyond that the oldest goes out
/// early rather than letting memory grow.
///
/// Sans-I/O and not thread-safe: owned by the video track's queue, which calls `release` when a
/// frame is decoded and again at `nextDeadline`.
public struct VideoRenderQueue<Frame: Sendable>: Sendable {
  /// A frame due for rendering and how long it was held.
  public struct Release: Sendable {
    /// The frame.
    public var frame: Frame
    /// Time between decoding and release.
    public var heldFor: Duration
  }

  /// Frames held at most (default 90: 3 s at 30 fps, beyond the 1 s sync cap).
  public let capacity: Int
  /// The held frames, oldest first, and when each was decoded (same indices), as offsets
  /// (`PlayoutInstant`). Two arrays: a frame's decode time is read on every release, and
  /// reading it out of a (frame, time) pair copied the whole frame; offsets rather than
  /// `ContinuousClock.Instant`s, which are resilient (every copy and comparison a runtime call).
  private var frames: [Frame] = []
  private var decodedAt: [Duration] = []

  /// Creates an empty queue holding at most `capacity` frames (at least 1).
  public init(capacity: Int = 90) { self.capacity = max(1, capacity) }

  /// Frames held now.
  public var count: Int { frames.count }

  /// Holds `frame`, decoded at `now`.
  public mutating func push(_ frame: consuming Frame, decodedAt now: ContinuousClock.Instant) {
    frames.append(frame)
    decodedAt.append(PlayoutInstant.offset(of: now))
  }

  /// The frames due at `now` with `extraDelay`, oldest first (plus any over `capacity`).
  public mutating func release(now: ContinuousClock.Instant, extraDelay: Duration) -> [Release] {
    var out: [Release] = []
    while let release = releaseNext(now: now, extraDelay: extraDelay) { out.append(release) }
    return out
  }

  /// The oldest frame if it is due at `now` with `extraDelay` (or over `capacity`), taken
  /// out; nil otherwise. Calling it until nil gives `release(now:extraDelay:)`'s frames, one
  /// at a time, without an array to hold them.
  mutating func releaseNext(now: ContinuousClock.Instant, extraDelay: Duration) -> Release? {
    let now = PlayoutInstant.offset(of: now)
    guard hasDue(at: now, extraDelay: extraDelay) else { return nil }
    var heldFor = Duration.zero
    let frame = takeOldest(at: now, heldFor: &heldFor)
    return Release(frame: frame, heldFor: heldFor)
  }

  /// Whether `releaseNext` would release a frame at `now` (a `PlayoutInstant` offset).
  package func hasDue(at now: Duration, extraDelay: Duration) -> Bool {
    guard let first = decodedAt.first else { return false }
    return first + extraDelay <= now || frames.count > capacity
  }

  /// The oldest frame, taken out, and in `heldFor` the time from its decoding to `now` (a
  /// `PlayoutInstant` offset): `releaseNext`'s release as a frame returned straight, for a
  /// caller that moves it on (a frame bound out of an optional is copied). Only when
  /// `hasDue(at:extraDelay:)` (or `count > 0`): an empty queue has no oldest frame.
  package mutating func takeOldest(at now: Duration, heldFor: inout Duration) -> Frame {
    // Usually the only frame held: taken from the end, without the shift of `removeFirst`.
    if frames.count == 1 {
      heldFor = now - decodedAt.removeLast()
      return frames.removeLast()
    }
    heldFor = now - decodedAt.removeFirst()
    return frames.removeFirst()
  }

  /// When the oldest held frame is due with `extraDelay`; nil when nothing is held.
  public func nextDeadline(extraDelay: Duration) -> ContinuousClock.Instant? {
    decodedAt.first.map { PlayoutInstant.instant(at: $0 + extraDelay) }
  }
}
