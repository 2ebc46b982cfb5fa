import Foundation
import WCSProtocols

/// Errors of `EventLoopTCPSocket` and `EventLoopTCPListener`, with the `errno` of the failing
/// system call where there is one.
public enum EventLoopTCPError: Error, Equatable, Sendable {
  /// `socket()` failed.
  case socketCreationFailed(errno: Int32)
  /// `bind()`, `listen()` or `getsockname()` failed for `address`.
  case bindFailed(address: ICETransportAddress, errno: Int32)
  /// The connection to `address` was refused or could not be made (`connect()`'s `errno`).
  case connectFailed(address: ICETransportAddress, errno: Int32)
  /// No connection to `address` within the timeout given (seconds).
  case connectTimedOut(address: ICETransportAddress, seconds: Double)
  /// A write would queue more than the socket's bound (bytes queued before, bytes offered,
  /// the bound): the peer reads too slowly. Nothing of the write was queued.
  case writeBufferFull(queued: Int, offered: Int, limit: Int)
  /// `send()` or `recv()` failed (`ECONNRESET`, `EPIPE`, ...).
  case connectionFailed(errno: Int32)
  /// The socket was closed (by `close()`, or after the peer closed or an error).
  case socketClosed
}

/// What an `EventLoopTCPSocket` reports to its owner, on the loop.
public enum EventLoopTCPEvent {
  /// The connection is up (a connecting socket; an accepted one is up from the start).
  case connected
  /// Bytes arrived, in order (valid only during the call; copy what you keep). Stream bytes:
  /// one message may come in pieces and several in one.
  case received(UnsafeRawBufferPointer)
  /// The connection ended: `nil` when the peer closed it in order, else why. The descriptor is
  /// closed already; no event follows. Not reported for the owner's own `close()`.
  case closed(EventLoopTCPError?)
}

/// A non-blocking TCP stream socket (IPv4 or IPv6) on an `EventLoop`: connects with a timeout,
/// reads as bytes arrive, queues what the kernel does not take at once up to a bound and
/// writes it when the socket is writable again. For ICE-TCP (RFC 6544) and TURN over TCP
/// (RFC 8656 §3.1); the framing (RFC 4571, STUN/ChannelData) is the owner's, on top.
///
/// Thread safety: create, use and close it on its loop (checked: its state is a
/// `LoopBoundBox`, and any use off the loop traps). It is `Sendable` so an owner can hold it in
/// a closure submitted to the loop.
public final class EventLoopTCPSocket: Sendable {

  /// Called on the loop with each event.
  public typealias EventHandler = (EventLoopTCPEvent) -> Void

  /// The loop that serves this socket.
  public let loop: EventLoop
  /// The peer's address.
  public let remoteAddress: ICETransportAddress
  /// The local address (the kernel's choice of port for a connecting socket), once known.
  public var localAddress: ICETransportAddress? { state.value.localAddress }
  /// Whether the connection is up.
  public var isConnected: Bool { state.value.isConnected }
  /// `true` after `close()` or once the connection ended.
  public var isClosed: Bool { state.value.isClosed }
  /// Bytes read so far.
  public var bytesReceived: Int { state.value.bytesReceived }
  /// Bytes handed to the kernel so far.
  public var bytesSent: Int { state.value.bytesSent }
  /// Bytes queued, waiting for the socket to become writable. Like every property here, read
  /// it on the loop (elsewhere it traps).
  public var queuedBytes: Int { state.value.queuedBytes }
  /// The most bytes `write` queues (see `EventLoopTCPError.writeBufferFull`).
  public let maximumQueuedBytes: Int

  /// What changes, on the loop only.
  private struct State {
    var localAddress: ICETransportAddress?
    var isConnected = false
    var isClosed = false
    var bytesReceived = 0
    var bytesSent = 0
    var onEvent: EventHandler?
    var pending: [UInt8] = []
    var pendingStart = 0
    /// The receive buffer (`readChunk` bytes once the first read needs it).
    var buffer: [UInt8] = []
    var connectTimer: EventLoopTimer?
    var watchingWrites = false

