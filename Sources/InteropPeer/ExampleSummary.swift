import WCSTransport

/// The `== Summary ==` ... `== End ==` block an example prints, as `key: value` strings.
enum ExampleSummary {
  static func parse(_ text: String) -> [String: JSONValue] {
    var summary: [String: JSONValue] = [:]
    var inside = false
    for line in text.split(separator: "\n") {
      if line == "== Summary ==" { inside = true } else if line == "== End ==" { inside = false }
      guard inside, let colon = line.firstIndex(of: ":") else { continue }
      let key = line[..<colon].trimmingCharacters(in: .whitespaces)
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      summary[key] = .string(value)
    }
    return summary
  }
}
