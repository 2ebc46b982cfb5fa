import Foundation

/// Copies one picture plane out of a codec's buffer.
enum PlaneCopy {
  /// `rows` rows of `width` bytes, `stride` apart, into a buffer of exactly `width × rows`
  /// bytes that the `Data` takes over (no zero fill first, and no `Data` bookkeeping per
  /// row); mid-grey when the codec gave no plane.
  static func packed(_ pointer: UnsafeMutablePointer<UInt8>?, stride: Int, width: Int, rows: Int)
    -> Data
  {
    guard let pointer, let buffer = malloc(width * rows) else {
      return Data(repeating: 128, count: width * rows)
    }
    let out = buffer.assumingMemoryBound(to: UInt8.self)
    for row in 0..<rows {
      (out + row * width).initialize(from: pointer + row * stride, count: width)
    }
    return Data(bytesNoCopy: buffer, count: width * rows, deallocator: .free)
  }
}
