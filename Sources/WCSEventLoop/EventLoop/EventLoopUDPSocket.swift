import Dispatch
import Foundation
import WCSProtocols

/// A non-blocking UDP socket (IPv4 or IPv6) served by an `EventLoop`: datagrams are read on the
/// loop as they arrive and handed to `onDatagram`, sends go out at once.
///
/// Not the ICE module's blocking `UDPSocket` (a test driver); this one is for the event loop.
///
/// Each datagram carries the kernel's receive time (`SO_TIMESTAMPNS`): while `onDatagram` runs,
/// the loop's `datagramArrival` says when the datagram really arrived, so work that held the
/// loop (a picture decoded on it, another stream's packets) does not make packets look late to
/// jitter estimates, transport-wide feedback or RTT measurements.
///
/// With a `NetworkEmulation` (`init`'s `emulation`), what it sends passes through the send
/// direction's emulator before `sendto`, and what it receives through the receive direction's
/// after `recvfrom`, before `onDatagram`: dropped, held on the loop's timers and delivered late,
/// or delivered twice. A delayed datagram's `datagramArrival` is when the emulated network
/// delivered it. Without emulation (the default) each path costs one `nil` check.
///
/// Thread safety: create, use and close it on its loop; its mutable state traps when touched
/// off the loop's thread (`LoopBoundBox`). It is `Sendable` so an owner can hold it in a
/// closure submitted to the loop.
public final class EventLoopUDPSocket: Sendable {
  /// Called on the loop for each datagram: the bytes (valid only during the call; copy what
  /// you keep) and the sender's address.
  public typealias DatagramHandler = (UnsafeRawBufferPointer, ICETransportAddress) -> Void

  /// The loop that serves this socket.
  public let loop: EventLoop
  /// The bound local address (the real port when bound to port 0).
  public let localAddress: ICETransportAddress
  /// Datagrams read so far, before any receive emulation (truncated ones count in
  /// `datagramsTruncated` instead).
  public var datagramsReceived: Int { state.value.reception.datagrams }
  /// UDP payload bytes of the datagrams read so far (octets; IP/UDP headers excluded).
  public var bytesReceived: Int { state.value.reception.bytes }
  /// Datagrams dropped because they were larger than the receive buffer
  /// (`EventLoop.maximumDatagramSize`; only IPv6 allows more): cut, they would look whole.
  public var datagramsTruncated: Int { state.value.reception.truncated }
  /// Datagrams handed to the kernel so far.
  public var datagramsSent: Int { state.value.datagramsSent }
  /// Payload bytes handed to the kernel so far.
  public var bytesSent: Int { state.value.bytesSent }
  /// Datagrams dropped because the send buffer was full (`EAGAIN`/`ENOBUFS`).
  public var sendDrops: Int { state.value.sendDrops }
  /// Datagrams the send emulation held that the kernel then refused (`sendto` failed with an
  /// error other than a full buffer, e.g. the route went away).
  public var delayedSendFailures: Int { state.value.delayedSendFailures }
  /// `true` after `close()`.
  public var isClosed: Bool { state.value.isClosed }

  /// The receive counters in one value: a datagram is counted in one access of the socket
  /// instead of one per counter.
  private struct Reception {
    var datagrams = 0
    var bytes = 0
    var truncated = 0

    mutating func count(_ length: Int) {
      datagrams += 1
      bytes += length
    }
  }

  /// What changes, on the loop only.
  private struct State {
    var reception = Reception()
    var datagramsSent = 0
    var bytesSent = 0
    var sendDrops = 0
    var delayedSendFailures = 0
    var isClosed = false
    var onDatagram: DatagramHandler?
    /// The emulated network on each direction; `nil` for the direct path.
    var sendPath: EventLoopEmulatedPath?
    var receivePath: EventLoopEmulatedPath?
    var coalescing: Duration
  }

  private let state: LoopBoundBox<State>
  private let descriptor: Int32
  /// Datagrams read per readiness event before yielding to timers and other sockets.
  private static let readBudget = 64

