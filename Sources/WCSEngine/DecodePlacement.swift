import Foundation
import WCSPeerConnection
import WCSProtocols

/// Where a played video track decodes its pictures and hands them to its renderer. Decided once,
/// when the track is negotiated (`DecodePlacement.decide`), and kept for the track's life: no
/// picture moves between the two, so the track's state belongs to one thread.
enum DecodePlacement: Equatable, Sendable {
  /// On the connection's event loop: no hand-off and no worker wake-up per picture
  /// (docs/performance.md, "A wake-up costs more than most media work"), holding `share` of the
  /// loop's time in its `EventLoopWorkBudget` until the track stops.
  case loop(share: Double)
  /// On the track's own serial queue: a large or expensive picture never holds the packets and
  /// timers of the other streams on the loop.
  case queue

  /// What the placement is decided from, all known when the answer is applied.
  struct Inputs: Equatable, Sendable {
    /// Whether the engine lets a track decode on its loop (`decodesVideoOnLoop`).
    var loopAllowed: Bool
    /// The played picture's size asked for (the play constraints), 0 when not asked for.
    var width: Int
    var height: Int
    /// Pictures per second asked for, 0 when not asked for (then 30).
    var frameRate: Int
    /// The machine's active cores.
    var cores: Int
    /// The share of the loop's time that the tracks already placed on it hold.
    var shareInUse: Double
  }

  /// The size classes the estimate knows. VP8 (libvpx) and H.264 (libavcodec, one thread) decode
  /// a picture of one size in overlapping times on this machine (`CodecBench`), so the class
  /// depends on the size alone.
  enum SizeClass: Equatable, Sendable {
    /// At most 640x480 pixels.
    case standard
    /// At most 1280x720 pixels, or not asked for: most played streams (a camera's 720p, the
    /// demo's movie), and what WCS sends when the player asks for nothing.
    case high
    /// Larger than 1280x720.
    case larger

    /// The class of a `width` x `height` picture (0 for an unknown side).
    init(width: Int, height: Int) {
      let pixels = width * height
      if pixels == 0 || pixels > 1280 * 720 {
        self = pixels == 0 ? .high : .larger
      } else {
        self = pixels <= 640 * 480 ? .standard : .high
      }
    }

    /// The time one picture's decode and hand-over is expected to take: 2 ms for 640x480,
    /// 4 ms for 1280x720, 10 ms above (CodecBench's decode figures, docs/performance.md).
    var estimatedCost: MediaDuration {
      switch self {
      case .standard: .milliseconds(2)
      case .high: .milliseconds(4)
      case .larger: .milliseconds(10)
      }
    }
  }

  /// The placement of a track, by this rule:
  /// 1. `.queue` when the engine does not allow the loop;
  /// 2. `.loop` on one core: a queue's thread would share that core with the loop, so it only
  ///    adds hand-offs and wake-ups;
  /// 3. `.queue` when the size class's estimated cost per picture is over
  ///    `tuning.inlineDecodeCostLimit`;
  /// 4. `.queue` when the tracks already on the loop plus this one (cost times frame rate) would
  ///    hold more than `tuning.inlineDecodeShare` of the loop's time;
  /// 5. `.loop` otherwise, holding that share.
  static func decide(_ inputs: Inputs, tuning: ReceiveTuning) -> DecodePlacement {
    guard inputs.loopAllowed else { return .queue }
    let cost = SizeClass(width: inputs.width, height: inputs.height).estimatedCost
    let rate = inputs.frameRate > 0 ? inputs.frameRate : 30
    let share = cost.seconds * Double(rate)
    if inputs.cores <= 1 { return .loop(share: share) }
    guard cost <= tuning.inlineDecodeCostLimit,
      inputs.shareInUse + share <= tuning.inlineDecodeShare
    else { return .queue }
    return .loop(share: share)
  }
}

extension NativeMediaConnection {
  /// Places the played video track's decoding (`DecodePlacement.decide`), once, when the answer
  /// is applied: from the play constraints' size and frame rate, the machine's cores and what
  /// the loop already holds. On the loop.
  func placeVideoDecoding() {
    guard let track = videoReceiveTrack, let video = request.video else { return }
    let inputs = DecodePlacement.Inputs(
      loopAllowed: configuration.decodesVideoOnLoop,
      width: max(video.maxWidth, video.minWidth), height: max(video.maxHeight, video.minHeight),
      frameRate: max(video.maxFrameRate, video.minFrameRate),
      cores: ProcessInfo.processInfo.activeProcessorCount,
      shareInUse: loop.workBudget.heldShare)
    track.place(DecodePlacement.decide(inputs, tuning: tuning))
  }
}
