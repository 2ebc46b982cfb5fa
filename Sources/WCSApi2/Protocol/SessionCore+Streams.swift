import Foundation
import WCSMediaSeam
import WCSTransport

/// Stream inputs of the session core (wcs-protocol.md §3.1, §9b).
extension SessionCore {
  /// Registers a new stream object (status New). Claims a `setRemoteSDP` that came first.
  func addStream(id: String, name: String) {
    var state = StreamState(id: id, name: name)
    if let index = unclaimedRemoteSDP.firstIndex(where: { $0.id == id }) {
      state.bufferedAnswer = unclaimedRemoteSDP.remove(at: index).sdp
    }
    streams[id] = state
    streamOrder.append(id)
  }

  /// Checks that `publish()`/`play()` may start; throws the reason otherwise.
  func checkCanStart(streamId: String, operation: String) throws(WCSError) {
    guard isEstablishedOrRegistered else {
      throw .invalidSessionState(status, operation: operation)
    }
    guard let stream = streams[streamId] else {
      throw .invalidStreamState(.fpwcsStreamStatusFailed, operation: operation)
    }
    guard stream.status == .fpwcsStreamStatusNew else {
      throw .invalidStreamState(stream.status, operation: operation)
    }
  }

  /// `publish()`/`play()` after the media connection exists: PENDING, then ask for the offer.
  /// Only a player gets a local PENDING callback (as the Web SDK does, wcs-protocol.md §12).
  func start(streamId: String, request: StreamRequest) -> [SessionEffect] {
    guard var stream = streams[streamId], stream.status == .fpwcsStreamStatusNew else { return [] }
    stream.published = request.published
    stream.request = request
    stream.status = .fpwcsStreamStatusPending
    streams[streamId] = stream
    var effects: [SessionEffect] = []
    if stream.localAudioMuted {
      effects.append(.setTrackEnabled(streamId: streamId, audio: true, enabled: false))
    }
    if stream.localVideoMuted {
      effects.append(.setTrackEnabled(streamId: streamId, audio: false, enabled: false))
    }
    effects.append(
      request.published ? .streamUpdated(stream) : .streamStatus(stream.status, stream))
    effects.append(.createOffer(streamId: streamId))
    return effects
  }

  /// The media connection produced its offer (or failed to).
  func offerCreated(streamId: String, result: Result<String, MediaBackendError>) -> [SessionEffect]
  {
    guard var stream = streams[streamId], stream.status == .fpwcsStreamStatusPending,
      let request = stream.request
    else { return [] }
    switch result {
    case .failure(let error):
      return finish(
        &stream, status: .fpwcsStreamStatusFailed, info: "Local error", localDetail: "\(error)")
    case .success(let sdp):
      if stream.stopRequested {
        let final: kFPWCSStreamStatus =
          stream.published ? .fpwcsStreamStatusUnpublished : .fpwcsStreamStatusStopped
        return finish(&stream, status: final, info: "Stopped by user", localDetail: nil)
      }
      stream.offerCreated = true
      stream.offerSent = true
      let sent = SDPCodecFilter.strip(codecs: request.stripCodecs, from: sdp)
      var effects: [SessionEffect] = [
        .send(ClientMessages.startStream(id: streamId, request: request, sdp: sent))
      ]
      if let answer = stream.bufferedAnswer {
        stream.bufferedAnswer = nil
        stream.answerApplied = true
        effects.append(.applyAnswer(streamId: streamId, sdp: answer))
      }
      streams[streamId] = stream
      return effects
    }
  }

  /// The server answer could not be applied: the stream fails locally.
  func answerFailed(streamId: String, error: MediaBackendError) -> [SessionEffect] {
    guard var stream = streams[streamId], !stream.status.isTerminal else { return [] }
    var effects = finish(
      &stream, status: .fpwcsStreamStatusFailed, info: "Local error", localDetail: "\(error)")
    if stream.offerSent { effects.insert(.send(ClientMessages.stopStream(stream)), at: 0) }
    return effects
  }

