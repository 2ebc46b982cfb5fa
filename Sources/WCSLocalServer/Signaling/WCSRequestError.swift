/// Why a client message could not be served. The reason goes to the client (`fail` `info`, or a
/// FAILED stream status) and to the log; the session goes on.
public enum WCSRequestError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The frame is not a WCS message (not JSON, no string `message`, bad `data`).
  case malformedFrame(String)
  /// `data[0]` of `message` is missing or not an object.
  case argumentNotAnObject(message: String)
  /// A required field is absent or null.
  case missingField(String)
  /// A field has the wrong JSON type (`expected` says which).
  case wrongType(field: String, expected: String)
  /// A field has the right type but a value the server does not accept (out of range, too
  /// long, control characters); `reason` says what is allowed (`WCSStreamRequestLimits`).
  case invalidValue(field: String, reason: String)

  /// `Bad request: <what>`, the text sent in `info`.
  public var description: String {
    switch self {
    case .malformedFrame(let detail): return "Bad request: \(detail)"
    case .argumentNotAnObject(let message):
      return "Bad request: \(message) needs an object in data[0]"
    case .missingField(let field): return "Bad request: \(field) is missing"
    case .wrongType(let field, let expected):
      return "Bad request: \(field) must be \(expected)"
    case .invalidValue(let field, let reason): return "Bad request: \(field) \(reason)"
    }
  }
}
