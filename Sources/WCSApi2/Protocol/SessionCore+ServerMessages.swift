import Foundation
import WCSTransport

/// Server → client messages (wcs-protocol.md §4): each updates state and returns effects.
extension SessionCore {

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
      guard status == .fpwcsSessionStatusEstablished || status == .fpwcsSessionStatusUnregistered
      else { return [] }
      status = .fpwcsSessionStatusRegistered
      return [.sessionStatus(status)]
    case "fail": return onFail(message)
    case "notifyStreamStatusEvent", "notifyVideoFormat": return onStreamStatus(message)
    case "notifyStreamEvent": return onStreamEvent(message)
    case "setRemoteSDP": return callRemoteSDP(message) ?? onRemoteSDP(message)
    case "availableStream": return onAvailable(message)
    case "DataStatusEvent": return onDataStatus(message)
    case "OnDataEvent":
      guard let object = message.argument?.objectValue else {
        return [.skipped("OnDataEvent without an object")]
      }
      return [.appData(operationId: object["operationId"]?.stringValue, payload: object["payload"])]
    case "inboundVideoRate", "outboundVideoRate": return onVideoRate(message)
    default: return receiveCallMessage(message) ?? []
    }
  }

  fileprivate func onUserData(_ message: WCSMessage) -> [SessionEffect] {
    guard status == .fpwcsSessionStatusPending else { return [] }
    guard let object = message.argument?.objectValue else {
      return [.skipped("getUserData without an object")]
    }
    userData = object
    if let token = object["authToken"]?.stringValue { authToken = token }
    status = .fpwcsSessionStatusEstablished
    return [.sessionStatus(status)]
  }

  fileprivate func onFail(_ message: WCSMessage) -> [SessionEffect] {
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
    case "CallStatusEvent":
      return calls.statusMessage(name: "fail", object).map(SessionEffect.call)
    case "RegistrationStatusEvent":
      // §B.2: the registrar refused (AUTHENTICATION_FAIL) or dropped the account: Unregistered,
      // and the session stays up.
      guard status == .fpwcsSessionStatusEstablished || status == .fpwcsSessionStatusRegistered
      else { return [] }
      status = .fpwcsSessionStatusUnregistered
      return [.sessionStatus(status)]
    case "StreamStatusEvent":
      guard let id = object["id"]?.stringValue ?? object["mediaSessionId"]?.stringValue,
        var stream = streams[id], !stream.status.isTerminal
      else { return [.skipped("fail for an unknown stream")] }
      return finish(&stream, status: .fpwcsStreamStatusFailed, info: info, localDetail: nil)
    default:
      return [.skipped("fail: \(info ?? "no info")")]
    }
  }

  fileprivate func onStreamStatus(_ message: WCSMessage) -> [SessionEffect] {
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

  fileprivate func onStreamEvent(_ message: WCSMessage) -> [SessionEffect] {
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

  fileprivate func onRemoteSDP(_ message: WCSMessage) -> [SessionEffect] {
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
    guard !stream.answerApplied else {
      return [.skipped("setRemoteSDP again for stream \(id): its answer is already applied")]
    }
    stream.answerApplied = true
    streams[id] = stream
    return [.applyAnswer(streamId: id, sdp: sdp)]
  }

  fileprivate func onAvailable(_ message: WCSMessage) -> [SessionEffect] {
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

  fileprivate func onDataStatus(_ message: WCSMessage) -> [SessionEffect] {
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

  fileprivate func onVideoRate(_ message: WCSMessage) -> [SessionEffect] {
    guard let object = message.argument?.objectValue,
      let id = object["mediaSessionId"]?.stringValue,
      var stream = streams[id], let rate = object["videoRate"]?.intValue
    else { return [] }
    stream.remoteBitrate = rate
    streams[id] = stream
    return [.streamUpdated(stream), .serverVideoRate(streamId: id, bitrate: rate)]
  }
}