  /// A publishing stream's camera or microphone was lost (its media connection failed with
  /// `.captureDeviceLost`): the stream fails locally with `info` "Camera lost: <reason>" (or
  /// "Microphone lost: ..."), `unPublishStream` tells the server, and the media is released.
  /// FAILED is terminal: the stream is forgotten, so a later STOPPED/FAILED from the server
  /// for it is skipped. Other media failures are left to the server, which sees them too.
  func captureDeviceLost(streamId: String, kind: CaptureDevice.Kind, reason: String)
    -> [SessionEffect]
  {
    guard var stream = streams[streamId], stream.published, !stream.status.isTerminal else {
      return []
    }
    var effects: [SessionEffect] = []
    if stream.offerSent { effects.append(.send(ClientMessages.stopStream(stream))) }
    effects += finish(
      &stream, status: .fpwcsStreamStatusFailed,
      info: kind == .video ? "Camera lost" : "Microphone lost", localDetail: reason)
    return effects
  }

  /// `stop()` (wcs-protocol.md §3.1 client-side rules): New → Failed locally, nothing sent;
  /// Pending → stop once the server answered (or end locally if the offer was never sent);
  /// Publishing/Playing → `unPublishStream`/`stopStream` and release media at once;
  /// terminal → ignored.
  func stop(streamId: String) -> [SessionEffect] {
    guard var stream = streams[streamId] else { return [] }
    switch stream.status {
    case .fpwcsStreamStatusNew:
      return finish(
        &stream, status: .fpwcsStreamStatusFailed, info: "Stopped by user", localDetail: nil)
    case .fpwcsStreamStatusPending:
      stream.stopRequested = true
      streams[streamId] = stream
      return []
    case .fpwcsStreamStatusFailed, .fpwcsStreamStatusUnpublished, .fpwcsStreamStatusStopped:
      return []
    default:
      return [.send(ClientMessages.stopStream(stream)), .releaseMedia(streamId: streamId)]
    }
  }

  /// Mute/unmute a local track: remembered (applies when publishing starts), applied to the
  /// connection, and announced with `sendStreamEvent` while publishing.
  func setLocalMuted(streamId: String, audio: Bool, muted: Bool) -> [SessionEffect] {
    guard var stream = streams[streamId] else { return [] }
    if audio { stream.localAudioMuted = muted } else { stream.localVideoMuted = muted }
    streams[streamId] = stream
    var effects: [SessionEffect] = [.streamUpdated(stream)]
    if stream.status != .fpwcsStreamStatusNew, !stream.status.isTerminal {
      effects.append(.setTrackEnabled(streamId: streamId, audio: audio, enabled: !muted))
    }
    if stream.published, stream.status == .fpwcsStreamStatusPublishing {
      effects.append(
        .send(
          ClientMessages.streamEvent(
            id: streamId, type: Self.muteEventType(audio: audio, muted: muted), payload: nil)))
    }
    return effects
  }

  /// Stream `sendData`: a `sendStreamEvent` of type `data`, only while publishing.
  func sendStreamData(streamId: String, payload: JSONValue) throws(WCSError) -> [SessionEffect] {
    guard let stream = streams[streamId] else {
      throw .invalidStreamState(.fpwcsStreamStatusFailed, operation: "send data")
    }
    guard stream.published, stream.status == .fpwcsStreamStatusPublishing else {
      throw .invalidStreamState(stream.status, operation: "send data")
    }
    return [.send(ClientMessages.streamEvent(id: streamId, type: "data", payload: payload))]
  }

  /// Session `sendData`: answered by `DataStatusEvent` with the same `operationId`.
  func sendData(operationId: String, payload: JSONValue) throws(WCSError) -> [SessionEffect] {
    guard isEstablishedOrRegistered else {
      throw .invalidSessionState(status, operation: "send data")
    }
    pendingData.insert(operationId)
    return [
      .send(
        WCSMessage(
          name: "sendData", data: [["operationId": .string(operationId), "payload": payload]]))
    ]
  }

  /// `available(_:)`: asks whether `name` can be played, under a fresh id.
  func checkAvailable(checkId: String, name: String) throws(WCSError) -> [SessionEffect] {
    guard isEstablishedOrRegistered else {
      throw .invalidSessionState(status, operation: "check availability")
    }
    availabilityChecks.insert(checkId)
    return [
      .send(
        WCSMessage(
          name: "availableStream",
          data: [["mediaSessionId": .string(checkId), "name": .string(name)]]))
    ]
  }
}