    var queuedBytes: Int { pending.count - pendingStart }
  }

  private let state: LoopBoundBox<State>
  private let descriptor: Int32
  /// Bytes read per readiness event before yielding to timers and other sockets.
  private static let readBudget = 1 << 18
  private static let readChunk = 1 << 16

  /// Starts connecting to `address`; `.connected` or `.closed(error)` follows on the loop
  /// (`.connectTimedOut` after `timeout`). Call on the loop.
  ///
  /// - Parameters:
  ///   - loop: the loop that serves it.
  ///   - address: the peer (a TURN server, an ICE-TCP passive candidate).
  ///   - timeout: how long the connect may take.
  ///   - maximumQueuedBytes: the bound of the write queue (1 MiB by default).
  ///   - onEvent: called on the loop with each event.
  /// - Throws: `EventLoopTCPError.socketCreationFailed`, or `.connectFailed` when `connect()`
  ///   fails at once (no route, a bad address).
  public static func connect(
    loop: EventLoop, to address: ICETransportAddress, timeout: Duration = .seconds(10),
    maximumQueuedBytes: Int = 1 << 20, onEvent: @escaping EventHandler
  ) throws(EventLoopTCPError) -> EventLoopTCPSocket {
    loop.assertInEventLoop()
    let descriptor = try makeDescriptor(family: address.ip.isIPv6 ? AF_INET6 : AF_INET)
    let result = SocketAddress.with(address) { Glibc.connect(descriptor, $0, $1) }
    let connectErrno = errno
    guard result == 0 || connectErrno == EINPROGRESS else {
      Glibc.close(descriptor)
      throw .connectFailed(address: address, errno: connectErrno)
    }
    let socket = EventLoopTCPSocket(
      loop: loop, descriptor: descriptor, remoteAddress: address,
      maximumQueuedBytes: maximumQueuedBytes, onEvent: onEvent)
    if result == 0 {
      // Connected at once (loopback may): reported from the loop, after the caller kept it.
      socket.state.value.connectTimer = loop.schedule(after: .zero) {
        [reference = WeakReference(socket)] in reference.object?.finishConnect()
      }
    } else {
      let seconds = MediaDuration(timeout).seconds
      socket.state.value.connectTimer = loop.schedule(after: timeout) {
        [reference = WeakReference(socket)] in
        reference.object?.end(.connectTimedOut(address: address, seconds: seconds))
      }
    }
    socket.watch()
    return socket
  }

  /// An accepted connection (see `EventLoopTCPListener`): connected from the start; the owner
  /// sets the handler with `setEventHandler` before the loop turns.
  init(
    loop: EventLoop, accepted descriptor: Int32, remoteAddress: ICETransportAddress,
    maximumQueuedBytes: Int
  ) {
    self.loop = loop
    self.descriptor = descriptor
    self.remoteAddress = remoteAddress
    self.maximumQueuedBytes = maximumQueuedBytes
    state = LoopBoundBox(
      State(localAddress: Self.localAddress(of: descriptor), isConnected: true), loop: loop)
    watch()
  }

  private init(
    loop: EventLoop, descriptor: Int32, remoteAddress: ICETransportAddress,
    maximumQueuedBytes: Int, onEvent: @escaping EventHandler
  ) {
    self.loop = loop
    self.descriptor = descriptor
    self.remoteAddress = remoteAddress
    self.maximumQueuedBytes = maximumQueuedBytes
    state = LoopBoundBox(State(onEvent: onEvent), loop: loop)
  }

  deinit {
    let state = state.valueInOwnersDeinit
    guard !state.isClosed else { return }
    let loop = loop
    let descriptor = descriptor
    let timer = state.connectTimer
    // As `EventLoopUDPSocket`: the loop stops watching before the number can be reused.
    let release: @Sendable () -> Void = {
      if let timer { loop.cancel(timer) }
      loop.unwatch(descriptor)
      Glibc.close(descriptor)
    }
    if loop.inEventLoop { release() } else { loop.execute(release) }
  }

