import WCSTransport

/// `publishStream`, `playStream`, `unPublishStream`/`stopStream` and stream teardown
/// (wcs-protocol.md §3.1, §9.3–9.4).
extension WCSServerCore {
  func handleCreate(_ id: WCSConnectionID, _ message: WCSMessage, publish: Bool, now: Int64) {
    guard let object = message.argument?.objectValue else {
      reject(id, .argumentNotAnObject(message: message.name))
      return
    }
    let failStatus = { (mediaSessionId: String?, info: String) in
      self.log("session \(id): \(message.name) \(mediaSessionId ?? "null") FAILED: \(info)")
      self.send(
        id,
        ServerMessages.streamStatus(
          rejectedStreamObject(
            object, mediaSessionId: mediaSessionId, published: publish, info: info)))
    }
    let mediaSessionId: String
    do {
      guard let found = try StreamRequest.mediaSessionId(of: object) else {
        failStatus(nil, WCSStreamInfo.mediaSessionIdNull)
        return
      }
      mediaSessionId = found
    } catch {
      reject(id, error)
      return
    }
    if streams[mediaSessionId] != nil {
      failStatus(mediaSessionId, WCSStreamInfo.mediaSessionIdInUse)
      return
    }
    let request: StreamRequest
    do {
      request = try StreamRequest(object: object, mediaSessionId: mediaSessionId)
    } catch {
      failStatus(mediaSessionId, error.description)
      return
    }
    guard let session = sessions[id], let token = session.authToken else { return }
    if publish, let refusal = roomPublishRefusal(id, request) {
      failStatus(mediaSessionId, refusal)
      return
    }
    // Checked before any media request: every stream costs the engine a socket.
    if session.streamIds.count >= configuration.maxStreamsPerSession {
      failStatus(mediaSessionId, WCSStreamInfo.tooManyStreamsInSession)
      return
    }
    if streams.count >= configuration.maxStreams {
      failStatus(mediaSessionId, WCSStreamInfo.serverStreamLimitReached)
      return
    }

    var role = ServerStream.Role.publisher
    if publish {
      if publishersByName[request.name] != nil {
        failStatus(mediaSessionId, WCSStreamInfo.streamNameInUse)
        return
      }
    } else {
      // An RTSP/RTMP URL nobody publishes under is pulled by the media engine (issue 28).
      guard
        let source = publishersByName[request.name]
          ?? PullSourceName.sourceId(forStreamName: request.name)
      else {
        failStatus(mediaSessionId, WCSStreamInfo.streamNotFound)
        return
      }
      if publishersByName[request.name] == nil, let allowed = configuration.pullSourceHosts {
        let host = PullSourceName.host(ofURL: request.name)
        guard let host, allowed.contains(host) else {
          log("session \(id): pull of \(request.name) refused: host not in pullSourceHosts")
          failStatus(
            mediaSessionId,
            "Pulling from host \(host ?? "(none)") is not allowed (pullSourceHosts)")
          return
        }
      }
      role = .player(source: source)
    }
    streams[mediaSessionId] = ServerStream(
      request: request, role: role, owner: id, ownerLogin: session.login,
      ownerSessionId: token, createDate: now)
    sessions[id]?.streamIds.append(mediaSessionId)

    switch role {
    case .publisher:
      publishersByName[request.name] = mediaSessionId
      log(
        "session \(id): publish \(mediaSessionId) name=\(request.name) record=\(request.record) "
          + "transport=\(request.transport)")
      actions.append(
        .media(
          .createPublisher(
            LocalServerPublisherRequest(
              mediaSessionId: mediaSessionId, streamName: request.name, offerSDP: request.sdp,
              record: request.record, hasAudio: request.hasAudio, hasVideo: request.hasVideo,
              minBitrate: request.minBitrate, maxBitrate: request.maxBitrate,
              rtmpUrl: allowedRTMPURL(id, request)))))
    case .player(let source):
      playersBySource[source, default: []].append(mediaSessionId)
      log(
        "session \(id): play \(mediaSessionId) name=\(request.name) source=\(source) "
          + "transport=\(request.transport)")
      actions.append(
        .media(
          .createPlayer(
            LocalServerPlayerRequest(
              mediaSessionId: mediaSessionId, streamName: request.name,
              sourceMediaSessionId: source, offerSDP: request.sdp))))
    }
  }

