import FPWCSApi2Swift
import Foundation
import Synchronization

extension ExampleLog {
  /// Prints and marks a session status: `session ESTABLISHED` (event `"session ESTABLISHED"`).
  public func session(_ session: FPWCSApi2Session?) {
    let status = FPWCSApi2Model.sessionStatus(
      toString: session?.getStatus() ?? .fpwcsSessionStatusNew)
    var text = "session \(status)"
    if let reason = session?.getFailureReason(), status == "FAILED" || status == "DISCONNECTED" {
      text += " (\(reason))"
    }
    line(text)
    mark("session " + status, detail: text)
  }

  /// Prints and marks a stream that the SDK refused before it reached the server
  /// (`createStream`, `publish()` or `play()` threw, e.g. `WCSError.invalidOption`) as FAILED:
  /// `publish stream1 FAILED: <error>` (event `"publish FAILED"`), so the run ends at once
  /// with that reason like any other FAILED stream.
  public func streamRefused(_ role: String, _ name: String, _ error: any Error) {
    let text = "\(role) \(name) FAILED: \(error)"
    line(text)
    mark(role + " FAILED", detail: text)
  }

  /// Prints and marks a stream status: `publish stream1 PUBLISHING` (event
  /// `"publish PUBLISHING"`); failures carry the readable reason of the iOS examples.
  public func stream(_ role: String, _ stream: FPWCSApi2Stream?) {
    let status = FPWCSApi2Model.streamStatus(toString: stream?.getStatus() ?? .fpwcsStreamStatusNew)
    var text = "\(role) \(stream?.getName() ?? "") \(status)"
    if status == "FAILED" { text += ": " + ExampleText.failureReason(stream) }
    if let record = stream?.getRecordName(), !record.isEmpty, status == "PUBLISHING" {
      text += " (record \(record))"
    }
    line(text)
    mark(role + " " + status, detail: text)
  }
}

/// Texts the iOS examples show.
public enum ExampleText {
  /// The TwoWayStreaming example's readable reason for a failed stream.
  public static func failureReason(_ stream: FPWCSApi2Stream?) -> String {
    switch stream?.getStatusInfo() {
    case .fpwcsStreamStatusInfoSessionDoesNotExist: return "Actual session does not exist"
    case .fpwcsStreamStatusInfoStoppedByPublisherStop:
      return "Related publisher stopped its stream or lost connection"
    case .fpwcsStreamStatusInfoSessionNotReady:
      return "Session is not initialized or terminated on play ordinary stream"
    case .fpwcsStreamStatusInfoRtspStreamNotFound:
      return "Rtsp stream not found where agent received '404-Not Found'"
    case .fpwcsStreamStatusInfoFailedToConnectToRtspStream:
      return "Failed to connect to rtsp stream"
    case .fpwcsStreamStatusInfoFileNotFound: return "File does not exist, check filename"
    case .fpwcsStreamStatusInfoFileHasWrongFormat: return "File has wrong format on play vod"
    case .fpwcsStreamStatusInfoTranscodingRequiredButDisabled:
      return "Transcoding required, but disabled in settings"
    case .fpwcsStreamStatusInfoNoAvailableTranscoders: return "No available transcoders for stream"
    case .fpwcsStreamStatusInfoStreamNameAlreadyInUse:
      return "Server already has a publish stream with the same name"
    default: return stream?.getInfo() ?? "unknown reason"
    }
  }

  /// `Not enough bandwidth stream1, consider using lower video resolution or bitrate. Bandwidth
  /// 120 bitrate 900` (kbps), as the iOS examples print it.
  public static func notEnoughBandwidth(_ stream: FPWCSApi2Stream?) -> String {
    guard let stream else { return "Not enough bandwidth" }
    return "Not enough bandwidth \(stream.getName()), consider using lower video resolution or "
      + "bitrate. Bandwidth \(stream.getNetworkBandwidth() / 1000) bitrate "
      + "\(stream.getRemoteBitrate() / 1000)"
  }
}

/// Reads a stream's connection counters synchronously (`getStats` completes on another queue).
public enum ExampleStats {
  /// The stream's statistics, or `nil` when it has no connection or they take over 2 s.
  public static func read(_ stream: FPWCSApi2Stream?) -> FPWCSApi2StreamStats? {
    guard let stream else { return nil }
    return read { stream.getStats($0) }
  }

  /// The statistics of a Swift-wrapper stream (see `read(_:)`).
  public static func read(_ stream: WCSStream?) -> FPWCSApi2StreamStats? {
    guard let stream else { return nil }
    return read { stream.getStats($0) }
  }

  static func read(
    _ getStats: (@escaping (FPWCSApi2StreamStats?) -> Void) -> Void
  ) -> FPWCSApi2StreamStats? {
    let box = StatsBox()
    let done = DispatchSemaphore(value: 0)
    getStats { stats in
      box.set(stats)
      done.signal()
    }
    guard done.wait(timeout: .now() + 2) == .success else { return nil }
    return box.get()
  }
}

private final class StatsBox: Sendable {
  private let value = Mutex<FPWCSApi2StreamStats?>(nil)
  func set(_ stats: FPWCSApi2StreamStats?) { value.withLock { $0 = stats } }
  func get() -> FPWCSApi2StreamStats? { value.withLock { $0 } }
}
