import Foundation
import Synchronization
import WCSMediaSeam

/// What a renderer saw: the figures a player shows about smoothness.
public struct RenderStatistics: Sendable, Equatable {
  /// Frames passed on to the wrapped renderer.
  public var framesRendered = 0
  /// Frames not passed on because their timestamp was not after the previous frame's (late,
  /// duplicated or reordered frames that would make the picture jump back).
  public var framesDropped = 0
  /// Frames rendered in the last second of the clock, i.e. the current frame rate (frames/s).
  public var framesPerSecond: Double = 0
  /// Gaps between two rendered frames longer than `freezeThreshold` (a visible freeze).
  public var freezes = 0
  /// The longest gap between two rendered frames, in seconds.
  public var longestGap: Double = 0

  /// Creates empty statistics.
  public init() {}
}

/// A `VideoRenderer` that counts what passes through it (frames rendered and dropped, frame
/// rate, freezes longer than 500 ms) and forwards each in-order frame to another renderer.
/// Thread-safe: frames may arrive on any media thread, `statistics` may be read from any thread.
public final class FrameStatisticsRenderer: VideoRenderer {
  private struct State {
    var statistics = RenderStatistics()
    var lastTimestampNs: Int64?
    var lastRenderAt: Double?
    var recentRenders: [Double] = []
  }

  private let inner: (any VideoRenderer)?
  private let clock: @Sendable () -> Double
  private let state = Mutex(State())
  /// A gap between frames longer than this (seconds) counts as a freeze (default 0.5 s).
  public let freezeThreshold: Double

  /// Wraps `inner` (or nothing, to only count). `clock` gives seconds on a monotonic clock; the
  /// default is the system's uptime clock (tests pass a virtual one).
  public init(
    wrapping inner: (any VideoRenderer)? = nil, freezeThreshold: Double = 0.5,
    clock: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }
  ) {
    self.inner = inner
    self.freezeThreshold = freezeThreshold
    self.clock = clock
  }

  /// The figures so far; `framesPerSecond` is computed at the time of the call.
  public var statistics: RenderStatistics {
    let now = clock()
    return state.withLock { s in
      var result = s.statistics
      result.framesPerSecond = Double(s.recentRenders.filter { now - $0 <= 1 }.count)
      return result
    }
  }

  /// Counts `frame` and forwards it when its timestamp is after the previous frame's.
  public func render(_ frame: VideoFrame) {
    let now = clock()
    let accepted = state.withLock { s -> Bool in
      if let last = s.lastTimestampNs, frame.timestampNs <= last {
        s.statistics.framesDropped += 1
        return false
      }
      s.lastTimestampNs = frame.timestampNs
      if let previous = s.lastRenderAt {
        let gap = now - previous
        s.statistics.longestGap = max(s.statistics.longestGap, gap)
        if gap > freezeThreshold { s.statistics.freezes += 1 }
      }
      s.lastRenderAt = now
      s.statistics.framesRendered += 1
      s.recentRenders.append(now)
      s.recentRenders.removeAll { now - $0 > 1 }
      return true
    }
    if accepted { inner?.render(frame) }
  }
}