  /// `unPublishStream` and `stopStream` both end whatever stream the id names (Android sends
  /// either with its whole stream object).
  func handleStop(_ id: WCSConnectionID, _ message: WCSMessage, now: Int64) {
    guard let object = message.argument?.objectValue else {
      reject(id, .argumentNotAnObject(message: message.name))
      return
    }
    let mediaSessionId: String
    do {
      guard let found = try StreamRequest.mediaSessionId(of: object) else {
        reject(id, .missingField("mediaSessionId"))
        return
      }
      mediaSessionId = found
    } catch {
      reject(id, error)
      return
    }
    guard let stream = streams[mediaSessionId], stream.owner == id else {
      log("session \(id): \(message.name) \(mediaSessionId): \(WCSStreamInfo.streamNotFound)")
      send(
        id,
        ServerMessages.streamStatus(
          rejectedStreamObject(
            object, mediaSessionId: mediaSessionId,
            published: message.name == "unPublishStream", info: WCSStreamInfo.streamNotFound)))
      return
    }
    endStream(
      mediaSessionId, status: stream.isPublisher ? .unpublished : .stopped,
      info: WCSStreamInfo.stoppedByUser, playersInfo: WCSStreamInfo.stoppedByPublisherStop,
      now: now)
  }

  /// Removes a stream, tells its owner (if still connected) `status` with `info`, releases its
  /// media, and for a publisher ends its players with STOPPED `playersInfo`.
  func endStream(
    _ mediaSessionId: String, status: WCSStreamStatus, info: String, playersInfo: String,
    now: Int64
  ) {
    guard var stream = streams.removeValue(forKey: mediaSessionId) else { return }
    if let index = sessions[stream.owner]?.streamIds.firstIndex(of: mediaSessionId) {
      sessions[stream.owner]?.streamIds.remove(at: index)
    }
    switch stream.role {
    case .publisher:
      publishersByName[stream.request.name] = nil
      roomStreamEnded(stream, status: status)
      if stream.request.record {
        let name = RecordNaming.fileName(
          template: configuration.recordTemplate,
          fileExtension: stream.codecs.videoCodec == "H264"
            ? configuration.recordExtensionH264 : configuration.recordExtension,
          context: RecordNaming.Context(
            streamName: stream.request.name, mediaSessionId: mediaSessionId,
            login: stream.ownerLogin, sessionId: stream.ownerSessionId,
            startMillis: stream.createDate, endMillis: now,
            audioCodec: stream.codecs.audioCodec ?? "", videoCodec: stream.codecs.videoCodec ?? ""))
        stream.recordName = uniqueRecordName(name, for: mediaSessionId)
      }
      sendStatus(stream, status: status, info: info)
      actions.append(
        .media(.releaseMedia(mediaSessionId: mediaSessionId, recordName: stream.recordName)))
      log(
        "stream \(mediaSessionId) name=\(stream.request.name) \(status.rawValue): \(info)"
          + (stream.recordName.map { " recordName=\($0)" } ?? ""))
      for player in playersBySource.removeValue(forKey: mediaSessionId) ?? [] {
        // The publisher is gone from `streams`; its players' final status keeps its mute state.
        streams[player]?.audioMuted = stream.audioMuted
        streams[player]?.videoMuted = stream.videoMuted
        endStream(player, status: .stopped, info: playersInfo, playersInfo: playersInfo, now: now)
      }
    case .player(let source):
      if var players = playersBySource[source], let index = players.firstIndex(of: mediaSessionId) {
        players.remove(at: index)
        playersBySource[source] = players.isEmpty ? nil : players
      }
      sendStatus(stream, status: status, info: info)
      actions.append(.media(.releaseMedia(mediaSessionId: mediaSessionId, recordName: nil)))
      log("stream \(mediaSessionId) name=\(stream.request.name) \(status.rawValue): \(info)")
    }
  }

  /// `name`, or a suffixed name when an unfinished record of this core or a file
  /// (`WCSServerHooks.recordNameTaken`) has it: a record never replaces another.
  func uniqueRecordName(_ name: String, for mediaSessionId: String) -> String {
    // A recording the engine dropped (nothing recorded) never reports back: past this many,
    // forget the oldest guesses rather than grow; the engine still refuses to overwrite.
    if unfinishedRecordNames.count >= 4096 { unfinishedRecordNames.removeAll() }
    let unfinished = Set(unfinishedRecordNames.values)
    let taken = configuration.hooks.recordNameTaken
    let unique = RecordNaming.uniqueFileName(name) {
      unfinished.contains($0) || taken?($0) == true
    }
    unfinishedRecordNames[mediaSessionId] = unique
    return unique
  }

  /// `notifyStreamStatusEvent` with the full stream object to the stream's owner.
  func sendStatus(_ stream: ServerStream, status: WCSStreamStatus, info: String?) {
    var audioMuted = stream.audioMuted
    var videoMuted = stream.videoMuted
    // A player shows its publisher's live state; once the publisher is gone, the copy
    // `endStream` left in the player.
    if case .player(let source) = stream.role, let publisher = streams[source] {
      audioMuted = publisher.audioMuted
      videoMuted = publisher.videoMuted
    }
    let object = StreamObject(
      stream: stream, status: status, info: info, audioMuted: audioMuted, videoMuted: videoMuted)
    send(stream.owner, ServerMessages.streamStatus(object.json))
  }
}
