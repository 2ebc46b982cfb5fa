import Foundation
import Synchronization

/// Which thread runs an event loop: set once by the loop's thread, read from any thread. The
/// loop and the `LoopBound` values of its state share one, so a value can check its loop
/// without holding the loop itself.
package final class EventLoopThread: Sendable {
  /// `pthread_self()` of the loop thread, 0 until it started.
  @usableFromInline let id = Atomic<UInt>(0)

  package init() {}

  /// Records the calling thread as the loop's. Called once, by the loop thread.
  func bindToCurrentThread() {
    id.store(UInt(pthread_self()), ordering: .releasing)
  }

  /// `true` when the caller runs on the loop's thread (one atomic load and `pthread_equal`);
  /// `false` on any other thread and before the thread started.
  @inlinable package var isCurrent: Bool {
    let id = id.load(ordering: .acquiring)
    return id != 0 && pthread_equal(id, pthread_self()) != 0
  }
}

// The accessors are inlinable so that they are specialized where the state is used (other
// modules): unspecialized, each access looked up the generic metadata and copied the whole
// state through its value witness, on every packet.

/// A value touched only on one event loop, checked: every read and write traps, in debug and
/// release builds, unless it runs on that loop's thread (as swift-nio's `NIOLoopBound`). It is
/// `Sendable` whatever `Value` is, so an owner that keeps its loop-confined state in one stays
/// `Sendable` without a prose `@unchecked Sendable` contract of its own.
///
/// A value type: a copy is a copy of the value (not shared state); use `LoopBoundBox` for
/// state that several holders share or that a `Sendable` class keeps.
package struct LoopBound<Value>: @unchecked Sendable {
  // @unchecked Sendable: `storage` is only reached through `value`, which checks the thread
  // (it is internal, not private, only so that the inlinable accessors can reach it).
  @usableFromInline var storage: Value
  @usableFromInline let thread: EventLoopThread

  /// Binds `value` to `loop`; callable on any thread, with a value nothing else holds (it is
  /// handed over, not used).
  package init(_ value: Value, loop: EventLoop) {
    self.init(value, thread: loop.thread)
  }

  init(_ value: Value, thread: EventLoopThread) {
    storage = value
    self.thread = thread
  }

  /// The value. Traps off the loop's thread.
  @inlinable package var value: Value {
    // `_read`, not `get`: reading one field of a large state borrows the state, not a copy.
    _read {
      check()
      yield storage
    }
    _modify {
      // The thread alone, not `check()`: a method call on `self` here copies the whole value
      // where it is not specialized.
      precondition(thread.isCurrent, "a LoopBound value used off its event loop")
      yield &storage
    }
  }

  @inlinable func check() {
    precondition(thread.isCurrent, "a LoopBound value used off its event loop")
  }
}

/// A reference to a value touched only on one event loop, checked as `LoopBound` checks: the
/// loop-confined mutable state of a `Sendable` class.
///
/// The value lives at a fixed address the box allocates, reached through addressors: a caller in
/// another module then reads and writes a field in place, with no coroutine and no copy of the
/// whole value (a `_read`/`_modify` pair was left unspecialized there, and copied the value
/// through its generic value witness on every packet). Addressors get no dynamic exclusivity
/// check, so one access must not overlap a modifying one, as for any `inout`.
package final class LoopBoundBox<Value>: @unchecked Sendable {
  // @unchecked Sendable: `storage` is only reached through `value`, which checks the thread, or
  // from `deinit`, when no other reference is left.
  @usableFromInline let storage: UnsafeMutablePointer<Value>
  @usableFromInline let thread: EventLoopThread

  /// Binds `value` to `loop`; callable on any thread, with a value nothing else holds (it is
  /// handed over, not used).
  package convenience init(_ value: Value, loop: EventLoop) {
    self.init(value, thread: loop.thread)
  }

  /// Binds `value` to the loop running on `thread`, for the loop's own state (made before the
  /// loop itself is).
  init(_ value: Value, thread: EventLoopThread) {
    storage = .allocate(capacity: 1)
    storage.initialize(to: value)
    self.thread = thread
  }

  deinit {
    storage.deinitialize(count: 1)
    storage.deallocate()
  }

  /// The value. Traps off the loop's thread.
  @inlinable package var value: Value {
    unsafeAddress {
      precondition(thread.isCurrent, "a LoopBoundBox value used off its event loop")
      return UnsafePointer(storage)
    }
    unsafeMutableAddress {
      precondition(thread.isCurrent, "a LoopBoundBox value used off its event loop")
      return storage
    }
  }

  /// The value without the thread check, for the owner's `deinit` only: its last reference is
  /// gone, so no other thread can touch the value, on whichever thread the owner goes.
  package var valueInOwnersDeinit: Value { storage.pointee }
}
