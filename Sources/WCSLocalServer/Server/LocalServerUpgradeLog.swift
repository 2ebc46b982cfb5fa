import Foundation

/// The log line of a WebSocket upgrade's request headers (`session 3 headers: authorization=
/// Basic alice:***, user-agent=...`), so a client's `connect(withHeaders:)` can be seen and
/// checked. Credentials are never logged: a Basic authorization shows its user name only
/// (RFC 7617 §2), any other scheme its name and length.
enum LocalServerUpgradeLog {
  /// Longest header value logged, characters (the rest is cut with "…").
  static let maxValueLength = 200

  /// The line for `headers` (names lowercased, as `WebSocketServer` records them), `nil` when
  /// there are none.
  static func line(session id: WCSConnectionID, headers: [String: String]) -> String? {
    guard !headers.isEmpty else { return nil }
    let parts = headers.keys.sorted().map { name -> String in
      let value = headers[name] ?? ""
      let shown = name == "authorization" ? redacted(authorization: value) : value
      let cut =
        shown.count > maxValueLength ? String(shown.prefix(maxValueLength)) + "…" : shown
      return "\(name)=\(cut)"
    }
    return "session \(id) headers: " + parts.joined(separator: ", ")
  }

  /// `Basic <base64 of user:password>` → `Basic user:***`; another scheme → `Scheme (N
  /// characters)`; a Basic value that does not decode → `Basic (not base64)`.
  static func redacted(authorization value: String) -> String {
    let pieces = value.split(separator: " ", maxSplits: 1).map(String.init)
    guard let scheme = pieces.first else { return "" }
    let credentials = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces) : ""
    guard scheme.lowercased() == "basic" else {
      return "\(scheme) (\(credentials.count) characters)"
    }
    guard let data = Data(base64Encoded: credentials),
      let decoded = String(data: data, encoding: .utf8)
    else { return "\(scheme) (not base64)" }
    let user =
      decoded.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
      .first.map(String.init) ?? ""
    return "\(scheme) \(user):***"
  }
}
