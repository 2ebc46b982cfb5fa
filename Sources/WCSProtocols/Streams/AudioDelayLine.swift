import WCSCodecs

/// Holds played audio back by a whole number of 20 ms frames, for lip sync.
///
/// A sound card (or a file) takes samples back to back, so audio cannot be delayed by handing a
/// frame over later: the delay is the number of frames held here. Each frame in gives one frame
/// out; to grow the delay by 20 ms the last frame played is played again in place of the oldest
/// held frame (a crude concealment: a tone or a vowel goes on instead of a 20 ms hole; silence
/// when nothing was played yet), to shrink it one held frame is dropped. It moves at most one frame per frame played
/// and only when the target is more than `hysteresis` away from the held delay, so a target
/// wavering around a frame boundary does not toggle.
///
/// Not thread-safe: owned by the audio track's queue.
public struct AudioDelayLine: Sendable {
  /// What one call produced.
  public struct Output: Sendable, Equatable {
    /// Frames to play, in order.
    public var frames: [PCMAudioFrame] = []
    /// RTP timestamp (48 kHz) of the last decoded frame among them; nil when every frame was
    /// an inserted frame or a concealed one (timestamp 0, see `OpusDecoder`).
    public var playedTimestamp: UInt32?
  }

  /// One step of the delay: a 20 ms frame.
  public static let step = MediaDuration.milliseconds(20)
  /// How far the target must be from the held delay before it moves (12 ms).
  public static let hysteresis = MediaDuration.milliseconds(12)

  private var held: [PCMAudioFrame] = []
  private var lastPlayed: PCMAudioFrame?

  /// Creates an empty line (no delay).
  public init() {}

  /// The delay now: frames held × 20 ms.
  public var delay: MediaDuration { Self.step * held.count }

  /// `process(_:target:)` in place: `frames` becomes the frames to play; returns the output's
  /// `playedTimestamp`. Each frame in gives one frame out, so each is replaced where it is: no
  /// `Output` and no new array (the caller's stays unique for it to empty and refill); with
  /// no delay held and none to grow (no lip-sync delay) the frames stay as they are.
  package mutating func process(_ frames: inout [PCMAudioFrame], target: MediaDuration) -> UInt32? {
    var playedTimestamp: UInt32?
    if held.isEmpty, target <= Self.hysteresis {
      for index in frames.indices where frames[index].timestamp != 0 {
        playedTimestamp = frames[index].timestamp
      }
      if let last = frames.last { lastPlayed = last }
      return playedTimestamp
    }
    // `process(_:target:)`'s loop, the output frame written over the input one.
    for index in frames.indices {
      held.append(frames[index])
      let current = Self.step * (held.count - 1)
      if target > current + Self.hysteresis {
        let channels = frames[index].channels
        let count = frames[index].samples.count
        let repeated =
          lastPlayed.flatMap {
            $0.channels == channels && $0.samples.count == count ? $0.samples : nil
          } ?? Array(repeating: 0, count: count)
        frames[index] = PCMAudioFrame(samples: repeated, channels: channels, timestamp: 0)
        continue
      }
      if target < current - Self.hysteresis, held.count >= 2 {
        held.removeFirst()
      }
      let played = held.removeFirst()
      lastPlayed = played
      if played.timestamp != 0 { playedTimestamp = played.timestamp }
      frames[index] = played
    }
    return playedTimestamp
  }

  /// Takes the frames pulled from the receiver and returns what to play, moving the delay one
  /// step towards `target` per frame when it is more than `hysteresis` away.
  public mutating func process(_ input: [PCMAudioFrame], target: MediaDuration) -> Output {
    var output = Output()
    if held.isEmpty, target <= Self.hysteresis {
      // No delay held and none to grow: each frame would be held and played at once (the loop
      // below), so the input goes out as it is, without touching `held` or copying the array.
      for frame in input where frame.timestamp != 0 { output.playedTimestamp = frame.timestamp }
      if let last = input.last { lastPlayed = last }
      output.frames = input
      return output
    }
    for frame in input {
      held.append(frame)
      let current = Self.step * (held.count - 1)
      if target > current + Self.hysteresis {
        // Keep every frame held and play the last frame again: the delay grows a step.
        let repeated =
          lastPlayed.flatMap {
            $0.channels == frame.channels && $0.samples.count == frame.samples.count
              ? $0.samples : nil
          } ?? Array(repeating: 0, count: frame.samples.count)
        output.frames.append(
          PCMAudioFrame(samples: repeated, channels: frame.channels, timestamp: 0))
        continue
      }
      if target < current - Self.hysteresis, held.count >= 2 {
        held.removeFirst()
      }
      let played = held.removeFirst()
      lastPlayed = played
      if played.timestamp != 0 { output.playedTimestamp = played.timestamp }
      output.frames.append(played)
    }
    return output
  }
}
