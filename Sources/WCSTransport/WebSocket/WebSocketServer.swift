import COpenSSL
import CWebSockets
import Foundation
import Synchronization

/// A WebSocket server (RFC 6455) on libwebsockets, for the local WCS server and tests: `ws` or
/// `wss` on one port, any request path, text messages in up to
/// `Configuration.maximumMessageSize` (1 MiB by default) and out of any size, at most
/// `Configuration.maximumOutboxSize` queued per connection, and optionally a directory served
/// over plain HTTP on a second port.
///
/// One libwebsockets context and one service thread per server. Thread safety
/// (`@unchecked Sendable`): the fields under "service thread only" are touched only by the
/// service thread (and by `start()` before that thread exists); everything other threads touch
/// is in `shared` (a `Mutex`) or immutable.
public final class WebSocketServer: @unchecked Sendable {
  enum Command {
    case send([UInt8])
    case close(WebSocketClosePayload)
  }

  private struct Shared {
    var context: LWSContextHandle?
    var commands: [(id: Int, command: Command)] = []
    var liveIDs: Set<Int> = []
    var started = false
    var stopping = false
    var port = 0
    var httpPort: Int?
  }

  private final class Peer {
    let connection: Connection
    var assembler: WebSocketMessageAssembler
    var outbox: WebSocketOutbox
    var closing: WebSocketClosePayload?
    var peerClose: WebSocketClosePayload?
    init(_ connection: Connection, fragmentSize: Int, maximumMessageSize: Int) {
      self.connection = connection
      assembler = WebSocketMessageAssembler(maximumSize: maximumMessageSize)
      outbox = WebSocketOutbox(fragmentSize: fragmentSize)
    }
  }

  /// The settings given at creation.
  public let configuration: Configuration
  private let handler: @Sendable (Event) -> Void
  private let events = DispatchQueue(label: "WCSTransport.WebSocketServer.events")
  private let shared = Mutex(Shared())
  private let stopped = DispatchSemaphore(value: 0)

  /// Payload bytes per outgoing frame. Tests raise it to send a message as one big frame; set it
  /// before `start()` only (afterwards the service thread reads it).
  var outgoingFragmentSize = WebSocketClientConnection.fragmentSize

  // Service thread only.
  private var allocations = LWSAllocations()
  private var peers: [OpaquePointer: Peer] = [:]
  private var socketsByID: [Int: OpaquePointer] = [:]
  private var pendingUpgrades: [OpaquePointer: (path: String, headers: [String: String])] = [:]
  private var nextID = 1

  /// Creates a stopped server; `handler` gets every `Event` on a private serial queue.
  public init(
    configuration: Configuration = Configuration(),
    handler: @escaping @Sendable (Event) -> Void
  ) {
    self.configuration = configuration
    self.handler = handler
  }

  deinit { stop() }

  /// The WebSocket port being listened on (the chosen one when configured with 0); 0 before
  /// `start()`.
  public var port: Int { shared.withLock { $0.port } }

  /// The HTTP file port, when `configuration.files` is set and the server runs.
  public var httpPort: Int? { shared.withLock { $0.httpPort } }

  /// `ws://address:port` or `wss://address:port` of the running server.
  public var url: String {
    let scheme = configuration.certificatePath == nil ? "ws" : "wss"
    return "\(scheme)://\(configuration.address):\(port)"
  }