  /// Binds a socket to `address` and starts reading on `loop`. Call on the loop.
  ///
  /// - Parameters:
  ///   - loop: the loop that serves it.
  ///   - address: the local address; port 0 picks a free port.
  ///   - portRange: when given and `address.port` is 0, the first free port of this range is
  ///     used instead of any port.
  ///   - receiveBufferBytes: `SO_RCVBUF` request (the kernel may cap it); video bursts need
  ///     more than the default.
  ///   - coalescing: how long a datagram may wait to be read so it shares the wake-up of one of
  ///     the loop's timers due by then (`EventLoop.watch`; zero, the default: read as soon as it
  ///     arrives). Its arrival time stays the kernel's (`datagramArrival`).
  ///   - emulation: a network to emulate on this socket's datagrams (`nil`, the default: none;
  ///     an ideal direction of it is not emulated either).
  ///   - onDatagram: called on the loop for each datagram received.
  /// - Throws: `EventLoopError.socketCreationFailed`, `.socketOptionFailed` or `.bindFailed`.
  public init(
    loop: EventLoop, bindingTo address: ICETransportAddress,
    portRange: ClosedRange<UInt16>? = nil, receiveBufferBytes: Int = 1 << 20,
    coalescing: Duration = .zero, emulation: NetworkEmulation? = nil,
    onDatagram: @escaping DatagramHandler
  ) throws(EventLoopError) {
    loop.assertInEventLoop()
    let family = address.ip.isIPv6 ? AF_INET6 : AF_INET
    let type =
      Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
      | Int32(SOCK_CLOEXEC.rawValue)
    let descriptor = socket(family, type, 0)
    guard descriptor >= 0 else { throw .socketCreationFailed(errno: errno) }
    do throws(EventLoopError) {
      if family == AF_INET6 {
        try Self.setOption(
          descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1, name: "IPV6_V6ONLY")
      }
      var bufferSize = Int32(clamping: receiveBufferBytes)
      // Best effort: an unprivileged process gets at most net.core.rmem_max.
      _ = setsockopt(
        descriptor, SOL_SOCKET, SO_RCVBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
      // Best effort too: without it a datagram's arrival is the moment it is read.
      KernelTimestampedReceive.enable(on: descriptor)
      localAddress = try Self.bind(descriptor, address: address, portRange: portRange)
    } catch {
      Glibc.close(descriptor)
      throw error
    }
    self.loop = loop
    self.descriptor = descriptor
    state = LoopBoundBox(State(onDatagram: onDatagram, coalescing: coalescing), loop: loop)
    if let emulation { emulate(emulation) }
    watch()
  }

  /// Puts an emulator on each direction `emulation` changes something on.
  private func emulate(_ emulation: NetworkEmulation) {
    let reference = WeakReference(self)
    if let emulator = emulation.makeEmulator(.send) {
      let path = EventLoopEmulatedPath(
        direction: .send, emulator: emulator, counters: emulation.counters, loop: loop)
      path.deliver = { reference.object?.sendHeld($0) }
      state.value.sendPath = path
    }
    if let emulator = emulation.makeEmulator(.receive) {
      let path = EventLoopEmulatedPath(
        direction: .receive, emulator: emulator, counters: emulation.counters, loop: loop)
      path.deliver = { reference.object?.receiveHeld($0) }
      state.value.receivePath = path
    }
  }

  /// What the emulators of this socket did so far (zero for a direction without one). Call on
  /// the loop.
  public var emulationStatistics: NetworkEmulationStatistics {
    loop.assertInEventLoop()
    var result = NetworkEmulationStatistics()
    if let sendPath = state.value.sendPath { result.send = sendPath.statistics }
    if let receivePath = state.value.receivePath { result.receive = receivePath.statistics }
    return result
  }

  /// How long a datagram may wait to be read so it shares a timer's wake-up (see `init`).
  var coalescing: Duration { state.value.coalescing }

  /// Changes `coalescing` from now on (a connection coalesces only once its media flow, so
  /// the ICE and DTLS exchanges before are not held by the ICE pacing timer). Call on the loop;
  /// does nothing once closed.
  package func setCoalescing(_ window: Duration) {
    loop.assertInEventLoop()
    guard !state.value.isClosed, window != coalescing else { return }
    state.value.coalescing = window
    watch()
  }

  private func watch() {
    // A constant weak reference rather than `[weak self]` (see `WeakReference`).
    let reference = WeakReference(self)
    loop.watch(descriptor, coalescing: coalescing) { reference.object?.readAvailable() }
  }

  deinit {
    guard !state.valueInOwnersDeinit.isClosed else { return }
    // Closing the descriptor only after the loop stopped watching it (both on the loop
    // thread) keeps a reused number from being served by a stale handler.
    let loop = loop
    let descriptor = descriptor
    if loop.inEventLoop {
      loop.unwatch(descriptor)
      Glibc.close(descriptor)
    } else {
      loop.execute {
        loop.unwatch(descriptor)
        Glibc.close(descriptor)
      }
    }
  }

  /// Sends one datagram to `destination`, through the send emulation when there is one. Call on
  /// the loop.
  ///
  /// - Returns: `false` when the kernel's send buffer was full and the datagram was dropped
  ///   (UDP may drop; counted in `sendDrops`). A datagram the emulation drops or holds counts
  ///   as sent (`true`): the emulated network, not the kernel, has it.
  /// - Throws: `EventLoopError.socketClosed`, `.datagramTooLarge`, `.addressFamilyMismatch` or
  ///   `.sendFailed` with the `errno` of `sendto`.
  @discardableResult
  public func send(_ bytes: UnsafeRawBufferPointer, to destination: ICETransportAddress)
    throws(EventLoopError) -> Bool
  {
    loop.assertInEventLoop()
    guard !state.value.isClosed else { throw .socketClosed }
    guard bytes.count <= EventLoop.maximumDatagramSize else {
      throw .datagramTooLarge(bytes: bytes.count)
    }
    guard destination.ip.isIPv6 == localAddress.ip.isIPv6 else {
      throw .addressFamilyMismatch(local: localAddress, destination: destination)
    }
    if let sendPath = state.value.sendPath {
      let now = Duration(attoseconds: loop.attosecondsNow())
      switch sendPath.admit(bytes, address: destination, now: now) {
      case 0: return true
      case 1: break
      default: _ = try transmit(bytes, to: destination)
      }
    }
    return try transmit(bytes, to: destination)
  }

  /// `sendto` of one checked datagram, counting it.
  private func transmit(_ bytes: UnsafeRawBufferPointer, to destination: ICETransportAddress)
    throws(EventLoopError) -> Bool
  {
    while true {
      let sent = SocketAddress.with(destination) { address, length in
        sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), address, length)
      }
      if sent >= 0 {
        state.value.datagramsSent += 1
        state.value.bytesSent += sent
        return true
      }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK, ENOBUFS:
        state.value.sendDrops += 1
        return false
      case let code: throw .sendFailed(destination: destination, errno: code)
      }
    }
  }

  /// Sends a datagram the send emulation held, now that it is due.
  private func sendHeld(_ datagram: EventLoopEmulatedPath.Held) {
    guard !state.value.isClosed else { return }
    datagram.bytes.withUnsafeBytes { raw in
      do throws(EventLoopError) {
        _ = try transmit(raw, to: datagram.address)
      } catch {
        state.value.delayedSendFailures += 1
      }
    }
  }

  /// Hands on a datagram the receive emulation held, now that it is due, with the time it was
  /// due as its arrival.
  private func receiveHeld(_ datagram: EventLoopEmulatedPath.Held) {
    guard !state.value.isClosed, let onDatagram = state.value.onDatagram else { return }
    loop.datagramArrivalOffset = datagram.time
    defer { loop.datagramArrivalOffset = nil }
    datagram.bytes.withUnsafeBytes { onDatagram($0, datagram.address) }
  }

  /// Sends one datagram given as an array; see `send(_:to:)`.
  @discardableResult
  public func send(_ bytes: [UInt8], to destination: ICETransportAddress)
    throws(EventLoopError) -> Bool
  {
    let result: Result<Bool, EventLoopError> = bytes.withUnsafeBytes { raw in
      do throws(EventLoopError) {
        return .success(try send(raw, to: destination))
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }

  /// Stops reading and closes the socket; later sends throw `socketClosed`. Call on the loop;
  /// calling it twice is harmless.
  public func close() {
    loop.assertInEventLoop()
    guard !state.value.isClosed else { return }
    state.value.isClosed = true
    state.value.onDatagram = nil
    state.value.sendPath?.close()
    state.value.receivePath?.close()
    loop.unwatch(descriptor)
    Glibc.close(descriptor)
  }

  private func readAvailable() {
    // Read once for the whole batch: only `close()` changes it, and a handler that closes the
    // socket ends the batch (`isClosed` is looked at after every datagram).
    guard !state.value.isClosed, let onDatagram = state.value.onDatagram else { return }
    var storage = sockaddr_storage()
    let buffer = loop.receiveBuffer
    // The loop's `datagramArrival` is cleared once after the batch rather than after each
    // datagram: nothing runs on the loop between two handler calls of one batch.
    var arrivalSet = false
    defer { if arrivalSet { loop.datagramArrivalOffset = nil } }
    for _ in 0..<Self.readBudget {
      var length = UInt32(MemoryLayout<sockaddr_storage>.size)
      let (count, kernelTime) = withUnsafeMutablePointer(to: &storage) { pointer in
        KernelTimestampedReceive.receive(
          descriptor, into: buffer, address: UnsafeMutableRawPointer(pointer), length: &length)
      }
      if count < 0 {
        if errno == EINTR { continue }
        // EAGAIN: drained. Other errors (an ICMP error queued on the socket) are not fatal
        // for UDP; the read source calls again when more arrives.
        return
      }
      guard count <= buffer.count else {
        state.value.reception.truncated += 1
        continue
      }
      guard let source = withUnsafePointer(to: &storage, { SocketAddress.decode($0) }) else {
        continue
      }
      state.value.reception.count(count)
      let arrival = Self.arrivalOffset(kernelTime: kernelTime, loop: loop)
      loop.datagramArrivalOffset = arrival
      arrivalSet = true
      let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
      if let receivePath = state.value.receivePath {
        let copies = receivePath.admit(bytes, address: source, now: arrival)
        if copies == 0 { continue }
        if copies > 1 {
          onDatagram(bytes, source)
          guard !state.value.isClosed else { return }
        }
      }
      onDatagram(bytes, source)
      guard !state.value.isClosed else { return }
    }
    // The budget ran out before `EAGAIN`: what is left must not wait for a timer's wake-up.
    loop.readableLeft()
  }

  /// `arrival(kernelTime:wallClock:monotonic:)` with the wall clock and `loop`'s clock, read in
  /// that order (without closures to call), as an offset from the loop's origin: the same
  /// instant, without building a resilient `ContinuousClock.Instant` per datagram.
  private static func arrivalOffset(kernelTime: timespec, loop: EventLoop) -> Duration {
    guard kernelTime.tv_sec != 0 || kernelTime.tv_nsec != 0 else {
      return Duration(attoseconds: loop.attosecondsNow())
    }
    let wall = readWallClock()
    return arrivalOffset(
      kernelTime: kernelTime, wallClockNow: wall, sinceOrigin: loop.attosecondsNow())
  }

  /// `arrival(kernelTime:now:wallClockNow:)` as an offset from the loop's origin, with `now`
  /// given as attoseconds from that origin (`EventLoop.attosecondsNow()`): the same instant, in
  /// `Int128` attoseconds, without the resilient instant and `Duration` operations that were
  /// cold code lines on every datagram (`scripts/play-cache-misses.sh`).
  static func arrivalOffset(
    kernelTime: timespec, wallClockNow wall: timespec, sinceOrigin now: Int128
  ) -> Duration {
    guard kernelTime.tv_sec != 0 || kernelTime.tv_nsec != 0 else {
      return Duration(attoseconds: now)
    }
    return Duration(
      attoseconds: now - queueingNanoseconds(kernelTime: kernelTime, wallClockNow: wall)
        * 1_000_000_000)
  }

  /// The longest a datagram counts as having waited in the socket: a kernel time further back
  /// than this (the wall clock was stepped) is taken as this far back.
  static let maximumQueueingAge: Duration = .seconds(1)

  /// When a datagram arrived, on the loop's clock, reading the clocks with `wallClock`
  /// (`CLOCK_REALTIME`) and then `monotonic` (the loop's); `monotonic()` alone when the datagram
  /// carried no time (zero). The wall clock is read first: a pause between the two readings (the
  /// thread preempted) then makes the arrival later, as if the datagram had been read then,
  /// never earlier than the kernel's stamp, which would make it look early to the jitter and
  /// out of order with the datagrams read after it.
  static func arrival(
    kernelTime: timespec, wallClock: () -> timespec,
    monotonic: () -> ContinuousClock.Instant
  ) -> ContinuousClock.Instant {
    guard kernelTime.tv_sec != 0 || kernelTime.tv_nsec != 0 else { return monotonic() }
    let wall = wallClock()
    return arrival(kernelTime: kernelTime, now: monotonic(), wallClockNow: wall)
  }

  /// When a datagram arrived, on the loop's clock: `now` less the time since `kernelTime` (the
  /// kernel's receive time, `CLOCK_REALTIME`) by the wall clock at `wallClockNow` (read just
  /// before `now`), between 0 and `maximumQueueingAge`; `now` when the datagram carried no time
  /// (zero).
  static func arrival(
    kernelTime: timespec, now: ContinuousClock.Instant, wallClockNow wall: timespec
  ) -> ContinuousClock.Instant {
    guard kernelTime.tv_sec != 0 || kernelTime.tv_nsec != 0 else { return now }
    let age = queueingAge(kernelTime: kernelTime, wallClockNow: wall)
    guard age != .zero else { return now }
    return now - age
  }

  /// How long the datagram stamped `kernelTime` (non-zero) waited by the wall clock at
  /// `wallClockNow`, between 0 and `maximumQueueingAge`.
  static func queueingAge(kernelTime: timespec, wallClockNow wall: timespec) -> Duration {
    Duration(
      attoseconds: queueingNanoseconds(kernelTime: kernelTime, wallClockNow: wall) * 1_000_000_000)
  }

  /// `queueingAge` in nanoseconds.
  private static func queueingNanoseconds(kernelTime: timespec, wallClockNow wall: timespec)
    -> Int128
  {
    // In nanoseconds as an `Int128` (no overflow from any two times) rather than `Duration`
    // arithmetic: the same clamped age, converted once.
    let age =
      (Int128(wall.tv_sec) - Int128(kernelTime.tv_sec)) * 1_000_000_000
      + Int128(wall.tv_nsec) - Int128(kernelTime.tv_nsec)
    return min(max(age, 0), maximumQueueingNanoseconds)
  }

  /// `maximumQueueingAge` in nanoseconds.
  private static let maximumQueueingNanoseconds: Int128 = 1_000_000_000

  /// `CLOCK_REALTIME` now.
  static func readWallClock() -> timespec {
    var wall = timespec()
    clock_gettime(CLOCK_REALTIME, &wall)
    return wall
  }

  private static func setOption(
    _ descriptor: Int32, _ level: Int32, _ option: Int32, _ value: Int32, name: String
  ) throws(EventLoopError) {
    var value = value
    guard setsockopt(descriptor, level, option, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    else { throw .socketOptionFailed(option: name, errno: errno) }
  }

  private static func bind(
    _ descriptor: Int32, address: ICETransportAddress, portRange: ClosedRange<UInt16>?
  ) throws(EventLoopError) -> ICETransportAddress {
    let ports: [UInt16] = address.port == 0 ? portRange.map(Array.init) ?? [0] : [address.port]
    var lastError: Int32 = EADDRINUSE
    for port in ports {
      let candidate = ICETransportAddress(ip: address.ip, port: port)
      let result = SocketAddress.with(candidate) { Glibc.bind(descriptor, $0, $1) }
      if result == 0 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) { pointer in
          pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            getsockname(descriptor, $0, &length)
          }
        }
        guard named == 0, let bound = withUnsafePointer(to: &storage, SocketAddress.decode) else {
          throw .bindFailed(address: candidate, errno: errno)
        }
        return bound
      }
      lastError = errno
      if lastError != EADDRINUSE && lastError != EACCES { break }
    }
    throw .bindFailed(address: address, errno: lastError)
  }
}
