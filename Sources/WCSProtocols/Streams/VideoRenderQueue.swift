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
    public var heldFor: MediaDuration
  }

  /// Frames held at most (default 90: 3 s at 30 fps, beyond the 1 s sync cap).
  public let capacity: Int
  /// The held frames, oldest first, and when each was decoded (same indices). Two arrays: a
  /// frame's decode time is read on every release, and reading it out of a (frame, time) pair
  /// copied the whole frame.
  private var frames: [Frame] = []
  private var decodedAt: [MediaInstant] = []

  /// Creates an empty queue holding at most `capacity` frames (at least 1).
  public init(capacity: Int = 90) { self.capacity = max(1, capacity) }

  /// Frames held now.
  public var count: Int { frames.count }

  /// Holds `frame`, decoded at `now`.
  public mutating func push(_ frame: consuming Frame, decodedAt now: MediaInstant) {
    frames.append(frame)
    decodedAt.append(now)
  }

  /// The frames due at `now` with `extraDelay`, oldest first (plus any over `capacity`).
  public mutating func release(now: MediaInstant, extraDelay: MediaDuration) -> [Release] {
    var out: [Release] = []
    while let release = releaseNext(now: now, extraDelay: extraDelay) { out.append(release) }
    return out
  }

  /// The oldest frame if it is due at `now` with `extraDelay` (or over `capacity`), taken
  /// out; nil otherwise. Calling it until nil gives `release(now:extraDelay:)`'s frames, one
  /// at a time, without an array to hold them.
  mutating func releaseNext(now: MediaInstant, extraDelay: MediaDuration) -> Release? {
    guard hasDue(at: now, extraDelay: extraDelay) else { return nil }
    var heldFor = MediaDuration.zero
    let frame = takeOldest(at: now, heldFor: &heldFor)
    return Release(frame: frame, heldFor: heldFor)
  }

  /// Whether `releaseNext` would release a frame at `now`.
  package func hasDue(at now: MediaInstant, extraDelay: MediaDuration) -> Bool {
    guard let first = decodedAt.first else { return false }
    return first + extraDelay <= now || frames.count > capacity
  }

  /// The oldest frame, taken out, and in `heldFor` the time from its decoding to `now`:
  /// `releaseNext`'s release as a frame returned straight, for a
  /// caller that moves it on (a frame bound out of an optional is copied). Only when
  /// `hasDue(at:extraDelay:)` (or `count > 0`): an empty queue has no oldest frame.
  package mutating func takeOldest(at now: MediaInstant, heldFor: inout MediaDuration) -> Frame {
    // Usually the only frame held: taken from the end, without the shift of `removeFirst`.
    if frames.count == 1 {
      heldFor = now - decodedAt.removeLast()
      return frames.removeLast()
    }
    heldFor = now - decodedAt.removeFirst()
    return frames.removeFirst()
  }

  /// When the oldest held frame is due with `extraDelay`; nil when nothing is held.
  public func nextDeadline(extraDelay: MediaDuration) -> MediaInstant? {
    decodedAt.first.map { $0 + extraDelay }
  }
}
