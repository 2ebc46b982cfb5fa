import WCSMediaSeam

/// Bandwidth measurements of the media connections (`getNetworkBandwidth`,
/// `getRemoteBitrate`, locally raised NOT_ENOUGH_BANDWIDTH).
extension SessionCore {
  /// Takes one stats sample of a stream's media connection at `now` (microseconds, any
  /// monotonic origin).
  ///
  /// Publisher: network bandwidth = the congestion controller's estimate
  /// (`availableOutgoingBitrate`, bps, when known); remote bitrate stays what the server
  /// reported (`videoRate`). Player: remote bitrate = the measured receive bitrate
  /// (`currentVideoBitrate`, bps). When a publisher's estimate stays under its constraints'
  /// minimum bitrate for 3 s, NOT_ENOUGH_BANDWIDTH is reported once (info
  /// `"<min>/<estimate>"`, status unchanged) as the server's event is; it may be raised again
  /// after the estimate recovered.
  func bandwidthSample(streamId: String, stats: MediaConnectionStats, now: Int64)
    -> [SessionEffect]
  {
    guard var stream = streams[streamId],
      stream.status == .fpwcsStreamStatusPublishing || stream.status == .fpwcsStreamStatusPlaying
    else { return [] }
    var effects: [SessionEffect] = []
    if stream.published {
      if stats.availableOutgoingBitrate > 0 {
        stream.networkBandwidth = stats.availableOutgoingBitrate
      }
      let minBitrate = (stream.request?.minBitrate ?? 0) * 1000
      if minBitrate > 0, stats.availableOutgoingBitrate > 0 {
        var detector = bandwidthDetectors[streamId] ?? InsufficientBandwidthDetector()
        let event = detector.update(
          estimate: stats.availableOutgoingBitrate, minBitrate: minBitrate, now: now)
        bandwidthDetectors[streamId] = detector
        if case .notEnoughBandwidth(let required, let estimate) = event {
          stream.info = InsufficientBandwidthDetector.info(required: required, estimate: estimate)
          streams[streamId] = stream
          return [.streamStatus(.fpwcsStreamStatusNotEnoughtBandwidth, stream)]
        }
      }
    } else {
      stream.remoteBitrate = stats.currentVideoBitrate
    }
    if stream != streams[streamId] {
      streams[streamId] = stream
      effects.append(.streamUpdated(stream))
    }
    return effects
  }
}
