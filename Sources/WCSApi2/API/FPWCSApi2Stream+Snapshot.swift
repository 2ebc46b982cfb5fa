import Foundation
import WCSCodecs

/// Why `FPWCSApi2Stream.snapshot(timeout:)` or `localSnapshot(format:)` gave no picture.
public enum FPWCSApi2SnapshotError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The server answered `snapshotFailed` with this `info`.
  case failed(info: String)
  /// The server's `snapshotCompleted` did not carry a base64 `snapshot`.
  case malformedAnswer
  /// No answer within the time asked for.
  case timedOut
  /// Nothing was played yet (or the stream has no `display`, so nothing is decoded).
  case noPicture

  /// The reason as one line of text, for logs and error messages.
  public var description: String {
    switch self {
    case .failed(let info): return "snapshot failed: \(info)"
    case .malformedAnswer: return "snapshotCompleted without a base64 PNG"
    case .timedOut: return "no snapshot answer in time"
    case .noPicture: return "no picture played yet"
    }
  }
}

extension FPWCSApi2Stream {
  /// Asks the server for a picture of this stream (the Web SDK's `stream.snapshot()`, a Linux
  /// addition to the iOS API): the answer comes to `onStreamEvent` as `snapshotCompleted`
  /// (`payload["snapshot"]`: a base64 PNG) or `snapshotFailed` (`payload["info"]`). Allowed
  /// while NEW (no publish or play needed), PLAYING or PUBLISHING; otherwise nothing is sent
  /// (see `snapshotChecked()`).
  public func snapshot() {
    try? snapshotChecked()
  }

  /// `snapshot()` that reports why nothing was sent.
  /// - Throws: `WCSError.invalidSessionState` / `.invalidStreamState` / `.disconnected`.
  public func snapshotChecked() throws {
    guard let session = ownerSession else { throw WCSError.disconnected }
    try session.requestSnapshot(self)
  }

  /// Asks the server for a picture and waits for it: the PNG file's bytes.
  /// - Throws: `FPWCSApi2SnapshotError.failed` with the server's info, `.malformedAnswer`,
  ///   `.timedOut` after `timeout` seconds; the `snapshotChecked()` errors.
  public func snapshot(timeout: Double = 10) async throws -> Data {
    let id = UUID()
    return try await withCheckedThrowingContinuation { continuation in
      snapshotWaiters.withLock { $0[id] = continuation }
      do {
        try snapshotChecked()
      } catch {
        resumeSnapshotWaiter(id, with: .failure(error))
        return
      }
      DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { [weak self] in
        self?.resumeSnapshotWaiter(id, with: .failure(FPWCSApi2SnapshotError.timedOut))
      }
    }
  }

  /// The newest played picture, from the SDK itself (no server): PNG or JPEG bytes. Works for a
  /// played stream with a `display` (its frames pass through the SDK).
  /// - Throws: `FPWCSApi2SnapshotError.noPicture` before the first frame or without a display;
  ///   `PictureFileError` from the encoder.
  public func localSnapshot(format: PictureFormat = .png) throws -> Data {
    guard let bytes = try lastFrame?.snapshot(as: format) else {
      throw FPWCSApi2SnapshotError.noPicture
    }
    return Data(bytes)
  }

  /// The newest played picture itself (I420), nil before the first frame or without display.
  public var lastPlayedPicture: I420Image? { lastFrame?.lastPicture }

  /// Resolves the snapshot waiters on a `snapshotCompleted`/`snapshotFailed` event.
  func snapshotEvent(_ event: FPWCSApi2StreamEvent) {
    let result: Result<Data, any Error>
    switch event.type {
    case "snapshotCompleted":
      if let text = event.payloadJSON?["snapshot"]?.stringValue, let png = Data(base64Encoded: text)
      {
        result = .success(png)
      } else {
        result = .failure(FPWCSApi2SnapshotError.malformedAnswer)
      }
    case "snapshotFailed":
      let info = event.payloadJSON?["info"]?.stringValue ?? "no reason given"
      result = .failure(FPWCSApi2SnapshotError.failed(info: info))
    default: return
    }
    // One answer serves every request waiting: the server answers in order, one picture each.
    let waiting = snapshotWaiters.withLock { w in
      defer { w.removeAll() }
      return Array(w.values)
    }
    for continuation in waiting { continuation.resume(with: result) }
  }

  private func resumeSnapshotWaiter(_ id: UUID, with result: Result<Data, any Error>) {
    let waiter = snapshotWaiters.withLock { $0.removeValue(forKey: id) }
    waiter?.resume(with: result)
  }
}
