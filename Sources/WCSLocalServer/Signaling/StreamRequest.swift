import WCSTransport

/// The fields of `publishStream` / `playStream` the server uses (wcs-protocol.md §3.1, §12).
/// Strings must be JSON strings; booleans and numbers are read leniently (`"true"`, `1`, `"0"`)
/// as SDKs differ (§2). Absent optional fields take the SDK defaults. Values outside
/// `WCSStreamRequestLimits` (negative or absurd bitrates and sizes, over-long names, names
/// with control characters) are refused.
struct StreamRequest: Equatable {
  var mediaSessionId: String
  var name: String
  var sdp: String
  var hasVideo: Bool
  var hasAudio: Bool
  var record: Bool
  var width: Int
  var height: Int
  var bitrate: Int
  var minBitrate: Int
  var maxBitrate: Int
  var quality: Int
  var transport: String
  var cvoExtension: Bool
  /// `custom.name`: the room of a room stream (wcs-rooms-and-calls.md §A.5), else `nil`.
  var roomName: String?
  /// `rtmpUrl`: where to re-publish the stream (publish only), else `nil`.
  var rtmpUrl: String?

  /// Reads the request. `mediaSessionId` is checked by the caller first (`mediaSessionId(of:)`)
  /// so a FAILED status can name it.
  init(object: [String: JSONValue], mediaSessionId: String) throws(WCSRequestError) {
    self.mediaSessionId = mediaSessionId
    name = try Self.requiredString("name", in: object)
    if name.isEmpty { throw .missingField("name") }
    sdp = try Self.requiredString("sdp", in: object)
    hasVideo = try Self.bool("hasVideo", in: object, default: true)
    hasAudio = try Self.bool("hasAudio", in: object, default: true)
    record = try Self.bool("record", in: object, default: false)
    width = try Self.int("width", in: object)
    height = try Self.int("height", in: object)
    bitrate = try Self.int("bitrate", in: object)
    minBitrate = try Self.int("minBitrate", in: object)
    maxBitrate = try Self.int("maxBitrate", in: object)
    quality = try Self.int("quality", in: object)
    transport = try Self.optionalString("transport", in: object) ?? "UDP"
    cvoExtension = try Self.bool("cvoExtension", in: object, default: false)
    roomName = object["custom"]?["name"]?.stringValue
    rtmpUrl = try Self.optionalString("rtmpUrl", in: object).flatMap { $0.isEmpty ? nil : $0 }
    try validate(constraints: object["constraints"])
  }

  /// `mediaSessionId` of a stream message: `nil` when absent or null (→ `MediaSessionId is
  /// null`); throws `wrongType` when it is not a string.
  static func mediaSessionId(of object: [String: JSONValue]) throws(WCSRequestError) -> String? {
    let id = try optionalString("mediaSessionId", in: object)
    return id?.isEmpty == true ? nil : id
  }

  static func optionalString(_ key: String, in object: [String: JSONValue])
    throws(WCSRequestError) -> String?
  {
    switch object[key] {
    case nil, .null?: return nil
    case .string(let s)?: return s
    default: throw .wrongType(field: key, expected: "a string")
    }
  }

  static func requiredString(_ key: String, in object: [String: JSONValue])
    throws(WCSRequestError) -> String
  {
    guard let value = try optionalString(key, in: object) else { throw .missingField(key) }
    return value
  }

  static func bool(_ key: String, in object: [String: JSONValue], default fallback: Bool)
    throws(WCSRequestError) -> Bool
  {
    guard let value = object[key], !value.isNull else { return fallback }
    guard let b = value.boolValue else { throw .wrongType(field: key, expected: "a boolean") }
    return b
  }

  static func int(_ key: String, in object: [String: JSONValue]) throws(WCSRequestError) -> Int {
    guard let value = object[key], !value.isNull else { return 0 }
    guard let n = value.intValue else { throw .wrongType(field: key, expected: "an integer") }
    return n
  }
}
