import Foundation
import WCSMedia
import WCSTransport

/// What `connection` carries (wcs-protocol.md §1.3).
struct SessionConnectionConfig: Sendable, Equatable {
  var appKey = "defaultApp"
  var custom: [String: JSONValue]?
  var keepAlive = false
  var authToken: String?
  var sip: [String: JSONValue] = [:]
  var clientVersion = "2.0"
  var clientOSVersion = "Linux"
  var clientBrowserVersion = "FPWCSLinux/0.1"
  /// Missed-ping detection (wcs-protocol.md §7.1 `receiveProbes`): this many probe intervals
  /// without a server `ping` fail the session; 0 = off.
  var receiveProbes = 0
}

/// An effect the session core asks its driver to carry out, in order.
enum SessionEffect: Sendable {
  /// Open the signalling transport (the driver calls `transportOpened()` when it is up).
  case openTransport
  /// Send one message.
  case send(WCSMessage)
  /// Close the signalling transport (code 1000).
  case closeTransport
  /// The session status changed: fire its callback.
  case sessionStatus(kFPWCSSessionStatus)
  /// A stream status callback fires (a real change or an event-like status such as RESIZE);
  /// the state is the stream's state afterwards.
  case streamStatus(kFPWCSStreamStatus, StreamState)
  /// Stream state changed without a callback (info, mute state, record name).
  case streamUpdated(StreamState)
  /// Ask the stream's media connection for the offer (driver calls `offerCreated`).
  case createOffer(streamId: String)
  /// Apply the server's SDP answer (driver calls `answerApplied` on failure).
  case applyAnswer(streamId: String, sdp: String)
  /// Enable or disable a local track.
  case setTrackEnabled(streamId: String, audio: Bool, enabled: Bool)
  /// Close the stream's media connection and forget it.
  case releaseMedia(streamId: String)
  /// A `notifyStreamEvent` for a stream.
  case streamEvent(streamId: String, type: String, payload: JSONValue?)
  /// The answer to an `availableStream` check.
  case availability(checkId: String, available: Bool, info: String?)
  /// The answer to a session `sendData` (`DataStatusEvent`), or its rejection on disconnect.
  case dataStatus(
    operationId: String, accepted: Bool, payload: JSONValue?, status: String?, info: String?)
  /// App data pushed by the server (`OnDataEvent`).
  case appData(operationId: String?, payload: JSONValue?)
  /// The server's view of a stream's video bitrate (`inbound/outboundVideoRate`), bits per second.
  case serverVideoRate(streamId: String, bitrate: Int)
  /// A frame or message was skipped (not JSON, wrong shape, unknown id): for diagnostics only.
  case skipped(String)
}

/// The WCS client session state machine (wcs-protocol.md §1–§7, §9b), Sans-I/O: inputs are API
/// calls and transport events, outputs are `SessionEffect`s. Not thread-safe: its owner confines
/// it to one serial queue.
final class SessionCore {
  private(set) var status: kFPWCSSessionStatus = .fpwcsSessionStatusNew
  /// Why the session failed (the server's `info`, or the transport's reason).
  private(set) var failureReason: String?
  /// The failure came from the server refusing the connection (`fail`, `ConnectionStatusEvent`).
  private(set) var refusedByServer = false
  private(set) var authToken: String?
  private(set) var serverVersion: String?
  private(set) var userData: [String: JSONValue]?
  private(set) var streams: [String: StreamState] = [:]
  private var streamOrder: [String] = []
  /// `setRemoteSDP` for ids not (yet) known, oldest first; bounded.
  private(set) var unclaimedRemoteSDP: [(id: String, sdp: String)] = []
  private var availabilityChecks: Set<String> = []
  private var pendingData: Set<String> = []
  /// Probe intervals since the last server `ping`.
  private(set) var missedProbes = 0
  var config: SessionConnectionConfig

  /// How many unclaimed `setRemoteSDP` answers are kept.
  static let unclaimedRemoteSDPLimit = 16

  init(config: SessionConnectionConfig) {
    self.config = config
  }

  /// Ids of the live streams, in creation order.
  var streamIds: [String] { streamOrder.filter { streams[$0] != nil } }

  // MARK: API inputs

  /// `connect()`: only from New, Disconnected or Failed (a re-connect).
  func connect() -> [SessionEffect] {
    switch status {
    case .fpwcsSessionStatusNew, .fpwcsSessionStatusDisconnected, .fpwcsSessionStatusFailed:
      status = .fpwcsSessionStatusPending
      failureReason = nil
      refusedByServer = false
      missedProbes = 0
      userData = nil
      return [.sessionStatus(status), .openTransport]
    default:
      return []
    }
  }

