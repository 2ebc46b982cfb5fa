import WCSProtocols

// The video bitrate of each connected leg, for `inboundVideoRate`/`outboundVideoRate`.
extension LocalServerRelayEngine {
  /// Emits `videoRate` for every connected publisher and player that moved video since its
  /// last sample (with each report turn, `reportIntervalMillis`): the bytes over the time
  /// between samples. A leg's first turn only takes its sample.
  func emitVideoRates(now: MediaInstant) {
    for publisher in publishers.values where publisher.connected {
      if let rate = Self.videoRate(
        bytes: publisher.statistics.videoBytes, since: publisher.videoRateSample, now: now)
      {
        emit(
          .videoRate(mediaSessionId: publisher.mediaSessionId, inbound: true, bitsPerSecond: rate))
      }
      publisher.videoRateSample = (publisher.statistics.videoBytes, now)
    }
    for player in players.values where player.connected {
      if let rate = Self.videoRate(
        bytes: player.statistics.videoBytes, since: player.videoRateSample, now: now)
      {
        emit(.videoRate(mediaSessionId: player.mediaSessionId, inbound: false, bitsPerSecond: rate))
      }
      player.videoRateSample = (player.statistics.videoBytes, now)
    }
  }

  /// Bits per second from `sample` to (`bytes`, `now`); `nil` without a sample, without
  /// video since it, or over no time.
  static func videoRate(
    bytes: Int, since sample: (bytes: Int, at: MediaInstant)?, now: MediaInstant
  )
    -> Int?
  {
    guard let sample, bytes > sample.bytes else { return nil }
    let seconds = (now - sample.at).seconds
    guard seconds > 0 else { return nil }
    return Int((Double(bytes - sample.bytes) * 8 / seconds).rounded())
  }
}
