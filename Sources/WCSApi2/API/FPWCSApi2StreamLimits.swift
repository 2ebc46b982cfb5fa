/// What `createStream` and `publish()`/`play()` accept in `FPWCSApi2StreamOptions` (Linux
/// addition; the iOS SDK passes anything on to the server). A value outside these bounds throws
/// `WCSError.invalidOption(field:reason:)` naming the field, before anything is sent.
public enum FPWCSApi2StreamLimits {
  /// Longest stream `name`, in UTF-8 bytes (the local server's limit too).
  public static let maxNameUTF8Bytes = 256
  /// Highest video `bitrate`, `minBitrate`, `maxBitrate`: 100 000 kbit/s (100 Mbit/s).
  public static let maxVideoBitrateKbps = 100_000
  /// Highest audio `bitrate`: 100 000 000 bit/s (100 Mbit/s; the audio field is in bit/s).
  public static let maxAudioBitrate = 100_000_000
  /// Largest `minWidth`/`maxWidth`/`minHeight`/`maxHeight`, pixels (VP8 sizes are 14-bit,
  /// RFC 6386 §9.1).
  public static let maxDimension = 16_384
  /// Highest `minFrameRate`/`maxFrameRate`, frames per second.
  public static let maxFrameRate = 240
  /// Highest play `quality` (0...100, wcs-protocol.md §3.1; the local server's limit too).
  public static let maxQuality = 100

  /// Checks a stream name: not longer than `maxNameUTF8Bytes`, no control character (Unicode
  /// `Cc`: U+0000–U+001F, U+007F–U+009F).
  /// - Throws: `WCSError.invalidOption(field: "name", ...)`.
  static func validate(name: String) throws(WCSError) {
    let bytes = name.utf8.count
    if bytes > maxNameUTF8Bytes {
      throw .invalidOption(
        field: "name", reason: "must be at most \(maxNameUTF8Bytes) UTF-8 bytes, got \(bytes)")
    }
    if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
      throw .invalidOption(field: "name", reason: "must not contain control characters")
    }
  }

  /// Checks that `constraints` ask for some media (an offer without any media section can only
  /// be refused) and every number against its range (0 = default/unconstrained).
  /// - Throws: `WCSError.invalidOption` naming `constraints` when both parts are `nil`, else the
  ///   first field out of range, e.g. `constraints.video.maxBitrate`.
  static func validate(_ constraints: FPWCSApi2MediaConstraints) throws(WCSError) {
    if constraints.audio == nil, constraints.video == nil {
      throw .invalidOption(
        field: "constraints", reason: "must ask for audio or video (both are nil)")
    }
    if let audio = constraints.audio {
      try check("constraints.audio.bitrate", audio.bitrate, max: maxAudioBitrate, unit: "bit/s")
    }
    guard let video = constraints.video else { return }
    let checks: [(String, Int, Int, String)] = [
      ("minWidth", video.minWidth, maxDimension, "pixels"),
      ("maxWidth", video.maxWidth, maxDimension, "pixels"),
      ("minHeight", video.minHeight, maxDimension, "pixels"),
      ("maxHeight", video.maxHeight, maxDimension, "pixels"),
      ("minFrameRate", video.minFrameRate, maxFrameRate, "fps"),
      ("maxFrameRate", video.maxFrameRate, maxFrameRate, "fps"),
      ("bitrate", video.bitrate, maxVideoBitrateKbps, "kbit/s"),
      ("minBitrate", video.minBitrate, maxVideoBitrateKbps, "kbit/s"),
      ("maxBitrate", video.maxBitrate, maxVideoBitrateKbps, "kbit/s"),
      ("quality", video.quality, maxQuality, ""),
    ]
    for (field, value, max, unit) in checks {
      try check("constraints.video." + field, value, max: max, unit: unit)
    }
  }

  private static func check(_ field: String, _ value: Int, max: Int, unit: String)
    throws(WCSError)
  {
    guard (0...max).contains(value) else {
      throw .invalidOption(
        field: field,
        reason: "must be between 0 and \(max)\(unit.isEmpty ? "" : " " + unit), got \(value)")
    }
  }
}
