import WCSTransport

/// Builders of the client → server messages (wcs-protocol.md §1.3, §3.1, §12).
enum ClientMessages {
  /// `connection`: `appKey`, `mediaProviders: ["WebRTC"]`, version strings; `keepAlive`,
  /// `authToken`, `custom` and SIP fields only when set.
  static func connection(_ config: SessionConnectionConfig) -> WCSMessage {
    var object: [String: JSONValue] = [
      "appKey": .string(config.appKey),
      "mediaProviders": ["WebRTC"],
      "clientVersion": .string(config.clientVersion),
      "clientOSVersion": .string(config.clientOSVersion),
      "clientBrowserVersion": .string(config.clientBrowserVersion),
    ]
    if config.keepAlive { object["keepAlive"] = true }
    if let token = config.authToken { object["authToken"] = .string(token) }
    if let custom = config.custom { object["custom"] = .object(custom) }
    for (key, value) in config.sip { object[key] = value }
    return WCSMessage(name: "connection", data: [.object(object)])
  }

  /// `publishStream` or `playStream` with the offer.
  static func startStream(id: String, request: StreamRequest, sdp: String) -> WCSMessage {
    var object: [String: JSONValue] = [
      "mediaSessionId": .string(id),
      "name": .string(request.name),
      "published": .bool(request.published),
      "hasVideo": .bool(request.hasVideo),
      "hasAudio": .bool(request.hasAudio),
      "status": "PENDING",
      "record": .bool(request.published && request.record),
      "mediaProvider": "WebRTC",
      "sdp": .string(sdp),
      "bitrate": .number(Double(request.bitrate)),
      "minBitrate": .number(Double(request.minBitrate)),
      "maxBitrate": .number(Double(request.maxBitrate)),
      "constraints": request.constraints,
      "transport": .string(request.transport),
    ]
    if !request.published {
      object["width"] = .number(Double(request.width))
      object["height"] = .number(Double(request.height))
      object["quality"] = .number(Double(min(max(request.quality, 0), 100)))
    } else if let rtmpUrl = request.rtmpUrl {
      object["rtmpUrl"] = .string(rtmpUrl)
    }
    if let custom = request.custom { object["custom"] = .object(custom) }
    if request.cvoExtension { object["cvoExtension"] = true }
    return WCSMessage(
      name: request.published ? "publishStream" : "playStream", data: [.object(object)])
  }

  /// `unPublishStream` (publisher) or `stopStream` (player) with the current status.
  static func stopStream(_ stream: StreamState) -> WCSMessage {
    let object: [String: JSONValue] = [
      "mediaSessionId": .string(stream.id),
      "name": .string(stream.name),
      "published": .bool(stream.published),
      "hasVideo": true,
      "hasAudio": true,
      "status": .string(FPWCSApi2Model.streamStatus(toString: stream.status)),
      "record": false,
    ]
    return WCSMessage(
      name: stream.published ? "unPublishStream" : "stopStream", data: [.object(object)])
  }

  /// `sendStreamEvent` `{mediaSessionId, type, payload?}`.
  static func streamEvent(id: String, type: String, payload: JSONValue?) -> WCSMessage {
    var object: [String: JSONValue] = ["mediaSessionId": .string(id), "type": .string(type)]
    if let payload { object["payload"] = payload }
    return WCSMessage(name: "sendStreamEvent", data: [.object(object)])
  }
}
