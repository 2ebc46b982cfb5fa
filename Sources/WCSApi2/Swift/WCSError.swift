import Foundation
import WCSMediaSeam
import WCSTransport

/// Every failure of the API, each with a message for `localizedDescription`.
public enum WCSError: Error, Sendable, Equatable, LocalizedError, CustomStringConvertible {
  /// An option is missing or invalid (`urlServer` not set, stream `name` missing...).
  case invalidOptions(String)
  /// One option has a value out of range (`FPWCSApi2StreamLimits`); `field` is its path in the
  /// options (`name`, `constraints.video.maxBitrate`), `reason` says what is allowed.
  case invalidOption(field: String, reason: String)
  /// An argument is not acceptable (e.g. a non-JSON value in a dictionary).
  case invalidArgument(String)
  /// The session is not in a state that allows the call (e.g. publish before Established).
  case invalidSessionState(kFPWCSSessionStatus, operation: String)
  /// The stream is not in a state that allows the call (e.g. publish twice).
  case invalidStreamState(kFPWCSStreamStatus, operation: String)
  /// The server refused the connection (`fail` with `ConnectionStatusEvent`); `reason` is its `info`.
  case connectionRefused(reason: String)
  /// The WebSocket could not be opened or broke.
  case connectionFailed(reason: String)
  /// The session was disconnected before the operation completed.
  case disconnected
  /// The stream failed; `info` is the server's (or local) reason text.
  case streamFailed(statusInfo: kFPWCSStreamStatusInfo, info: String?)
  /// The stream ended (Unpublished/Stopped) before reaching the awaited status.
  case streamEnded(kFPWCSStreamStatus)
  /// The media engine failed.
  case media(MediaBackendError)
  /// The server app rejected `sendData` (`DataStatusEvent` FAILED).
  case dataRejected(info: String?)
  /// Not available on Linux (e.g. loudspeaker routing).
  case notSupported(String)
  /// The call is not in a state that allows the operation (e.g. `hold()` before ESTABLISHED).
  case invalidCallState(kFPWCSCallStatus, operation: String)
  /// The call ended before ESTABLISHED: BUSY, FAILED (with the SIP reason) or FINISH.
  case callEnded(kFPWCSCallStatus, info: String?)

  /// One line saying what failed and why.
  public var description: String {
    switch self {
    case .invalidOptions(let s): return "invalid options: \(s)"
    case .invalidOption(let field, let reason): return "invalid options: \(field) \(reason)"
    case .invalidArgument(let s): return "invalid argument: \(s)"
    case .invalidSessionState(let status, let op):
      return "cannot \(op): session is \(FPWCSApi2Model.sessionStatus(toString: status))"
    case .invalidStreamState(let status, let op):
      return "cannot \(op): stream is \(FPWCSApi2Model.streamStatus(toString: status))"
    case .connectionRefused(let reason): return "server refused the connection: \(reason)"
    case .connectionFailed(let reason): return "connection failed: \(reason)"
    case .disconnected: return "session disconnected"
    case .streamFailed(let code, let info):
      let text = info ?? FPWCSApi2Model.streamStatusInfo(toString: code)
      return "stream failed: \(text.isEmpty ? "no reason given" : text)"
    case .streamEnded(let status):
      return "stream ended: \(FPWCSApi2Model.streamStatus(toString: status))"
    case .media(let error): return "media error: \(error)"
    case .dataRejected(let info): return "data rejected by the server: \(info ?? "no reason given")"
    case .notSupported(let s): return "not supported on Linux: \(s)"
    case .invalidCallState(let status, let op):
      return "cannot \(op): call is \(FPWCSApi2Model.callStatus(toString: status))"
    case .callEnded(let status, let info):
      return "call ended: \(FPWCSApi2Model.callStatus(toString: status))"
        + (info.map { " (\($0))" } ?? "")
    }
  }

  /// Same as `description`, so `error.localizedDescription` reads well.
  public var errorDescription: String? { description }
}
