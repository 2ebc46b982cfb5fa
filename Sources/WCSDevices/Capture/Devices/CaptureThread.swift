import Dispatch
import Foundation
import Synchronization

/// The capture thread of one device (camera, microphone, screen): one at a time, asked to stop
/// between frames, and waited for by `stop()` for up to 2 s — except on the thread itself, where
/// an event handler that stops its own device must not wait for its own end.
final class CaptureThread: Sendable {
  private struct State: Sendable {
    var stopRequested = false
    var running = false
    var threadID: pthread_t?
  }

  private let state = Mutex(State())
  private let finished = DispatchSemaphore(value: 0)

  /// Whether a thread runs (or was claimed and is about to).
  var isRunning: Bool { state.withLock { $0.running } }

  /// Whether `stop()` was called since the thread was claimed; the body checks it between
  /// frames and returns when it is set.
  var stopRequested: Bool { state.withLock { $0.stopRequested } }

  /// Marks the device running. Returns false, changing nothing, when a thread runs already.
  func claim() -> Bool {
    state.withLock { s in
      if s.running { return false }
      s.running = true
      s.stopRequested = false
      return true
    }
  }

  /// Undoes a `claim()` whose thread will not be started (the device failed to start).
  func abandon() {
    state.withLock { $0.running = false }
  }

  /// Runs `body` on a new thread called `name`, after a successful `claim()`; the device is
  /// not running once `body` returns.
  func run(name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread { [self] in
      state.withLock { $0.threadID = pthread_self() }
      body()
      state.withLock {
        $0.running = false
        $0.threadID = nil
      }
      finished.signal()
    }
    thread.name = name
    thread.start()
  }

  /// Asks the thread to stop and waits up to 2 s for it to end (not at all on the thread
  /// itself). Does nothing when no thread runs.
  func stop() {
    let (running, onCaptureThread) = state.withLock { s in
      s.stopRequested = true
      let onThread = s.threadID.map { pthread_equal($0, pthread_self()) != 0 } ?? false
      return (s.running, onThread)
    }
    guard running, !onCaptureThread else { return }
    _ = finished.wait(timeout: .now() + 2)
  }
}
