import Dispatch

/// A reference to a value touched only on one serial `DispatchQueue`, checked: every read and
/// write traps, in debug and release builds, unless it runs on that queue
/// (`dispatchPrecondition`). It is `Sendable` whatever `Value` is, so a class that keeps its
/// queue-confined state in one stays `Sendable` without a prose `@unchecked Sendable` contract.
/// The queue twin of the event loop's `LoopBoundBox`.
///
/// Reached through addressors, as `LoopBoundBox` is: one access must not overlap a modifying
/// one, as for any `inout`.
package final class QueueBoundBox<Value>: @unchecked Sendable {
  // @unchecked Sendable: `storage` is only reached through `value`, which checks the queue, or
  // from `deinit`, when no other reference is left.
  @usableFromInline let storage: UnsafeMutablePointer<Value>
  /// The queue the value belongs to.
  package let queue: DispatchQueue

  /// Binds `value` to `queue`; callable on any thread, with a value nothing else holds (it is
  /// handed over, not used).
  package init(_ value: Value, queue: DispatchQueue) {
    storage = .allocate(capacity: 1)
    storage.initialize(to: value)
    self.queue = queue
  }

  deinit {
    storage.deinitialize(count: 1)
    storage.deallocate()
  }

  /// The value. Traps off `queue`.
  @inlinable package var value: Value {
    unsafeAddress {
      dispatchPrecondition(condition: .onQueue(queue))
      return UnsafePointer(storage)
    }
    unsafeMutableAddress {
      dispatchPrecondition(condition: .onQueue(queue))
      return storage
    }
  }
}
