import CWebRTCCore

// Apart from `EventLoopUDPSocket.swift` on purpose: a file that imports CWebRTCCore (whose
// libwebsockets header includes <sys/socket.h>) and names a socket constant makes the
// whole-module build resolve the constant through CWebRTCCore, hiding it from files that import
// only Foundation (`UDPSocket.swift`'s `SOCK_DGRAM` in release builds).

/// Datagram receive with the kernel's receive time (`SO_TIMESTAMPNS`), through the C shim
/// (the `CMSG_*` macros).
enum KernelTimestampedReceive {
  /// Asks the kernel to stamp each datagram of `descriptor`; false when it refused.
  @discardableResult
  static func enable(on descriptor: Int32) -> Bool {
    wcs_enable_receive_timestamps(descriptor) == 0
  }

  /// Reads one datagram into `buffer`, the sender's address into `address` (`length` in: its
  /// capacity, out: its length). Returns `recvmsg`'s result (-1 with `errno`; the datagram's
  /// full length, more than `buffer.count` when it did not fit and was cut) and the kernel's
  /// receive time (`CLOCK_REALTIME`; zero when the datagram carries none).
  static func receive(
    _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer,
    address: UnsafeMutableRawPointer, length: inout UInt32
  ) -> (count: Int, kernelTime: timespec) {
    var seconds: Int64 = 0
    var nanoseconds: Int64 = 0
    let count = wcs_recv_datagram(
      descriptor, buffer.baseAddress, buffer.count, address, &length, &seconds, &nanoseconds)
    return (count, timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds)))
  }
}
