import CSockets
import Glibc

// CSockets's header names no socket types, so the socket constants stay Glibc's in every
// file that uses them (the CWebRTCCore umbrella once owned <sys/socket.h> and hid `SOCK_DGRAM`).

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
