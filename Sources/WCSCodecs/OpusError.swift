import COpus

/// An error from libopus, with the library's code and message (`opus_strerror`).
public struct OpusError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What was being done when libopus failed.
  public enum Operation: String, Sendable {
    case createEncoder, createDecoder, encode, decode, control
    /// Input rejected before reaching libopus (wrong sample count, channel count, ...).
    case invalidInput
  }

  /// The operation that failed.
  public let operation: Operation
  /// libopus error code (`OPUS_BAD_ARG` = -1 ... `OPUS_ALLOC_FAIL` = -7), or 0 for `invalidInput`.
  public let code: Int32
  /// `opus_strerror(code)`, or the reason for `invalidInput`.
  public let message: String

  init(_ operation: Operation, code: Int32) {
    self.operation = operation
    self.code = code
    if let text = opus_strerror(code) {
      message = String(cString: text)
    } else {
      message = "opus error \(code)"
    }
  }

  init(invalidInput reason: String) {
    operation = .invalidInput
    code = 0
    message = reason
  }

  /// `"<operation>: <message> (<code>)"`.
  public var description: String { "\(operation.rawValue): \(message) (\(code))" }
}