  /// The transport is open: send `connection` (wcs-protocol.md §1.2 step 2).
  func transportOpened() -> [SessionEffect] {
    guard status == .fpwcsSessionStatusPending else { return [] }
    return [.send(ClientMessages.connection(config))]
  }

  /// `disconnect()`: close the socket; the session is Disconnected at once.
  func disconnect() -> [SessionEffect] {
    switch status {
    case .fpwcsSessionStatusNew, .fpwcsSessionStatusDisconnected, .fpwcsSessionStatusFailed:
      return []
    default:
      return end(with: .fpwcsSessionStatusDisconnected, reason: nil, closeTransport: true)
    }
  }

  /// The transport closed by itself: Disconnected once established, Failed before.
  func transportClosed(code: Int, reason: String) -> [SessionEffect] {
    switch status {
    case .fpwcsSessionStatusPending:
      let text =
        "connection closed before ESTABLISHED (code \(code)\(reason.isEmpty ? "" : ", \(reason)"))"
      return end(with: .fpwcsSessionStatusFailed, reason: text, closeTransport: false)
    case .fpwcsSessionStatusEstablished, .fpwcsSessionStatusRegistered,
      .fpwcsSessionStatusUnregistered:
      return end(with: .fpwcsSessionStatusDisconnected, reason: nil, closeTransport: false)
    default:
      return []
    }
  }

  /// The transport failed: Failed with its reason.
  func transportFailed(reason: String) -> [SessionEffect] {
    switch status {
    case .fpwcsSessionStatusNew, .fpwcsSessionStatusDisconnected, .fpwcsSessionStatusFailed:
      return []
    default:
      return end(with: .fpwcsSessionStatusFailed, reason: reason, closeTransport: false)
    }
  }

