/// Media that cannot reach the server at all.
extension SessionCore {
  /// No ICE candidate pair of a stream's connection worked before media flowed
  /// (`MediaConnectionFailure.noCandidatePair`), or the network changed under a connection
  /// that may not restart (`.networkChanged`): the stream fails locally at once with `info`
  /// "Failed by ICE timeout: no ICE candidate pair succeeded: <what was tried>" (or "network
  /// changed: <which address>"), rather than
  /// waiting for the server's own timeout, which says nothing of the cause; the server hears
  /// `unPublishStream`/`stopStream` when the offer went out, and the media is released. Later
  /// ICE failures (lost consent) stay with the server, which sees them too.
  func mediaUnreachable(streamId: String, failure: MediaConnectionFailure) -> [SessionEffect] {
    guard var stream = streams[streamId], !stream.status.isTerminal else { return [] }
    var effects: [SessionEffect] = []
    if stream.offerSent { effects.append(.send(ClientMessages.stopStream(stream))) }
    effects += finish(
      &stream, status: .fpwcsStreamStatusFailed, info: "Failed by ICE timeout",
      localDetail: "\(failure)")
    return effects
  }
}

/// ICE restart (RFC 8445 §9) the only way WCS allows it: WCS takes an SDP offer only in
/// `publishStream`/`playStream` (wcs-protocol.md §4.2: `setRemoteSDP` is the only SDP message,
/// no renegotiation), so a restart ends the stream's server side and starts it again under
/// the same name with a new `mediaSessionId` and a new connection (new ufrag/pwd).
extension SessionCore {
  /// How many restarts in a row may fail to connect before the stream fails: each try costs a
  /// full round of checks (about 6 s), so this bounds an outage to about half a minute.
  static let maximumICERestarts = 5

  /// Whether `streamId` may restart now: it is PUBLISHING/PLAYING, or a restart is under way
  /// (PENDING after one) and fewer than `maximumICERestarts` were tried.
  func canRestartICE(streamId: String) -> Bool {
    guard let stream = streams[streamId], stream.request != nil, !stream.stopRequested else {
      return false
    }
    switch stream.status {
    case .fpwcsStreamStatusPublishing, .fpwcsStreamStatusPlaying:
      return stream.iceRestarts < Self.maximumICERestarts
    case .fpwcsStreamStatusPending:
      return stream.iceRestarts > 0 && stream.iceRestarts < Self.maximumICERestarts
    default:
      return false
    }
  }

  /// Moves `streamId` to `newId` (whose media connection the caller made): the server hears
  /// `unPublishStream`/`stopStream` for the old id and the old media is released, then the new
  /// connection's offer goes out in a new `publishStream`/`playStream`. Internally the stream
  /// is PENDING again; the app is not told (no callback) until the server's PUBLISHING/PLAYING
  /// for the new id, which it gets as a second PUBLISHING/PLAYING: the stream resumed. What
  /// the server says later about the old id is skipped as unknown. Returns no effects when
  /// `canRestartICE` says no.
  func restartICE(streamId: String, newId: String) -> [SessionEffect] {
    guard canRestartICE(streamId: streamId), let old = streams[streamId] else { return [] }
    var fresh = StreamState(id: newId, name: old.name)
    fresh.published = old.published
    fresh.status = .fpwcsStreamStatusPending
    fresh.info = old.info
    fresh.statusInfo = old.statusInfo
    fresh.recordName = old.recordName
    fresh.remoteAudioMuted = old.remoteAudioMuted
    fresh.remoteVideoMuted = old.remoteVideoMuted
    fresh.localAudioMuted = old.localAudioMuted
    fresh.localVideoMuted = old.localVideoMuted
    fresh.streamerVideoWidth = old.streamerVideoWidth
    fresh.streamerVideoHeight = old.streamerVideoHeight
    fresh.request = old.request
    fresh.iceRestarts = old.iceRestarts + 1
    streams[streamId] = nil
    streams[newId] = fresh
    bandwidthDetectors[newId] = bandwidthDetectors.removeValue(forKey: streamId)
    streamOrder = streamOrder.map { $0 == streamId ? newId : $0 }
    var effects: [SessionEffect] = []
    if old.offerSent { effects.append(.send(ClientMessages.stopStream(old))) }
    effects.append(.releaseMedia(streamId: streamId))
    if fresh.localAudioMuted {
      effects.append(.setTrackEnabled(streamId: newId, audio: true, enabled: false))
    }
    if fresh.localVideoMuted {
      effects.append(.setTrackEnabled(streamId: newId, audio: false, enabled: false))
    }
    effects.append(.createOffer(streamId: newId))
    return effects
  }

  /// The stream's media connection connected: a later loss may restart it afresh.
  func iceConnected(streamId: String) {
    streams[streamId]?.iceRestarts = 0
  }
}
