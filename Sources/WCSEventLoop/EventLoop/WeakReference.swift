/// A weak reference to `Object`, for a closure called per datagram to capture as a constant.
///
/// `[weak object]` in a capture list captures a mutable box, and every call of the closure
/// then reads it under a dynamic exclusivity check; a closure that captures this value instead
/// reads the reference in place (the same `nil` once the object is gone).
package struct WeakReference<Object: AnyObject> {
  /// The object, `nil` once it was deallocated.
  package weak var object: Object?

  package init(_ object: Object) {
    self.object = object
  }
}
