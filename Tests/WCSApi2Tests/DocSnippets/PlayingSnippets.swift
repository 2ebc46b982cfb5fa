import FPWCSApi2Swift
import Synchronization

// Code of the "Playing" article, verbatim (see scripts/check-doc-snippets.sh).

/// A `display` that counts decoded frames and remembers the last picture size.
final class FrameCounter: VideoRenderer {
  private let state = Mutex((frames: 0, width: 0, height: 0))

  func render(_ frame: VideoFrame) {
    state.withLock { $0 = (frames: $0.frames + 1, width: frame.width, height: frame.height) }
  }

  /// Frames rendered so far.
  var frames: Int { state.withLock { $0.frames } }
}

/// Plays `name` into `renderer` and prints the statistics once playback is up.
func playWithStats(
  session: WCSSession, name: String, renderer: any VideoRenderer,
  report: @escaping @Sendable (String) -> Void
) throws -> WCSStream {
  let options = FPWCSApi2StreamOptions()
  options.name = name
  options.display = renderer
  let player = try session.createStream(options)
  player.on(.fpwcsStreamStatusPlaying) { stream in
    stream?.getStats { stats in
      guard let stats else { return }
      report("receiving \(stats.currentVideoBitrate) bit/s, lost \(stats.connection.packetsLost)")
    }
  }
  player.on(.fpwcsStreamStatusNotEnoughtBandwidth) { stream in
    guard let stream else { return }
    report("bandwidth \(stream.getNetworkBandwidth()) bit/s < \(stream.getRemoteBitrate()) bit/s")
  }
  try player.play()
  return player
}

/// The protocol names of the statuses in `updates` (a stream's `statusUpdates`) until it ends.
func statusNames(of updates: AsyncStream<kFPWCSStreamStatus>) async -> [String] {
  var names: [String] = []
  for await status in updates {
    names.append(FPWCSApi2Model.streamStatus(toString: status))
  }
  return names
}

/// Reports the connection-quality class with the smoothed client and server bitrates.
func watchQuality(of stream: WCSStream, report: @escaping @Sendable (String) -> Void) {
  stream.enableConnectionQualityCalculation(true)
  stream.onConnectionQualityCallback { quality, clientBitrate, serverBitrate in
    report(
      "quality \(quality.rawValue): client \(Int(clientBitrate)), server \(Int(serverBitrate))")
  }
}
