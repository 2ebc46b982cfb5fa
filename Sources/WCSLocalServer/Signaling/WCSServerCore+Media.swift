/// Media engine events (see `LocalServerMediaEngine`).
extension WCSServerCore {
  func handleAnswer(_ mediaSessionId: String, sdp: String) {
    guard let stream = streams[mediaSessionId] else {
      log("media: answer for unknown stream \(mediaSessionId) ignored")
      return
    }
    send(stream.owner, ServerMessages.setRemoteSDP(mediaSessionId: mediaSessionId, sdp: sdp))
  }

  func handleConnected(_ mediaSessionId: String, codecs: LocalServerMediaCodecs) {
    guard var stream = streams[mediaSessionId], stream.status == .pending else {
      log("media: connected for unknown or started stream \(mediaSessionId) ignored")
      return
    }
    stream.status = stream.isPublisher ? .publishing : .playing
    stream.codecs = codecs
    streams[mediaSessionId] = stream
    sendStatus(stream, status: stream.status, info: nil)
    log("stream \(mediaSessionId) name=\(stream.request.name) \(stream.status.rawValue)")
    roomStreamPublished(stream)
    if case .player(let source) = stream.role {
      // A new player cannot decode until the next key frame.
      actions.append(.media(.requestKeyFrame(mediaSessionId: source)))
    }
  }

  func handleMediaFailure(_ mediaSessionId: String, reason: String, now: Int64) {
    guard streams[mediaSessionId] != nil else {
      log("media: failure of unknown stream \(mediaSessionId) ignored: \(reason)")
      return
    }
    endStream(
      mediaSessionId, status: .failed, info: reason,
      playersInfo: WCSStreamInfo.stoppedByPublisherStop, now: now)
  }
}
