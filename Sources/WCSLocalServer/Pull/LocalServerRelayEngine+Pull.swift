import WCSPeerConnection
import WCSProtocols

/// The RTP timestamps of a pulled source's SSRCs at any instant: the timestamps of one
/// anchor instant, advanced at each clock rate. The players' sender reports take them instead of
/// extrapolating from the last packet sent, whose send time carries the pull's jitter and, for
/// video, the one-picture wait for the end of each access unit.
struct RelaySourceClock {
  var anchor: MediaInstant
  /// Publisher SSRC → its RTP timestamp at `anchor` and its clock rate, Hz.
  var clocks: [UInt32: PulledRTPClock]

  /// The RTP timestamp of `ssrc` at `now`; nil for an SSRC the source does not send.
  func timestamp(_ ssrc: UInt32, at now: MediaInstant) -> UInt32? {
    guard let clock = clocks[ssrc] else { return nil }
    let elapsed = MediaTime(now - anchor, clockRate: clock.clockRate).ticks
    return clock.timestamp &+ UInt32(truncatingIfNeeded: elapsed)
  }
}

/// One pulled source: its reader, and the players waiting for it to open.
final class RelayPull {
  let sourceId: String
  let url: String
  let reader: PullSourceReader
  /// Players that asked before the source was open (their answers need its H.264 format).
  var waiting: [LocalServerPlayerRequest] = []
  var droppedFrames = 0
  /// The RTP clocks of the source's SSRCs (`.clock` events), for the players' sender reports.
  var clock: RelaySourceClock?

  init(sourceId: String, url: String, reader: PullSourceReader) {
    self.sourceId = sourceId
    self.url = url
    self.reader = reader
  }
}

/// RTSP/RTMP sources pulled on demand (issue 28): the first player of a `rtsp://`/`rtmp://` name
/// starts a `PullSourceReader`; once it is open, the source is a `RelayPublisher` like any
/// other (an idle `PeerConnection` that never binds a socket: the relay's RTCP to it is
/// dropped), so players share it, get its H.264 as it is, or FAILED `Transcoding required, but
/// disabled` when they cannot take it. The pull stops when its last player leaves; when the
/// source fails or ends, its players fail with the WCS reason (`PullError.info(url:)`).
extension LocalServerRelayEngine {
  /// The payload type of pulled H.264 on the relay's publisher side.
  static let pulledVideoPayloadType: UInt8 = 102
  /// The payload type of a pulled source's audio, transcoded to Opus, on that side.
  static let pulledAudioPayloadType: UInt8 = 111

  /// Takes a player of a pulled source; false when `request` is not one (a publisher's player).
  func createPulledPlayer(_ request: LocalServerPlayerRequest) -> Bool {
    let sourceId = request.sourceMediaSessionId
    guard publishers[sourceId] == nil, let url = PullSourceName.url(ofSourceId: sourceId) else {
      return false
    }
    if let pull = pulls[sourceId] {
      pull.waiting.append(request)
      return true
    }
    let reader = PullSourceReader(
      url: url, limits: PullLimits(), payloadType: Self.pulledVideoPayloadType, ssrc: newSSRC(),
      audioPayloadType: Self.pulledAudioPayloadType, audioSSRC: newSSRC())
    let pull = RelayPull(sourceId: sourceId, url: url, reader: reader)
    pull.waiting.append(request)
    pulls[sourceId] = pull
    configuration.log("pull \(url): opening for \(request.mediaSessionId)")
    reader.start { [weak self] event in
      guard let self else { return }
      self.loop.execute { [self] in
        // A stopped pull's last events find another reader (or none) under its id.
        guard let pull = self.pulls[sourceId], pull.reader === reader else { return }
        self.pullEvent(pull, event)
      }
    }
    return true
  }

  func pullEvent(_ pull: RelayPull, _ event: PullSourceEvent) {
    switch event {
    case .opened(let format, let audio):
      var codecs = [
        Self.pulledVideoPayloadType: RelayCodec(
          kind: .video, name: "H264", clockRate: 90_000, h264: format)
      ]
      if audio != nil {
        codecs[Self.pulledAudioPayloadType] = RelayCodec(
          kind: .audio, name: "opus", clockRate: 48_000)
      }
      let publisher = RelayPublisher(
        mediaSessionId: pull.sourceId, streamName: pull.url,
        peerConnection: PeerConnection(configuration: configuration.peerConnection, loop: loop),
        codecs: codecs, rtcpSSRC: newSSRC(),
        keyFrameRequests: KeyFrameRequestLimiter(
          interval: .milliseconds(Int(configuration.keyFrameRequestIntervalMillis))))
      publisher.connected = true
      publishers[pull.sourceId] = publisher
      configuration.log(
        "pull \(pull.url): open, H264 \(format.profileLevelID)"
          + (audio.map {
            ", audio \($0.codecName) \($0.sampleRate) Hz \($0.channels) ch as Opus \($0.opusChannels) ch"
          } ?? ""))
      let waiting = pull.waiting
      pull.waiting = []
      for request in waiting { createPlayer(request) }
    case .audioSkipped(let error):
      configuration.log("pull \(pull.url): audio not served: \(error.detail)")
    case .clock(let clocks):
      pull.clock = RelaySourceClock(
        anchor: loop.mediaNow(), clocks: Dictionary(clocks.map { ($0.ssrc, $0) }) { $1 })
    case .packets(let packets):
      guard let publisher = publishers[pull.sourceId] else { return }
      for packet in packets { packet.withUnsafeBytes { publisherRTP(publisher, $0) } }
    case .dropped(let error):
      pull.droppedFrames += 1
      if pull.droppedFrames == 1 || pull.droppedFrames % 100 == 0 {
        configuration.log("pull \(pull.url): \(pull.droppedFrames) frames dropped: \(error.detail)")
      }
    case .failed(let error):
      let info = error.info(url: pull.url)
      configuration.log("pull \(pull.url): \(info): \(error.detail)")
      let failed = pull.waiting.map(\.mediaSessionId) + (publishers[pull.sourceId]?.playerIds ?? [])
      endPull(pull)
      for player in failed { emit(.failed(mediaSessionId: player, reason: info)) }
    }
  }

  /// After the release of `id` (a player): forgets it if it was waiting for a pull, and stops a
  /// pull that has no player left.
  func releasePulledPlayer(_ id: String, source: String?) {
    for pull in pulls.values {
      pull.waiting.removeAll { $0.mediaSessionId == id }
      guard source == nil || source == pull.sourceId, pull.waiting.isEmpty,
        publishers[pull.sourceId]?.playerIds.isEmpty ?? true
      else { continue }
      configuration.log("pull \(pull.url): no players left, stopped")
      endPull(pull)
    }
  }

  /// The RTP timestamp a player's sender report gives for the publisher SSRC `ssrc` of a pulled
  /// source at `now` (before the player's offset); nil for other sources.
  func pulledTimestamp(_ ssrc: UInt32, source: String, at now: MediaInstant) -> UInt32? {
    pulls[source]?.clock?.timestamp(ssrc, at: now)
  }

  func endPull(_ pull: RelayPull) {
    pull.reader.stop()
    pulls[pull.sourceId] = nil
    if let publisher = publishers.removeValue(forKey: pull.sourceId) {
      cancelTimers(publisher)
      publisher.peerConnection.close()
    }
  }
}
