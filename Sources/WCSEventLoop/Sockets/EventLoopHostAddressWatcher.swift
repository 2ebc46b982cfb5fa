import CSockets
import Glibc
import WCSProtocols

/// Watches the host's addresses and links on an event loop: a `NETLINK_ROUTE` socket joined
/// to the link and IPv4/IPv6 address groups (rtnetlink(7)), read when the kernel reports a
/// change, never polled. Loop-confined: make, use and close it on `loop`.
public final class EventLoopHostAddressWatcher {
  private let loop: EventLoop
  private let descriptor: Int32
  private var onChanges: (([HostAddressChange]) -> Void)?
  private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

  /// Datagrams read per wake-up at most, so a burst of changes cannot hold the loop.
  static let maximumReadsPerWake = 16

  /// Opens the socket and starts watching; `onChanges` runs on the loop with the changes of
  /// each datagram (never empty).
  /// - Throws: `EventLoopError.bindFailed` (with `errno`) when netlink is not available.
  public init(loop: EventLoop, onChanges: @escaping ([HostAddressChange]) -> Void)
    throws(EventLoopError)
  {
    loop.assertInEventLoop()
    let fd = wcs_open_route_watch()
    guard fd >= 0 else {
      throw .bindFailed(address: ICETransportAddress(ip: .v4(0), port: 0), errno: errno)
    }
    self.loop = loop
    self.descriptor = fd
    self.onChanges = onChanges
    let reference = WeakReference(self)
    loop.watch(fd) { reference.object?.readAvailable() }
  }

  private func readAvailable() {
    for _ in 0..<Self.maximumReadsPerWake {
      guard onChanges != nil else { return }
      let count = buffer.withUnsafeMutableBytes {
        recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
      }
      // ENOBUFS: the kernel dropped reports; the next ones still come.
      guard count > 0 else { return }
      let changes = RTNetlinkAddressChanges.decode(buffer.prefix(count))
      if !changes.isEmpty { onChanges?(changes) }
    }
    loop.readableLeft()
  }

  /// Stops watching and closes the socket; calling it twice is harmless.
  public func close() {
    loop.assertInEventLoop()
    guard onChanges != nil else { return }
    onChanges = nil
    loop.unwatch(descriptor)
    Glibc.close(descriptor)
  }

  deinit {
    guard onChanges != nil else { return }
    let loop = loop
    let descriptor = descriptor
    loop.execute {
      loop.unwatch(descriptor)
      Glibc.close(descriptor)
    }
  }
}
