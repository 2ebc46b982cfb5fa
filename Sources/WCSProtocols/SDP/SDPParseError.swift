/// Why an SDP could not be used at all (the parser otherwise keeps going and reports
/// ``SDPWarning``s). `line` numbers are 1-based.
public enum SDPParseError: Error, Hashable, Sendable {
  /// The text has no non-blank line.
  case empty
  /// The first line is not `v=<number>` (RFC 8866 §5: "v=" must come first).
  case missingVersion(line: Int)
  /// There is neither an `o=` line nor any `m=` section: nothing describes a session.
  case noSessionOrMedia
  /// An `m=` line lacks media, port or protocol, or its port is not a number 0...65535.
  /// It cannot be skipped: dropping it would renumber every later m-section and break the
  /// m-line-index matching of offer and answer (RFC 3264 §6, RFC 8829 §5.10).
  case malformedMediaLine(line: Int, text: String)
}

/// A line the parser did not fully understand and how it handled it.
public struct SDPWarning: Hashable, Sendable, CustomStringConvertible {
  /// 1-based line number in the input.
  public var line: Int
  /// Human-readable reason, e.g. `malformed a=rtpmap, kept verbatim`.
  public var reason: String

  /// Creates a warning.
  public init(line: Int, reason: String) {
    self.line = line
    self.reason = reason
  }

  /// `line N: reason`.
  public var description: String { "line \(line): \(reason)" }
}

/// The result of a lenient parse: the description plus what was not understood.
public struct SDPParseResult: Sendable {
  /// What was understood (and every line kept verbatim that was not).
  public var description: SessionDescription
  /// One entry per line that was skipped, defaulted or kept verbatim because it was malformed.
  public var warnings: [SDPWarning]
}
