import CWebSockets
import Foundation

/// A libwebsockets protocol callback (`lws_callback_function`).
typealias LWSCallback =
  @convention(c) (
    OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int
  ) -> Int32

/// C memory handed to libwebsockets that must outlive its context (strings, the zero-terminated
/// protocols array, mounts, option lists). Freed all at once by `free()`, after the context is
/// destroyed. Used only by the thread that creates and destroys the context.
final class LWSAllocations {
  private var strings: [UnsafeMutablePointer<CChar>] = []
  private var blocks: [UnsafeMutableRawPointer] = []

  /// A C copy of `text` that lives until `free()`.
  func string(_ text: String) -> UnsafePointer<CChar> {
    let copy = strdup(text) ?? UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    strings.append(copy)
    return UnsafePointer(copy)
  }

  /// An optional C string: `nil` stays `nil`.
  func string(_ text: String?) -> UnsafePointer<CChar>? {
    guard let text else { return nil }
    return string(text)
  }

  /// Zeroed memory for `count` values of `T` that lives until `free()`.
  func zeroed<T>(_: T.Type, count: Int) -> UnsafeMutablePointer<T> {
    let size = MemoryLayout<T>.stride * max(1, count)
    let raw = UnsafeMutableRawPointer.allocate(
      byteCount: size, alignment: MemoryLayout<T>.alignment)
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
    blocks.append(raw)
    return raw.bindMemory(to: T.self, capacity: max(1, count))
  }

  /// A zero-terminated protocols array holding one protocol.
  func protocols(
    name: String, callback: LWSCallback?, rxBufferSize: Int
  ) -> UnsafePointer<lws_protocols> {
    let array = zeroed(lws_protocols.self, count: 2)
    array[0].name = string(name)
    array[0].callback = callback
    array[0].per_session_data_size = 0
    array[0].rx_buffer_size = rxBufferSize
    return UnsafePointer(array)
  }

  /// Releases everything.
  func free() {
    for s in strings { Foundation.free(s) }
    for b in blocks { b.deallocate() }
    strings = []
    blocks = []
  }

  deinit { free() }
}
