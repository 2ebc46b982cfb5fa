import Foundation
import Synchronization
import XCTest

@testable import WCSMedia

/// A value shared between the loop (writers) and the test thread (reader), behind a mutex.
final class LoopShared<Value: Sendable>: Sendable {
  private let storage: Mutex<Value>

  init(_ value: Value) { storage = Mutex(value) }

  var value: Value { storage.withLock { $0 } }

  func mutate<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
    storage.withLock { body(&$0) }
  }
}

/// Waits on the calling (test) thread until `condition` holds, checking every millisecond, at
/// most `timeout` seconds. Returns whether it held. For conditions set by the loop's work.
func eventually(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if condition() { return true }
    usleep(1000)
  }
  return condition()
}
