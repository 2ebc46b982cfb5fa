import Foundation

/// The closing report of an example: labelled values a person reads and a test parses
/// (`  Label: value` lines between `== Summary ==` and `== End ==`), plus whether the run
/// succeeded.
public struct ExampleSummary: Sendable {
  /// Label and value, in print order.
  public private(set) var entries: [(label: String, value: String)] = []
  /// Steps that failed; the run fails when this is not empty.
  public private(set) var failures: [String] = []

  /// An empty summary.
  public init() {}

  /// Adds one line.
  public mutating func add(_ label: String, _ value: String) {
    entries.append((label, value))
  }

  /// Adds a time in seconds (`"0.123 s"`) or `"never"`.
  public mutating func addTime(_ label: String, _ seconds: Double?) {
    add(label, seconds.map { String(format: "%.3f s", $0) } ?? "never")
  }

  /// Records a failed step; it is printed as `FAILED: reason`.
  public mutating func fail(_ reason: String) {
    failures.append(reason)
  }

  /// `true` when no step failed.
  public var succeeded: Bool { failures.isEmpty }

  /// Prints the summary through `log` and returns the exit status (0 on success, 1 otherwise).
  @discardableResult
  public func print(to log: ExampleLog) -> Int32 {
    log.plain("== Summary ==")
    let width = entries.map(\.label.count).max() ?? 0
    for (label, value) in entries {
      log.plain("  " + label + ":" + String(repeating: " ", count: width - label.count + 1) + value)
    }
    for failure in failures { log.plain("  FAILED: " + failure) }
    log.plain("  Result: " + (succeeded ? "OK" : "FAILED"))
    log.plain("== End ==")
    return succeeded ? 0 : 1
  }

  /// The `Label: value` pairs of the last summary in an example's output (for tests).
  public static func parse(_ output: String) -> [String: String] {
    var result: [String: String] = [:]
    var inside = false
    for rawLine in output.split(separator: "\n", omittingEmptySubsequences: false) {
      let line = String(rawLine)
      if line == "== Summary ==" {
        inside = true
        result = [:]
        continue
      }
      if line == "== End ==" {
        inside = false
        continue
      }
      guard inside, let colon = line.firstIndex(of: ":") else { continue }
      let label = line[..<colon].trimmingCharacters(in: .whitespaces)
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      if label == "FAILED" {
        result["FAILED", default: ""] += value + "; "
      } else {
        result[label] = value
      }
    }
    return result
  }

  /// The leading number of a summary value (`"31.2 dB"` → 31.2, `"+13 ms"` → 13), `nil` when
  /// there is none.
  public static func number(_ value: String?) -> Double? {
    guard let value else { return nil }
    let prefix = value.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" }
    return Double(prefix)
  }
}
