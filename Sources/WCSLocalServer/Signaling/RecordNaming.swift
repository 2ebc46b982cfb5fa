import Foundation

/// Builds record file names from WCS's `stream_record_policy_template` (wcs-protocol.md §6).
///
/// Placeholders: `{streamName}`, `{mediaSessionId}`, `{login}`, `{sessionId}` (base64url of the
/// session id, RFC 4648 §5, no padding, so it cannot contain `/`), `{startTime}` / `{endTime}`
/// (UTC `yyyy-MM-dd-HH-mm-ss`), `{startTimeMillis}` / `{endTimeMillis}` (ms since the Unix epoch),
/// `{duration}` (ms), `{audioCodec}`, `{videoCodec}`. End placeholders expand to `""` while the
/// end is unknown. Unknown `{...}` text is kept literally.
public enum RecordNaming {
  /// WCS's documented default template (§6).
  public static let defaultTemplate = "stream-{mediaSessionId}-{login}"
  /// Linux `NAME_MAX`: the longest file name in bytes, extension included.
  public static let maxFileNameBytes = 255

  /// Values the placeholders expand to.
  public struct Context: Sendable, Equatable {
    /// Stream name as published.
    public var streamName: String
    /// The publisher's `mediaSessionId`.
    public var mediaSessionId: String
    /// The session's login (`custom.login` or `sipLogin` of `connection`), often empty.
    public var login: String
    /// The session id (the `authToken` this server issued).
    public var sessionId: String
    /// Recording start, ms since the Unix epoch.
    public var startMillis: Int64
    /// Recording end, ms since the Unix epoch; `nil` while recording.
    public var endMillis: Int64?
    /// Codec names (`"opus"`, `"VP8"`), empty when unknown.
    public var audioCodec: String
    /// Video codec name (`"VP8"`), empty when unknown.
    public var videoCodec: String

    /// Memberwise initializer.
    public init(
      streamName: String, mediaSessionId: String, login: String = "", sessionId: String = "",
      startMillis: Int64, endMillis: Int64? = nil, audioCodec: String = "",
      videoCodec: String = ""
    ) {
      self.streamName = streamName
      self.mediaSessionId = mediaSessionId
      self.login = login
      self.sessionId = sessionId
      self.startMillis = startMillis
      self.endMillis = endMillis
      self.audioCodec = audioCodec
      self.videoCodec = videoCodec
    }
  }

  /// Replaces every known placeholder of `template`; no sanitising.
  public static func expand(_ template: String, context: Context) -> String {
    let values: [String: String] = [
      "streamName": context.streamName,
      "mediaSessionId": context.mediaSessionId,
      "login": context.login,
      "sessionId": base64URL(context.sessionId),
      "startTime": utcStamp(context.startMillis),
      "startTimeMillis": String(context.startMillis),
      "endTime": context.endMillis.map(utcStamp) ?? "",
      "endTimeMillis": context.endMillis.map { String($0) } ?? "",
      "duration": context.endMillis.map { String(max(0, $0 - context.startMillis)) } ?? "",
      "audioCodec": context.audioCodec,
      "videoCodec": context.videoCodec,
    ]
    var result = ""
    var rest = Substring(template)
    while let open = rest.firstIndex(of: "{") {
      result += rest[..<open]
      let afterOpen = rest.index(after: open)
      guard let close = rest[afterOpen...].firstIndex(of: "}") else {
        rest = rest[open...]
        break
      }
      let key = String(rest[afterOpen..<close])
      if let value = values[key] {
        result += value
      } else {
        result += rest[open...close]
      }
      rest = rest[rest.index(after: close)...]
    }
    result += rest
    return result
  }

  /// A safe file name: the expanded template with `/`, `\`, NUL and control characters replaced
  /// by `_`, a leading `.` replaced by `_` (no hidden files, no `..`), then `.` + `fileExtension`
  /// (omitted when empty), truncated on a character boundary to `maxFileNameBytes` UTF-8 bytes.
  /// An empty expansion becomes `stream`.
  public static func fileName(template: String, fileExtension: String, context: Context)
    -> String
  {
    var base = String(
      expand(template, context: context).unicodeScalars.map { scalar -> Character in
        if scalar == "/" || scalar == "\\" || scalar.value < 0x20 || scalar.value == 0x7F {
          return "_"
        }
        return Character(scalar)
      })
    if base.isEmpty { base = "stream" }
    if base.hasPrefix(".") { base = "_" + base.dropFirst() }
    let suffix = fileExtension.isEmpty ? "" : "." + fileExtension
    let budget = max(1, maxFileNameBytes - suffix.utf8.count)
    while base.utf8.count > budget { base.removeLast() }
    return base + suffix
  }

  /// `name` when `isTaken` says it is free, else the first free `<stem>-<n>.<extension>`
  /// (n = 1, 2, …; the stem cut on a character boundary so the name stays within
  /// `maxFileNameBytes`), so a record never replaces another. After `maxSuffix` taken names, a
  /// random suffix.
  public static func uniqueFileName(
    _ name: String, maxSuffix: Int = 9999, isTaken: (String) -> Bool
  ) -> String {
    guard isTaken(name) else { return name }
    var stem = Substring(name)
    var fileExtension = ""
    if let dot = name.lastIndex(of: "."), dot != name.startIndex {
      stem = name[..<dot]
      fileExtension = String(name[dot...])
    }
    func candidate(_ suffix: String) -> String {
      var base = String(stem)
      let budget = max(1, maxFileNameBytes - suffix.utf8.count - fileExtension.utf8.count)
      while base.utf8.count > budget { base.removeLast() }
      return base + suffix + fileExtension
    }
    for n in 1...max(1, maxSuffix) {
      let name = candidate("-\(n)")
      if !isTaken(name) { return name }
    }
    return candidate("-" + UUID().uuidString.lowercased())
  }

  /// `yyyy-MM-dd-HH-mm-ss` in UTC (proleptic Gregorian calendar).
  static func utcStamp(_ millis: Int64) -> String {
    let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
    let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let secondOfDay = seconds - days * 86_400
    let (year, month, day) = civilDate(daysSinceEpoch: days)
    func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return "\(year)-\(two(month))-\(two(day))-\(two(secondOfDay / 3600))-"
      + "\(two(secondOfDay % 3600 / 60))-\(two(secondOfDay % 60))"
  }

  /// Days since 1970-01-01 to (year, month, day); Howard Hinnant's `civil_from_days`.
  static func civilDate(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
    let z = daysSinceEpoch + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return (year, month, day)
  }

  static func base64URL(_ text: String) -> String {
    Data(text.utf8).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }
}
