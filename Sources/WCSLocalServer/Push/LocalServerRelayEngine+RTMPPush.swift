import Foundation
import WCSProtocols

/// `rtmpUrl` re-publishing (issue 28): a publisher's H.264 and Opus pushed to an RTMP server as
/// FLV (H.264 as it is, Opus transcoded to AAC) by an `RTMPPusher` on its own thread. The loop
/// only queues packets (never waits: a full queue drops and counts); the pusher's events come
/// back through the loop and go to the publisher as `rtmpStreamStatus` stream events. A VP8
/// publication is not pushed: WCS would transcode it, which this server does not; the
/// publisher is told so and its WebRTC stream goes on.
extension LocalServerRelayEngine {
  /// Starts pushing `publisher` to `url` (checked by the core against the host policy).
  func startRTMPPush(_ publisher: RelayPublisher, url: String, limits: RTMPPushLimits) {
    let id = publisher.mediaSessionId
    let names = Self.codecNames(publisher.codecs)
    if names.videoCodec == "VP8" {
      configuration.log("media \(id): rtmp push to \(url) refused: VP8 would need transcoding")
      emit(
        .rtmpPushStatus(
          mediaSessionId: id,
          LocalServerRTMPPushStatus(
            rtmpUrl: url, status: "FAILED", info: WCSStreamInfo.transcodingRequiredButDisabled,
            detail: "RTMP carries H.264, the stream is VP8; publish H.264 to re-publish it")))
      return
    }
    let pusher = RTMPPusher(
      url: url, hasVideo: names.videoCodec == "H264", hasAudio: names.audioCodec != nil,
      limits: limits)
    publisher.rtmpPush = pusher
    configuration.log("media \(id): rtmp push to \(url): connecting")
    pusher.start { [weak self] event in
      guard let self else { return }
      self.loop.execute { [self] in
        guard let publisher = self.publishers[id], publisher.rtmpPush === pusher else { return }
        self.rtmpPushEvent(publisher, pusher, event)
      }
    }
  }

  func rtmpPushEvent(_ publisher: RelayPublisher, _ pusher: RTMPPusher, _ event: RTMPPushEvent) {
    let id = publisher.mediaSessionId
    switch event {
    case .connected:
      configuration.log("media \(id): rtmp push to \(pusher.url): connected")
      _ = requestKeyFrame(publisher)
    case .needsKeyFrame:
      _ = requestKeyFrame(publisher)
    case .dropped(let total):
      configuration.log(
        "media \(id): rtmp push to \(pusher.url): \(total) packets dropped, the server is slow")
    case .publishing:
      configuration.log("media \(id): rtmp push to \(pusher.url): publishing")
      emit(
        .rtmpPushStatus(
          mediaSessionId: id, LocalServerRTMPPushStatus(rtmpUrl: pusher.url, status: "PUBLISHING")))
    case .failed(let detail, let willRetry):
      configuration.log(
        "media \(id): rtmp push to \(pusher.url) failed: \(detail)"
          + (willRetry ? ", retrying" : ", given up"))
      if !willRetry { publisher.rtmpPush = nil }
      emit(
        .rtmpPushStatus(
          mediaSessionId: id,
          LocalServerRTMPPushStatus(
            rtmpUrl: pusher.url, status: "FAILED", info: WCSStreamInfo.failedByRTMPWriterError,
            detail: detail, willRetry: willRetry)))
    }
  }

  /// Queues one of the publisher's RTP packets for its push (the payload, RTP header fields).
  func feedRTMPPush(
    _ pusher: RTMPPusher, kind: RelayCodec.Kind, header: RTPHeader, payload: ArraySlice<UInt8>,
    now: MediaInstant
  ) {
    pusher.queue.push(
      RTMPPushPacket(
        kind: kind == .video ? .video : .audio, sequenceNumber: header.sequenceNumber,
        timestamp: header.timestamp, marker: header.marker, payload: Array(payload),
        arrival: now.nanoseconds))
  }
}