  /// Replaces the event handler. Call on the loop.
  public func setEventHandler(_ handler: @escaping EventHandler) {
    loop.assertInEventLoop()
    state.value.onEvent = handler
  }

  /// Sends `bytes` in order after everything written before: what the kernel does not take at
  /// once is queued and written when the socket is writable. Before the connection is up all
  /// of it is queued. Call on the loop.
  ///
  /// - Throws: `EventLoopTCPError.socketClosed`; `.writeBufferFull` when the queue would pass
  ///   `maximumQueuedBytes` (nothing is queued then: a caller sending whole frames keeps the
  ///   stream's framing); `.connectionFailed` when `send()` fails (the connection then ends,
  ///   with `.closed` reported on the next loop turn, never from inside this call).
  public func write(_ bytes: some Collection<UInt8>) throws(EventLoopTCPError) {
    loop.assertInEventLoop()
    guard !state.value.isClosed else { throw .socketClosed }
    guard !bytes.isEmpty else { return }
    if queuedBytes > 0 || !state.value.isConnected {
      guard queuedBytes + bytes.count <= maximumQueuedBytes else {
        throw .writeBufferFull(queued: queuedBytes, offered: bytes.count, limit: maximumQueuedBytes)
      }
      state.value.pending.append(contentsOf: bytes)
      return
    }
    let sent = try transmit(bytes, byOwner: true)
    let rest = bytes.count - sent
    guard rest > 0 else { return }
    guard rest <= maximumQueuedBytes else {
      // Part of it is in the kernel already: the stream cannot take the rest back out, so the
      // connection ends rather than carrying a broken frame.
      end(.writeBufferFull(queued: 0, offered: rest, limit: maximumQueuedBytes), later: true)
      throw .writeBufferFull(queued: 0, offered: rest, limit: maximumQueuedBytes)
    }
    state.value.pending.append(contentsOf: bytes.dropFirst(sent))
    updateWatch()
  }

  /// Closes the connection at once (queued bytes are dropped); no event follows. Call on the
  /// loop; calling it again is harmless.
  public func close() {
    loop.assertInEventLoop()
    guard !state.value.isClosed else { return }
    release()
  }

  // MARK: - Internals