  /// Opens the listening sockets and starts the service thread.
  /// - Throws: `StartError.listenFailed` when a port cannot be bound (e.g. already in use),
  ///   `.contextFailed` when libwebsockets refuses the settings (e.g. unreadable certificate),
  ///   `.alreadyStarted` on a second call.
  public func start() throws(StartError) {
    let alreadyStarted = shared.withLock { state -> Bool in
      defer { state.started = true }
      return state.started
    }
    guard !alreadyStarted else { throw .alreadyStarted }
    LWSLibrary.quiet
    _ = LWSLibrary.tlsLibrary
    var info = lws_context_creation_info()
    // No DO_SSL_GLOBAL_INIT on the context (see `LWSLibrary.tlsLibrary`); the vhosts have it.
    info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS)
    info.gid = -1
    info.uid = -1
    info.fd_limit_per_thread = 1024
    info.user = Unmanaged.passUnretained(self).toOpaque()
    guard let context = lws_create_context(&info) else {
      throw .contextFailed("lws_create_context failed")
    }
    do throws(StartError) {
      let port = try createWebSocketVhost(context)
      let httpPort = try configuration.files.map { files throws(StartError) in
        try createFileVhost(context, files)
      }
      shared.withLock {
        $0.context = LWSContextHandle(pointer: context)
        $0.port = port
        $0.httpPort = httpPort
      }
    } catch {
      lws_context_destroy(context)
      allocations.free()
      stopped.signal()
      throw error
    }
    let handle = LWSContextHandle(pointer: context)
    let thread = Thread { [self] in run(handle.pointer) }
    thread.name = "wcs-ws-server"
    thread.start()
  }

  /// Closes every connection and listening socket and waits for the service thread to end.
  /// Connections report `.closed(code: 1001)`. Safe to call more than once.
  public func stop() {
    let wasRunning = shared.withLock { state -> Bool in
      guard state.started, !state.stopping else { return false }
      state.stopping = true
      if let context = state.context { lws_cancel_service(context.pointer) }
      return true
    }
    guard wasRunning else { return }
    stopped.wait()
    stopped.signal()
  }

  // MARK: start-up (before the service thread exists)

  private func createWebSocketVhost(_ context: OpaquePointer) throws(StartError) -> Int {
    var info = lws_context_creation_info()
    info.vhost_name = allocations.string("wcs-ws")
    info.iface = allocations.string(configuration.address)
    info.port = Int32(configuration.port)
    info.protocols = allocations.protocols(
      name: "wcs-signaling", callback: webSocketServerCallback,
      rxBufferSize: WebSocketClientConnection.fragmentSize)
    // lws enables TLS on a vhost only when the vhost's own options ask for the TLS init too.
    info.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
    // The vhost would otherwise build a client TLS context and parse the system CA bundle into
    // it (25–150 ms per start) for client connections a server never makes. The shared context
    // lives for the process.
    info.provided_client_ssl_ctx = (try? ClientTLSContext.context(for: .none))?.pointer
    info.ssl_cert_filepath = allocations.string(configuration.certificatePath)
    info.ssl_private_key_filepath = allocations.string(configuration.privateKeyPath)
    if configuration.certificatePath != nil {
      for path in [configuration.certificatePath, configuration.privateKeyPath] {
        guard let path, FileManager.default.isReadableFile(atPath: path) else {
          throw .contextFailed("TLS certificate or key not readable: \(path ?? "none")")
        }
      }
    }
    return try listen(context, &info, port: configuration.port)
  }

  private func createFileVhost(
    _ context: OpaquePointer, _ files: FileMount
  ) throws(StartError) -> Int {
    let mimeTypes = allocations.zeroed(lws_protocol_vhost_options.self, count: 4)
    let types = [
      (".webm", "video/webm"), (".mp4", "video/mp4"), (".json", "application/json"),
      ("*", "application/octet-stream"),
    ]
    for (index, (suffix, type)) in types.enumerated() {
      mimeTypes[index].name = allocations.string(suffix)
      mimeTypes[index].value = allocations.string(type)
      mimeTypes[index].next = index + 1 < types.count ? UnsafePointer(mimeTypes + index + 1) : nil
    }
    let mount = allocations.zeroed(lws_http_mount.self, count: 1)
    let mountPoint = files.mountPoint.hasPrefix("/") ? files.mountPoint : "/" + files.mountPoint
    mount.pointee.mountpoint = allocations.string(mountPoint)
    mount.pointee.mountpoint_len = UInt8(clamping: mountPoint.utf8.count)
    mount.pointee.origin = allocations.string(files.directory)
    mount.pointee.origin_protocol = UInt8(LWSMPRO_FILE.rawValue)
    mount.pointee.extra_mimetypes = UnsafePointer(mimeTypes)
    var info = lws_context_creation_info()
    info.vhost_name = allocations.string("wcs-http")
    info.iface = allocations.string(configuration.address)
    info.port = Int32(files.port)
    info.mounts = UnsafePointer(mount)
    info.protocols = allocations.protocols(
      name: "http", callback: webSocketServerHTTPCallback, rxBufferSize: 0)
    return try listen(context, &info, port: files.port)
  }

  private func listen(
    _ context: OpaquePointer, _ info: inout lws_context_creation_info, port: Int
  ) throws(StartError) -> Int {
    // libwebsockets listens on a dual-stack IPv6 socket unless told otherwise, and then binds the
    // wildcard address whatever `iface` says: an IPv4 bind address needs IPv6 off to be honoured.
    switch Self.addressFamily(of: configuration.address) {
    case AF_INET: info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
    case AF_INET6: break
    default:
      throw .listenFailed(
        address: configuration.address, port: port,
        reason: "the bind address must be an IPv4 or IPv6 address")
    }
    guard let vhost = lws_create_vhost(context, &info) else {
      let reason =
        info.ssl_cert_filepath != nil
        ? "address in use or not available, or TLS certificate/key rejected"
        : (port == 0 ? "no free port" : "address in use or not available")
      throw .listenFailed(address: configuration.address, port: port, reason: reason)
    }
    let actual = Int(lws_get_vhost_listen_port(vhost))
    guard actual > 0 else {
      throw .listenFailed(
        address: configuration.address, port: port, reason: "address in use or not available")
    }
    return actual
  }

  /// `AF_INET` or `AF_INET6` for an address literal, 0 for anything else (names included).
  static func addressFamily(of address: String) -> Int32 {
    var v4 = in_addr()
    if inet_pton(AF_INET, address, &v4) == 1 { return AF_INET }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, address, &v6) == 1 { return AF_INET6 }
    return 0
  }

  // MARK: any thread

  func enqueue(_ command: Command, for id: Int) -> Bool {
    shared.withLock { state -> Bool in
      guard state.liveIDs.contains(id), !state.stopping, let context = state.context else {
        return false
      }
      state.commands.append((id, command))
      lws_cancel_service(context.pointer)
      return true
    }
  }

  // MARK: service thread

  private func run(_ context: OpaquePointer) {
    while !shared.withLock({ $0.stopping }) {
      processCommands()
      lws_service(context, 0)
    }
    for peer in peers.values where peer.closing == nil {
      peer.closing = WebSocketClosePayload(code: 1001, reason: "server stopped")
    }
    shared.withLock { $0.context = nil }
    lws_context_destroy(context)
    for peer in peers.values { finish(peer) }
    peers = [:]
    allocations.free()
    stopped.signal()
  }

  private func processCommands() {
    let commands = shared.withLock { state in
      let commands = state.commands
      state.commands = []
      return commands
    }
    for (id, command) in commands {
      guard let wsi = socketsByID[id], let peer = peers[wsi] else { continue }
      switch command {
      case .send(let bytes):
        // Nothing more goes to a connection already closing (its queue may have been dropped).
        guard peer.closing == nil else { continue }
        peer.outbox.enqueue(bytes)
        if peer.outbox.pendingBytes > configuration.maximumOutboxSize {
          closeOverflowing(wsi, peer)
        }
      case .close(let payload): peer.closing = peer.closing ?? payload
      }
      lws_callback_on_writable(wsi)
    }
  }

  /// A connection whose queue passed `maximumOutboxSize`: the queue is dropped and a close
  /// with 1008 is sent when the socket takes it. A client that reads nothing never makes the
  /// socket writable, so libwebsockets is told to drop it after 2 s in any case.
  private func closeOverflowing(_ wsi: OpaquePointer, _ peer: Peer) {
    peer.outbox.removeAll()
    peer.closing = WebSocketClosePayload(
      code: 1008, reason: "outbox over \(configuration.maximumOutboxSize) bytes")
    lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 2)
  }

  private func emit(_ event: Event) {
    events.async { [handler] in handler(event) }
  }

  private func finish(_ peer: Peer) {
    let id = peer.connection.id
    shared.withLock { _ = $0.liveIDs.remove(id) }
    socketsByID[id] = nil
    let close = peer.closing ?? peer.peerClose ?? WebSocketClosePayload(code: 1006, reason: "")
    emit(.closed(peer.connection, code: close.code, reason: close.reason))
  }

  func handle(
    _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
  ) -> Int32 {
    switch reason {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
      // The request headers are still attached here; they are gone after the upgrade.
      var headers: [String: String] = [:]
      let known: [(String, lws_token_indexes)] = [
        ("authorization", WSI_TOKEN_HTTP_AUTHORIZATION), ("host", WSI_TOKEN_HOST),
        ("origin", WSI_TOKEN_ORIGIN), ("user-agent", WSI_TOKEN_HTTP_USER_AGENT),
      ]
      for (name, token) in known {
        headers[name] = LWSLibrary.header(wsi, token)
      }
      for name in configuration.capturedHeaders {
        headers[name.lowercased()] = LWSLibrary.customHeader(wsi, name)
      }
      var path = LWSLibrary.header(wsi, WSI_TOKEN_GET_URI) ?? "/"
      if let query = LWSLibrary.header(wsi, WSI_TOKEN_HTTP_URI_ARGS), !query.isEmpty {
        path += "?" + query
      }
      pendingUpgrades[wsi] = (path, headers)
    case LWS_CALLBACK_ESTABLISHED:
      let request = pendingUpgrades.removeValue(forKey: wsi) ?? ("/", [:])
      let id = nextID
      nextID += 1
      let connection = Connection(
        id: id, remoteAddress: LWSLibrary.peerAddress(wsi), path: request.path,
        headers: request.headers, server: self)
      peers[wsi] = Peer(
        connection, fragmentSize: outgoingFragmentSize,
        maximumMessageSize: configuration.maximumMessageSize)
      socketsByID[id] = wsi
      shared.withLock { _ = $0.liveIDs.insert(id) }
      emit(.connected(connection))
    case LWS_CALLBACK_RECEIVE:
      return receive(wsi, input, length)
    case LWS_CALLBACK_SERVER_WRITEABLE:
      return writeable(wsi)
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
      peers[wsi]?.peerClose = WebSocketClosePayload(
        bytes: UnsafeRawBufferPointer(start: input, count: length))
    case LWS_CALLBACK_CLOSED:
      if let peer = peers.removeValue(forKey: wsi) { finish(peer) }
    case LWS_CALLBACK_WSI_DESTROY:
      pendingUpgrades[wsi] = nil
    default:
      return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    return 0
  }

  private func receive(
    _ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int
  ) -> Int32 {
    guard let peer = peers[wsi] else { return -1 }
    let piece = UnsafeRawBufferPointer(start: length > 0 ? input : nil, count: length)
    let first = lws_is_first_fragment(wsi) != 0
    let last = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
    let binary = lws_frame_is_binary(wsi) != 0
    do {
      guard let message = try peer.assembler.append(piece, first: first, last: last, binary: binary)
      else { return 0 }
      if !message.binary {
        emit(.text(peer.connection, String(decoding: message.bytes, as: UTF8.self)))
      }
      return 0
    } catch {
      let payload = WebSocketClosePayload(code: 1009, reason: "message too big")
      peer.closing = peer.closing ?? payload
      LWSLibrary.setCloseReason(wsi, payload)
      return -1
    }
  }

  private func writeable(_ wsi: OpaquePointer) -> Int32 {
    guard let peer = peers[wsi] else { return 0 }
    if let frame = peer.outbox.peek() {
      guard
        LWSLibrary.writeFrame(
          wsi, payload: frame.payload, first: frame.isFirst, final: frame.isFinal)
      else { return -1 }
      peer.outbox.advance()
      if !peer.outbox.isEmpty || peer.closing != nil { lws_callback_on_writable(wsi) }
      return 0
    }
    if let closing = peer.closing {
      LWSLibrary.setCloseReason(wsi, closing)
      return -1
    }
    return 0
  }
}

/// The WebSocket vhost's protocol callback: finds the server through the context's user pointer.
func webSocketServerCallback(
  _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
  _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
  guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else {
    return lws_callback_http_dummy(wsi, reason, user, input, length)
  }
  let server = Unmanaged<WebSocketServer>.fromOpaque(owner).takeUnretainedValue()
  return server.handle(wsi, reason, user, input, length)
}

/// The file vhost's protocol callback: libwebsockets' own HTTP handling serves the mount, after
/// `filterFileRequest` let the request through.
func webSocketServerHTTPCallback(
  _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
  _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
  if reason == LWS_CALLBACK_FILTER_HTTP_CONNECTION, let wsi, let context = lws_get_context(wsi),
    let owner = lws_context_user(context)
  {
    let server = Unmanaged<WebSocketServer>.fromOpaque(owner).takeUnretainedValue()
    let uri =
      input.map {
        String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self)
      } ?? "/"
    return server.filterFileRequest(wsi, uri: uri)
  }
  return lws_callback_http_dummy(wsi, reason, user, input, length)
}
