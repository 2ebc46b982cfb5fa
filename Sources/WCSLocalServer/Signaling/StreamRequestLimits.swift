import WCSTransport

/// The values the local server accepts in `publishStream`/`playStream`. wcs-protocol.md §3.1
/// gives the fields' types and units but no ranges, so these bounds are the local server's: a
/// value outside them FAILs that one stream with `Bad request: <field> ...` (the way the core
/// reports any malformed field); the session and its other streams go on.
public enum WCSStreamRequestLimits {
  /// Longest stream `name`, in UTF-8 bytes: room for any real name, `vod://` path or RTSP URL,
  /// while names stay bounded in statuses, logs and record file names (Linux `NAME_MAX` 255).
  public static let maxNameUTF8Bytes = 256
  /// Highest `bitrate`, `minBitrate`, `maxBitrate`: 100 000 kbit/s (100 Mbit/s), far above any
  /// WebRTC stream; 0 still means "no limit / as published" (§3.1).
  public static let maxBitrateKbps = 100_000
  /// Largest `width`/`height` in pixels (VP8 frame sizes are 14-bit, RFC 6386 §9.1).
  public static let maxDimension = 16_384
  /// Highest frame rate in `constraints.video` (`frameRate`, `minFrameRate`, `maxFrameRate`,
  /// when given as numbers), frames per second.
  public static let maxFrameRate = 240
  /// Highest `quality` (0...100, §3.1).
  public static let maxQuality = 100

  /// Frame-rate members of `constraints.video` that are checked (SDKs differ, §3.1).
  static let frameRateFields = ["frameRate", "minFrameRate", "maxFrameRate"]
}

extension StreamRequest {
  /// Checks the fields against `WCSStreamRequestLimits`.
  /// - Throws: `WCSRequestError.invalidValue` naming the first field out of range.
  func validate(constraints: JSONValue?) throws(WCSRequestError) {
    try Self.validateName(name)
    for (field, value) in [
      ("bitrate", bitrate), ("minBitrate", minBitrate), ("maxBitrate", maxBitrate),
    ] {
      try Self.check(
        field, Double(value), max: WCSStreamRequestLimits.maxBitrateKbps, unit: " kbit/s")
    }
    for (field, value) in [("width", width), ("height", height)] {
      try Self.check(
        field, Double(value), max: WCSStreamRequestLimits.maxDimension, unit: " pixels")
    }
    try Self.check("quality", Double(quality), max: WCSStreamRequestLimits.maxQuality, unit: "")
    guard let video = constraints?.objectValue?["video"]?.objectValue else { return }
    for field in WCSStreamRequestLimits.frameRateFields {
      // Browser-style constraint objects (`{"ideal": 30}`) are not numbers and pass as given.
      guard case .number(let rate)? = video[field] else { continue }
      try Self.check(
        "constraints.video." + field, rate, max: WCSStreamRequestLimits.maxFrameRate, unit: " fps")
    }
  }

  /// A name is at most `maxNameUTF8Bytes` long and has no control character (Unicode `Cc`:
  /// U+0000–U+001F, U+007F–U+009F), which would corrupt logs and file names.
  static func validateName(_ name: String) throws(WCSRequestError) {
    try checkName(
      name, field: "name", maxUTF8Bytes: WCSStreamRequestLimits.maxNameUTF8Bytes)
  }

  static func check(_ field: String, _ value: Double, max: Int, unit: String)
    throws(WCSRequestError)
  {
    guard value.isFinite, value >= 0, value <= Double(max) else {
      let shown = value.rounded() == value && abs(value) < 9e15 ? "\(Int(value))" : "\(value)"
      throw .invalidValue(
        field: field, reason: "must be between 0 and \(max)\(unit), got \(shown)")
    }
  }
}