  /// One probe interval passed (the driver's timer, every `probesInterval`): after
  /// `receiveProbes` intervals without a `ping` the session fails and the socket is closed.
  func probeTick() -> [SessionEffect] {
    guard config.receiveProbes > 0,
      status == .fpwcsSessionStatusEstablished || status == .fpwcsSessionStatusRegistered
    else { return [] }
    missedProbes += 1
    guard missedProbes >= config.receiveProbes else { return [] }
    return end(
      with: .fpwcsSessionStatusFailed,
      reason: "no ping from the server in \(missedProbes) probe intervals",
      closeTransport: true)
  }

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
    guard status == .fpwcsSessionStatusEstablished || status == .fpwcsSessionStatusRegistered else {
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
    guard status == .fpwcsSessionStatusEstablished || status == .fpwcsSessionStatusRegistered else {
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
    guard status == .fpwcsSessionStatusEstablished || status == .fpwcsSessionStatusRegistered else {
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

  // MARK: server messages

  /// One text frame from the server. Frames that are not messages, messages of the wrong shape
  /// and unknown names are skipped; the session goes on.
  func receive(_ text: String) -> [SessionEffect] {
    let message: WCSMessage
    do {
      message = try WCSMessageCodec.decode(text)
    } catch {
      return [.skipped("\(error)")]
    }
    switch message.name {
    case "ping":
      missedProbes = 0
      return [.send(WCSMessage(name: "pong"))]
    case "getUserData": return onUserData(message)
    case "getVersion":
      serverVersion = message[0]?.stringValue
      return []
    case "registered":
      guard status == .fpwcsSessionStatusEstablished else { return [] }
      status = .fpwcsSessionStatusRegistered
      return [.sessionStatus(status)]
    case "fail": return onFail(message)
    case "notifyStreamStatusEvent", "notifyVideoFormat": return onStreamStatus(message)
    case "notifyStreamEvent": return onStreamEvent(message)
    case "setRemoteSDP": return onRemoteSDP(message)
    case "availableStream": return onAvailable(message)
    case "DataStatusEvent": return onDataStatus(message)
    case "OnDataEvent":
      guard let object = message.argument?.objectValue else {
        return [.skipped("OnDataEvent without an object")]
      }
      return [.appData(operationId: object["operationId"]?.stringValue, payload: object["payload"])]
    case "inboundVideoRate", "outboundVideoRate": return onVideoRate(message)
    default: return []
    }
  }

  private func onUserData(_ message: WCSMessage) -> [SessionEffect] {
    guard status == .fpwcsSessionStatusPending else { return [] }
    guard let object = message.argument?.objectValue else {
      return [.skipped("getUserData without an object")]
    }
    userData = object
    if let token = object["authToken"]?.stringValue { authToken = token }
    status = .fpwcsSessionStatusEstablished
    return [.sessionStatus(status)]
  }

  private func onFail(_ message: WCSMessage) -> [SessionEffect] {
    guard let object = message.argument?.objectValue else {
      return [.skipped("fail without an object")]
    }
    let info = object["info"]?.stringValue
    switch object["apiMethod"]?.stringValue {
    case "ConnectionStatusEvent":
      guard status != .fpwcsSessionStatusDisconnected, status != .fpwcsSessionStatusFailed else {
        return []
      }
      refusedByServer = true
      return end(
        with: .fpwcsSessionStatusFailed, reason: info ?? "connection refused", closeTransport: true)
    case "StreamStatusEvent":
      guard let id = object["id"]?.stringValue ?? object["mediaSessionId"]?.stringValue,
        var stream = streams[id], !stream.status.isTerminal
      else { return [.skipped("fail for an unknown stream")] }
      return finish(&stream, status: .fpwcsStreamStatusFailed, info: info, localDetail: nil)
    default:
      return [.skipped("fail: \(info ?? "no info")")]
    }
  }

  private func onStreamStatus(_ message: WCSMessage) -> [SessionEffect] {
    guard let object = message.argument?.objectValue, let id = object["mediaSessionId"]?.stringValue
    else {
      return [.skipped("stream status without mediaSessionId")]
    }
    guard var stream = streams[id] else { return [.skipped("status for unknown stream \(id)")] }
    guard let text = object["status"]?.stringValue,
      let status = FPWCSApi2Model.streamStatus(from: text)
    else {
      return [.skipped("stream status without a known status")]
    }
    if let recordName = object["recordName"]?.stringValue, !recordName.isEmpty {
      stream.recordName = recordName
    }
    if let muted = object["audioState"]?["muted"]?.boolValue { stream.remoteAudioMuted = muted }
    if let muted = object["videoState"]?["muted"]?.boolValue { stream.remoteVideoMuted = muted }
    let info = object["info"]?.stringValue
    switch status {
    case .fpwcsStreamStatusResize:
      stream.streamerVideoWidth =
        object["streamerVideoWidth"]?.intValue ?? stream.streamerVideoWidth
      stream.streamerVideoHeight =
        object["streamerVideoHeight"]?.intValue ?? stream.streamerVideoHeight
      streams[id] = stream
      return [.streamStatus(status, stream)]
    case .fpwcsStreamStatusNotEnoughtBandwidth:
      Self.parseBandwidth(info, into: &stream)
      streams[id] = stream
      return [.streamStatus(status, stream)]
    case .fpwcsStreamStatusSnaphotComplete:
      streams[id] = stream
      return [.streamStatus(status, stream)]
    default:
      break
    }
    guard !stream.status.isTerminal else { return [] }
    if status.isTerminal { return finish(&stream, status: status, info: info, localDetail: nil) }
    stream.status = status
    stream.info = info
    stream.statusInfo = FPWCSApi2Model.streamStatusInfo(from: info)
    streams[id] = stream
    var effects: [SessionEffect] = [.streamStatus(status, stream)]
    let isUp = status == .fpwcsStreamStatusPublishing || status == .fpwcsStreamStatusPlaying
    if isUp, stream.stopRequested {
      effects.append(.send(ClientMessages.stopStream(stream)))
      effects.append(.releaseMedia(streamId: id))
    } else if status == .fpwcsStreamStatusPublishing {
      if stream.localAudioMuted {
        effects.append(.send(ClientMessages.streamEvent(id: id, type: "audioMuted", payload: nil)))
      }
      if stream.localVideoMuted {
        effects.append(.send(ClientMessages.streamEvent(id: id, type: "videoMuted", payload: nil)))
      }
    }
    return effects
  }

  private func onStreamEvent(_ message: WCSMessage) -> [SessionEffect] {
    guard let object = message.argument?.objectValue,
      let id = object["mediaSessionId"]?.stringValue,
      let type = object["type"]?.stringValue
    else { return [.skipped("stream event without mediaSessionId or type")] }
    guard var stream = streams[id] else { return [.skipped("event for unknown stream \(id)")] }
    let payload = object["payload"]
    var effects: [SessionEffect] = []
    switch type {
    case "audioMuted": stream.remoteAudioMuted = true
    case "audioUnmuted": stream.remoteAudioMuted = false
    case "videoMuted": stream.remoteVideoMuted = true
    case "videoUnmuted": stream.remoteVideoMuted = false
    case "resize":
      stream.streamerVideoWidth =
        payload?["streamerVideoWidth"]?.intValue ?? stream.streamerVideoWidth
      stream.streamerVideoHeight =
        payload?["streamerVideoHeight"]?.intValue ?? stream.streamerVideoHeight
      effects.append(.streamStatus(.fpwcsStreamStatusResize, stream))
    case "notEnoughBandwidth":
      Self.parseBandwidth(payload?["info"]?.stringValue, into: &stream)
      effects.append(.streamStatus(.fpwcsStreamStatusNotEnoughtBandwidth, stream))
    default: break
    }
    streams[id] = stream
    if effects.isEmpty { effects.append(.streamUpdated(stream)) }
    effects.append(.streamEvent(streamId: id, type: type, payload: payload))
    return effects
  }

  private func onRemoteSDP(_ message: WCSMessage) -> [SessionEffect] {
    guard let id = message[0]?.stringValue, let sdp = message[1]?.stringValue else {
      return [.skipped("setRemoteSDP without [id, sdp]")]
    }
    // isInitiator false means the server offers (incoming SIP calls, not streams).
    if let initiator = message[2]?.boolValue, !initiator, streams[id] != nil {
      return [.skipped("setRemoteSDP offer for stream \(id)")]
    }
    guard var stream = streams[id] else {
      unclaimedRemoteSDP.removeAll { $0.id == id }
      unclaimedRemoteSDP.append((id, sdp))
      if unclaimedRemoteSDP.count > Self.unclaimedRemoteSDPLimit {
        unclaimedRemoteSDP.removeFirst()
      }
      return []
    }
    guard !stream.status.isTerminal else { return [] }
    guard stream.offerCreated else {
      stream.bufferedAnswer = sdp
      streams[id] = stream
      return []
    }
    return [.applyAnswer(streamId: id, sdp: sdp)]
  }

  private func onAvailable(_ message: WCSMessage) -> [SessionEffect] {
    guard let object = message.argument?.objectValue,
      let id = object["id"]?.stringValue ?? object["mediaSessionId"]?.stringValue,
      availabilityChecks.remove(id) != nil
    else { return [.skipped("availableStream for an unknown check")] }
    return [
      .availability(
        checkId: id, available: object["status"]?.boolValue ?? false,
        info: object["info"]?.stringValue)
    ]
  }

  private func onDataStatus(_ message: WCSMessage) -> [SessionEffect] {
    guard let object = message.argument?.objectValue, let id = object["operationId"]?.stringValue,
      pendingData.remove(id) != nil
    else { return [.skipped("DataStatusEvent for an unknown operation")] }
    let statusText = object["status"]?.stringValue
    return [
      .dataStatus(
        operationId: id, accepted: statusText?.uppercased() == "ACCEPTED",
        payload: object["payload"],
        status: statusText, info: object["info"]?.stringValue)
    ]
  }

  private func onVideoRate(_ message: WCSMessage) -> [SessionEffect] {
    guard let object = message.argument?.objectValue,
      let id = object["mediaSessionId"]?.stringValue,
      var stream = streams[id], let rate = object["videoRate"]?.intValue
    else { return [] }
    stream.remoteBitrate = rate
    streams[id] = stream
    return [.streamUpdated(stream), .serverVideoRate(streamId: id, bitrate: rate)]
  }

  // MARK: helpers

  /// Ends the session: every live stream fails locally (so that when the session callback runs
  /// each stream is already final), pending data is rejected, then the session status fires.
  private func end(with final: kFPWCSSessionStatus, reason: String?, closeTransport: Bool)
    -> [SessionEffect]
  {
    var effects: [SessionEffect] = closeTransport ? [.closeTransport] : []
    for id in streamIds {
      guard var stream = streams[id], !stream.status.isTerminal else { continue }
      effects += finish(
        &stream, status: .fpwcsStreamStatusFailed, info: "Stopped by session disconnect",
        localDetail: nil)
    }
    for id in pendingData.sorted() {
      effects.append(
        .dataStatus(
          operationId: id, accepted: false, payload: nil, status: "FAILED", info: "session ended"))
    }
    pendingData.removeAll()
    availabilityChecks.removeAll()
    status = final
    failureReason = reason
    effects.append(.sessionStatus(final))
    return effects
  }

  /// Puts a stream in a terminal status, releases its media and forgets it.
  private func finish(
    _ stream: inout StreamState, status: kFPWCSStreamStatus, info: String?, localDetail: String?
  ) -> [SessionEffect] {
    stream.status = status
    stream.info = localDetail.map { "\(info ?? ""): \($0)" } ?? info
    stream.statusInfo = FPWCSApi2Model.streamStatusInfo(from: info)
    streams[stream.id] = nil
    streamOrder.removeAll { $0 == stream.id }
    return [.releaseMedia(streamId: stream.id), .streamStatus(status, stream)]
  }

  private static func parseBandwidth(_ info: String?, into stream: inout StreamState) {
    guard let parts = info?.split(separator: "/"), parts.count == 2,
      let remote = Int(parts[0].trimmingCharacters(in: .whitespaces)),
      let network = Int(parts[1].trimmingCharacters(in: .whitespaces))
    else { return }
    stream.remoteBitrate = remote
    stream.networkBandwidth = network
  }

  static func muteEventType(audio: Bool, muted: Bool) -> String {
    (audio ? "audio" : "video") + (muted ? "Muted" : "Unmuted")
  }
}