  static func makeDescriptor(family: Int32) throws(EventLoopTCPError) -> Int32 {
    let type =
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
      | Int32(SOCK_CLOEXEC.rawValue)
    let descriptor = socket(family, type, 0)
    guard descriptor >= 0 else { throw .socketCreationFailed(errno: errno) }
    // Media and STUN are small and latency-bound: no Nagle delay.
    var one: Int32 = 1
    _ = setsockopt(
      descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    return descriptor
  }

  static func localAddress(of descriptor: Int32) -> ICETransportAddress? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let result = withUnsafeMutablePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(descriptor, $0, &length)
      }
    }
    guard result == 0 else { return nil }
    return SocketAddress.decode(&storage)
  }

  private func watch() {
    state.value.watchingWrites = !state.value.isConnected || queuedBytes > 0
    let reference = WeakReference(self)
    let events = Int16(POLLIN) | (state.value.watchingWrites ? Int16(POLLOUT) : 0)
    loop.watch(descriptor, events: events) { reference.object?.ready($0) }
  }

  /// Asks for `POLLOUT` only while a connect is pending or bytes wait: a writable socket is
  /// writable almost always, and level-triggered polling would spin on it.
  private func updateWatch() {
    let wanted = !state.value.isConnected || queuedBytes > 0
    guard wanted != state.value.watchingWrites, !state.value.isClosed else { return }
    watch()
  }

  private func ready(_ events: Int16) {
    guard !state.value.isClosed else { return }
    if !state.value.isConnected {
      // POLLOUT or POLLERR ends a pending connect; SO_ERROR says how.
      guard events & (Int16(POLLOUT) | Int16(POLLERR) | Int16(POLLHUP)) != 0 else { return }
      var error: Int32 = 0
      var length = socklen_t(MemoryLayout<Int32>.size)
      _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
      guard error == 0 else {
        end(.connectFailed(address: remoteAddress, errno: error))
        return
      }
      finishConnect()
      return
    }
    if events & Int16(POLLOUT) != 0 { flush() }
    if !state.value.isClosed, events & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 {
      readAvailable()
    }
  }

  private func finishConnect() {
    guard !state.value.isClosed, !state.value.isConnected else { return }
    if let timer = state.value.connectTimer { loop.cancel(timer) }
    state.value.connectTimer = nil
    state.value.isConnected = true
    state.value.localAddress = Self.localAddress(of: descriptor)
    let onEvent = state.value.onEvent
    onEvent?(.connected)
    guard !state.value.isClosed else { return }
    flush()
    updateWatch()
  }

  private func flush() {
    guard queuedBytes > 0 else {
      updateWatch()
      return
    }
    let sent: Int
    do throws(EventLoopTCPError) {
      sent = try transmit(state.value.pending[state.value.pendingStart...], byOwner: false)
    } catch {
      return
    }
    state.value.pendingStart += sent
    if state.value.pendingStart == state.value.pending.count {
      state.value.pending.removeAll(keepingCapacity: true)
      state.value.pendingStart = 0
    } else if state.value.pendingStart > state.value.pending.count / 2 {
      let start = state.value.pendingStart
      state.value.pending.removeFirst(start)
      state.value.pendingStart = 0
    }
    updateWatch()
  }

  /// Hands what the kernel takes of `bytes` to it; returns how many it took. A failure ends
  /// the connection (reported, after the owner's call when `byOwner`) and throws.
  private func transmit(_ bytes: some Collection<UInt8>, byOwner: Bool) throws(EventLoopTCPError)
    -> Int
  {
    let result: Int? = bytes.withContiguousStorageIfAvailable { buffer in
      Glibc.send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
    }
    let sent: Int
    if let result {
      sent = result
    } else {
      let copy = Array(bytes)
      sent = copy.withUnsafeBytes {
        Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
    }
    if sent >= 0 {
      state.value.bytesSent += sent
      return sent
    }
    let code = errno
    if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return 0 }
    end(.connectionFailed(errno: code), later: byOwner)
    throw .connectionFailed(errno: code)
  }

  private func readAvailable() {
    // Allocated on the first read, then reused: a busy stream reads many times a second. Taken
    // out of the state while the handler runs, as the handler may write to or close this socket.
    var buffer = state.value.buffer
    state.value.buffer = []
    if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: Self.readChunk) }
    defer { state.value.buffer = buffer }
    var total = 0
    while total < Self.readBudget, !state.value.isClosed {
      let count = buffer.withUnsafeMutableBytes {
        Glibc.recv(descriptor, $0.baseAddress, $0.count, 0)
      }
      if count > 0 {
        total += count
        state.value.bytesReceived += count
        let onEvent = state.value.onEvent
        buffer.withUnsafeBytes {
          onEvent?(.received(UnsafeRawBufferPointer(rebasing: $0[0..<count])))
        }
      } else if count == 0 {
        end(nil)
        return
      } else {
        let code = errno
        if code == EAGAIN || code == EWOULDBLOCK { return }
        if code == EINTR { continue }
        end(.connectionFailed(errno: code))
        return
      }
    }
  }

  private func release() {
    state.value.isClosed = true
    state.value.isConnected = false
    if let timer = state.value.connectTimer { loop.cancel(timer) }
    state.value.connectTimer = nil
    state.value.pending = []
    state.value.pendingStart = 0
    loop.unwatch(descriptor)
    Glibc.close(descriptor)
  }

  /// Ends the connection and reports why: at once, or `later` (on a zero-delay timer) when
  /// the owner is inside a `write` and must not be re-entered by its own handler.
  private func end(_ error: EventLoopTCPError?, later: Bool = false) {
    guard !state.value.isClosed else { return }
    release()
    let handler = state.value.onEvent
    state.value.onEvent = nil
    guard let handler else { return }
    if later {
      _ = loop.schedule(after: .zero) { handler(.closed(error)) }
    } else {
      handler(.closed(error))
    }
  }
}

