import Foundation

/// `stripCodecs` (wcs-protocol.md §4.4 item 1): removes the payload types whose `a=rtpmap` codec
/// name contains one of the given names (case-insensitive), with their `a=fmtp`/`a=rtcp-fb`
/// lines, from the SDP text that is sent. Line-based; lines it does not understand are kept.
enum SDPCodecFilter {
  static func strip(codecs: [String], from sdp: String) -> String {
    let names = codecs.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter {
      !$0.isEmpty
    }
    guard !names.isEmpty else { return sdp }
    // Split on the scalar: "\r\n" is one Character in Swift, so a Character split would miss it.
    let lines = sdp.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map {
      line -> String in
      let text = String(String.UnicodeScalarView(line))
      return text.unicodeScalars.last == "\r"
        ? String(String.UnicodeScalarView(line.dropLast())) : text
    }
    var removed: Set<String> = []
    for line in lines where line.hasPrefix("a=rtpmap:") {
      let rest = line.dropFirst("a=rtpmap:".count)
      guard let space = rest.firstIndex(of: " ") else { continue }
      let pt = String(rest[..<space])
      let codec =
        rest[rest.index(after: space)...].split(separator: "/").first.map { $0.lowercased() } ?? ""
      if names.contains(where: { codec.contains($0) }) { removed.insert(pt) }
    }
    guard !removed.isEmpty else { return sdp }
    var out: [String] = []
    for line in lines {
      if let pt = payloadType(of: line, prefixes: ["a=rtpmap:", "a=fmtp:", "a=rtcp-fb:"]),
        removed.contains(pt)
      {
        continue
      }
      if line.hasPrefix("m=") {
        var fields = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        if fields.count > 3 {
          fields = Array(fields[0..<3]) + fields[3...].filter { !removed.contains($0) }
        }
        out.append(fields.joined(separator: " "))
        continue
      }
      out.append(line)
    }
    return out.joined(separator: "\r\n")
  }

  private static func payloadType(of line: String, prefixes: [String]) -> String? {
    for prefix in prefixes where line.hasPrefix(prefix) {
      let rest = line.dropFirst(prefix.count)
      return String(rest.prefix { $0 != " " })
    }
    return nil
  }
}
