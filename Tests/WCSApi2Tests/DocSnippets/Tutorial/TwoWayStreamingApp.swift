import Dispatch
import FPWCSApi2Swift

// The tutorial's program (DocC/WCSApi2.docc/Tutorials/TwoWayStreaming.tutorial): every line of
// its code files under Resources/ is found in this folder (scripts/check-doc-snippets.sh).

/// The TwoWayStreaming example as a Linux program: publishes `localName`, plays `remoteName`.
final class TwoWayStreamingApp: @unchecked Sendable {
  // @unchecked Sendable: the `var`s are touched only on `queue`, which is also the session's
  // callback queue, so callbacks and the app's own calls never overlap.
  let serverURL: String
  let localName: String
  let remoteName: String
  let queue = DispatchQueue(label: "TwoWayStreaming")
  let log: @Sendable (String) -> Void
  let localDisplay = VideoFrameCallbackRenderer { _ in }
  let remoteDisplay = VideoFrameCallbackRenderer { frame in
    print("remote frame \(frame.width)x\(frame.height)")
  }
  var session: WCSSession?
  var publisher: WCSStream?
  var player: WCSStream?

  init(
    serverURL: String, localName: String, remoteName: String,
    log: @escaping @Sendable (String) -> Void = { print($0) }
  ) {
    self.serverURL = serverURL
    self.localName = localName
    self.remoteName = remoteName
    self.log = log
  }

  /// Starts the example: connect, then publish, then play.
  func start() {
    queue.async { self.connect() }
  }
}