/// A listening TCP socket on an `EventLoop`: each accepted connection is handed to `onAccept`
/// as a connected `EventLoopTCPSocket` (for the local server's ICE-TCP passive candidates and
/// for tests). Create, use and close it on its loop (checked: its state is a `LoopBoundBox`).
public final class EventLoopTCPListener: Sendable {

  /// Called on the loop with each accepted connection; set its handler there.
  public typealias AcceptHandler = (EventLoopTCPSocket) -> Void

  /// The loop that serves it.
  public let loop: EventLoop
  /// The bound address (the real port when bound to port 0).
  public let localAddress: ICETransportAddress
  /// The write bound of accepted sockets.
  public let maximumQueuedBytes: Int
  /// Connections accepted so far. On the loop.
  public var accepted: Int { state.value.accepted }
  /// `true` after `close()`. On the loop.
  public var isClosed: Bool { state.value.isClosed }

  private let descriptor: Int32
  /// What changes, and the handler (not `Sendable`: it runs on the loop).
  private struct State {
    var accepted = 0
    var isClosed = false
    let onAccept: AcceptHandler
  }
  private let state: LoopBoundBox<State>

  /// Binds to `address`, listens and accepts on `loop`. Call on the loop.
  ///
  /// - Throws: `EventLoopTCPError.socketCreationFailed` or `.bindFailed`.
  public init(
    loop: EventLoop, bindingTo address: ICETransportAddress, backlog: Int32 = 64,
    maximumQueuedBytes: Int = 1 << 20, onAccept: @escaping AcceptHandler
  ) throws(EventLoopTCPError) {
    loop.assertInEventLoop()
    // TCP_NODELAY on the listener is inherited by the accepted sockets (Linux).
    let descriptor = try EventLoopTCPSocket.makeDescriptor(
      family: address.ip.isIPv6 ? AF_INET6 : AF_INET)
    var one: Int32 = 1
    _ = setsockopt(
      descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    let bound = SocketAddress.with(address) { Glibc.bind(descriptor, $0, $1) }
    guard bound == 0, listen(descriptor, backlog) == 0,
      let local = EventLoopTCPSocket.localAddress(of: descriptor)
    else {
      let code = errno
      Glibc.close(descriptor)
      throw .bindFailed(address: address, errno: code)
    }
    self.loop = loop
    self.descriptor = descriptor
    self.localAddress = local
    self.maximumQueuedBytes = maximumQueuedBytes
    state = LoopBoundBox(State(onAccept: onAccept), loop: loop)
    let reference = WeakReference(self)
    loop.watch(descriptor) { reference.object?.acceptAvailable() }
  }

  deinit {
    guard !state.valueInOwnersDeinit.isClosed else { return }
    let loop = loop
    let descriptor = descriptor
    let release: @Sendable () -> Void = {
      loop.unwatch(descriptor)
      Glibc.close(descriptor)
    }
    if loop.inEventLoop { release() } else { loop.execute(release) }
  }

  /// Stops listening; accepted sockets stay open. Call on the loop.
  public func close() {
    loop.assertInEventLoop()
    guard !isClosed else { return }
    state.value.isClosed = true
    loop.unwatch(descriptor)
    Glibc.close(descriptor)
  }

  private func acceptAvailable() {
    // A bounded batch per readiness event, so a connection flood cannot hold the loop.
    for _ in 0..<64 where !isClosed {
      var storage = sockaddr_storage()
      var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
      let client = withUnsafeMutablePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          accept(descriptor, $0, &length)
        }
      }
      guard client >= 0 else { return }
      _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
      _ = fcntl(client, F_SETFD, FD_CLOEXEC)
      guard let remote = SocketAddress.decode(&storage) else {
        Glibc.close(client)
        continue
      }
      state.value.accepted += 1
      let socket = EventLoopTCPSocket(
        loop: loop, accepted: client, remoteAddress: remote,
        maximumQueuedBytes: maximumQueuedBytes)
      let onAccept = state.value.onAccept
      onAccept(socket)
    }
  }
}
