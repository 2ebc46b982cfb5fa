import Foundation

/// Stream names that designate a source the server pulls itself (wcs-protocol.md §3.1:
/// `playStream` of an RTSP or RTMP URL), and the id the relay knows such a source by.
enum PullSourceName {
  /// Longest URL accepted as a source name, bytes.
  static let maxURLLength = 2048
  private static let prefix = "pull:"

  /// The relay's source id for a stream name that is an `rtsp://` or `rtmp://` URL, nil for
  /// any other name. One id per URL, so every player of one URL shares one pull.
  static func sourceId(forStreamName name: String) -> String? {
    guard name.utf8.count <= maxURLLength else { return nil }
    let lowered = name.lowercased()
    guard lowered.hasPrefix("rtsp://") || lowered.hasPrefix("rtmp://"),
      name.utf8.count > "rtsp://".count,
      !name.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F })
    else { return nil }
    return prefix + name
  }

  /// The lower-cased host of a source URL (`rtsp://user@Camera.lan:554/x` → `camera.lan`,
  /// IPv6 literals without brackets), nil when the URL has none.
  static func host(ofURL url: String) -> String? {
    guard let host = URLComponents(string: url)?.host, !host.isEmpty else { return nil }
    let bare =
      host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    return bare.lowercased()
  }

  /// The URL of a source id made by `sourceId(forStreamName:)`, nil for a publisher's id.
  static func url(ofSourceId id: String) -> String? {
    guard id.hasPrefix(prefix) else { return nil }
    let url = String(id.dropFirst(prefix.count))
    return sourceId(forStreamName: url) == id ? url : nil
  }
}
