/// When a played track rendered its first and last pictures: the freeze, longest-gap and
/// frame-rate figures of `VideoDecodePipelineStatistics`, whatever the codec.
struct RenderTimeline {
  private var first: MediaInstant?
  private var last: MediaInstant?

  /// Notes a picture rendered at `now` (`statistics.framesDecoded` already counting it) and
  /// returns the time it counts as rendered at.
  mutating func rendered(at now: MediaInstant, into statistics: inout VideoDecodePipelineStatistics)
    -> MediaInstant
  {
    // A picture completed by a late packet is timed by that packet's arrival, which may come
    // before the previous render: the render clock does not go back, or the next gap would
    // count the difference twice.
    let renderedAt = max(now, last ?? now)
    if let last {
      let gap = (renderedAt - last).seconds
      statistics.longestGap = max(statistics.longestGap, gap)
      if gap > VideoDecodePipelineStatistics.freezeThreshold { statistics.freezes += 1 }
    }
    first = first ?? renderedAt
    last = renderedAt
    if let first, statistics.framesDecoded > 1 {
      let span = (renderedAt - first).seconds
      if span > 0 { statistics.framesPerSecond = Double(statistics.framesDecoded - 1) / span }
    }
    return renderedAt
  }
}
