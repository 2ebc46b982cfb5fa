import WCSTransport

/// One publisher or player known to the core, keyed by its `mediaSessionId`.
struct ServerStream {
  enum Role: Equatable {
    case publisher
    /// A player of the publisher `source` (its `mediaSessionId`).
    case player(source: String)
  }

  var request: StreamRequest
  var role: Role
  var owner: WCSConnectionID
  /// The owner's `login` and `authToken`, kept for record naming after the session is gone.
  var ownerLogin: String
  var ownerSessionId: String
  var status: WCSStreamStatus = .pending
  var createDate: Int64
  /// The latest mute state set by the publisher's `sendStreamEvent` (§4.6); players get a copy
  /// when their publisher ends.
  var audioMuted = false
  var videoMuted = false
  var codecs = LocalServerMediaCodecs()
  var recordName: String?

  var mediaSessionId: String { request.mediaSessionId }
  var isPublisher: Bool { role == .publisher }
}

/// The stream object of `notifyStreamStatusEvent` (wcs-protocol.md §4.5, §8).
struct StreamObject {
  var stream: ServerStream
  var status: WCSStreamStatus
  var info: String?
  /// For players: the publisher's mute state; for publishers: their own.
  var audioMuted: Bool
  var videoMuted: Bool

  var json: JSONValue {
    let request = stream.request
    var object: [String: JSONValue] = [
      "mediaSessionId": .string(request.mediaSessionId),
      "name": .string(request.name),
      "published": .bool(stream.isPublisher),
      "hasVideo": .bool(request.hasVideo),
      "hasAudio": .bool(request.hasAudio),
      "status": .string(status.rawValue),
      "record": .bool(request.record),
      "width": .number(Double(request.width)),
      "height": .number(Double(request.height)),
      "bitrate": .number(Double(request.bitrate)),
      "minBitrate": .number(Double(request.minBitrate)),
      "maxBitrate": .number(Double(request.maxBitrate)),
      "quality": .number(Double(request.quality)),
      "createDate": .number(Double(stream.createDate)),
      "mediaProvider": "WebRTC",
      "transport": .string(request.transport),
      "cvoExtension": .bool(request.cvoExtension),
      "audioState": ["muted": .bool(audioMuted)],
      "videoState": ["muted": .bool(videoMuted)],
    ]
    if let info { object["info"] = .string(info) }
    if let recordName = stream.recordName { object["recordName"] = .string(recordName) }
    if let codec = stream.codecs.audioCodec { object["audioCodec"] = .string(codec) }
    if let codec = stream.codecs.videoCodec { object["videoCodec"] = .string(codec) }
    return .object(object)
  }
}

/// A stream whose `publishStream`/`playStream` failed before it existed: echoes what the client
/// sent so the client can route the FAILED status by `mediaSessionId` (null when there was none).
func rejectedStreamObject(
  _ object: [String: JSONValue], mediaSessionId: String?, published: Bool, info: String
) -> JSONValue {
  var echo: [String: JSONValue] = [
    "mediaSessionId": mediaSessionId.map { .string($0) } ?? .null,
    "published": .bool(published),
    "status": .string(WCSStreamStatus.failed.rawValue),
    "info": .string(info),
    "mediaProvider": "WebRTC",
  ]
  for key in ["name", "hasVideo", "hasAudio", "record"] {
    if let value = object[key] { echo[key] = value }
  }
  return .object(echo)
}
