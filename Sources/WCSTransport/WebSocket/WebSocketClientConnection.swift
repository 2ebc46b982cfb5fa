import COpenSSL
import CWebSockets
import Foundation
import Synchronization

/// One client connection: its own libwebsockets context and service thread; the TLS client
/// context (trust store) is shared by the process (`ClientTLSContext`).
///
/// Thread safety (`@unchecked Sendable`): the fields under "service thread only" are read and
/// written only by the service thread (its run loop and the libwebsockets callback, which lws
/// calls on that thread); everything another thread touches is in `shared` (a `Mutex`) or
/// immutable. Other threads reach libwebsockets only through `lws_cancel_service`, called under
/// the lock so the context cannot be destroyed meanwhile.
final class WebSocketClientConnection: @unchecked Sendable {
  /// Largest incoming message, in bytes; a bigger one closes the connection with 1009.
  static let maximumMessageSize = 64 << 20
  /// Payload bytes per outgoing frame; longer messages go out as continuation frames.
  static let fragmentSize = 64 << 10

  private struct Shared {
    var context: LWSContextHandle?
    var outgoing: [[UInt8]] = []
    var closeRequest: WebSocketClosePayload?
    var timedOut = false
    var isOpen = false
    var finished = false
  }

  let endpoint: WebSocketEndpoint
  let options: SignalingConnectOptions
  private let handler: @Sendable (SignalingEvent) -> Void
  private let events = DispatchQueue(label: "WCSTransport.WebSocket.events")
  private let shared = Mutex(Shared())
  private let stopped = DispatchSemaphore(value: 0)

  // Service thread only.
  private var wsi: OpaquePointer?
  private var assembler = WebSocketMessageAssembler(maximumSize: maximumMessageSize)
  private var outbox = WebSocketOutbox(fragmentSize: fragmentSize)
  private var closing: WebSocketClosePayload?
  private var peerClose: WebSocketClosePayload?
  private var terminated = false

  init(
    endpoint: WebSocketEndpoint, options: SignalingConnectOptions,
    handler: @escaping @Sendable (SignalingEvent) -> Void
  ) {
    self.endpoint = endpoint
    self.options = options
    self.handler = handler
  }

  // MARK: any thread

  /// Starts the service thread and the connect timer.
  func start() {
    let thread = Thread { [self] in run() }
    thread.name = "wcs-ws-client"
    thread.start()
    let timeout = max(0, options.connectTimeout)
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
      guard let self else { return }
      shared.withLock { $0.timedOut = true }
      wake()
    }
  }

  /// Queues a text message; fails with `.notConnected` unless open and not closing.
  func send(_ text: String) -> Result<Void, SignalingTransportError> {
    let queued = shared.withLock { state -> Bool in
      guard state.isOpen, !state.finished, state.closeRequest == nil else { return false }
      state.outgoing.append(Array(text.utf8))
      return true
    }
    guard queued else { return .failure(.notConnected) }
    wake()
    return .success(())
  }

  /// Asks for a clean close; the first request wins.
  func close(code: Int, reason: String) {
    shared.withLock { state in
      if state.closeRequest == nil {
        state.closeRequest = WebSocketClosePayload(code: code, reason: reason)
      }
    }
    wake()
  }

  /// Blocks until the service thread has released its context, or `timeout` seconds passed.
  func waitUntilStopped(timeout: Double) -> Bool {
    guard stopped.wait(timeout: .now() + timeout) == .success else { return false }
    stopped.signal()
    return true
  }

  private func wake() {
    shared.withLock { state in
      if let context = state.context { lws_cancel_service(context.pointer) }
    }
  }

  // MARK: service thread

  private func run() {
    liveServiceThreads.add(1, ordering: .relaxed)
    defer { liveServiceThreads.subtract(1, ordering: .relaxed) }
    LWSLibrary.quiet
    let allocations = LWSAllocations()
    defer {
      allocations.free()
      stopped.signal()
    }
    let tls: ClientTLSContext
    do {
      tls = try ClientTLSContext.context(for: trustStore)
    } catch {
      finish(.failed(error))
      return
    }
    _ = LWSLibrary.tlsLibrary
    var info = lws_context_creation_info()
    info.port = -1  // CONTEXT_PORT_NO_LISTEN: client only
    info.gid = -1
    info.uid = -1
    info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS)
    info.fd_limit_per_thread = 16
    info.user = Unmanaged.passUnretained(self).toOpaque()
    guard let context = lws_create_context(&info) else {
      finish(.failed(.connectionFailed(reason: "libwebsockets could not create a context")))
      return
    }
    var vhostInfo = lws_context_creation_info()
    vhostInfo.port = -1
    vhostInfo.vhost_name = allocations.string("wcs-client")
    vhostInfo.protocols = allocations.protocols(
      name: "wcs-signaling", callback: webSocketClientCallback,
      rxBufferSize: Self.fragmentSize)
    // On a vhost this flag is what enables TLS (see `LWSLibrary.tlsLibrary`).
    vhostInfo.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
    vhostInfo.provided_client_ssl_ctx = tls.pointer
    guard let vhost = lws_create_vhost(context, &vhostInfo) else {
      lws_context_destroy(context)
      finish(.failed(.connectionFailed(reason: "libwebsockets could not create a client vhost")))
      return
    }
    shared.withLock { $0.context = LWSContextHandle(pointer: context) }
    connect(context, vhost, allocations)
    while !terminated {
      processRequests()
      if terminated { break }
      lws_service(context, 0)
    }
    shared.withLock { $0.context = nil }
    lws_context_destroy(context)
    // libwebsockets does not free a provided SSL_CTX; ours must outlive the context.
    withExtendedLifetime(tls) {}
  }

  /// The trust anchors this connection's TLS checks against.
  private var trustStore: ClientTLSContext.TrustStore {
    guard endpoint.secure else { return .none }
    return options.caFile.map { .file($0) } ?? .system
  }

  private func connect(
    _ context: OpaquePointer, _ vhost: OpaquePointer, _ allocations: LWSAllocations
  ) {
    var info = lws_client_connect_info()
    info.context = context
    info.vhost = vhost
    info.address = allocations.string(endpoint.host)
    info.port = Int32(endpoint.port)
    info.path = allocations.string(endpoint.path)
    info.host = allocations.string(endpoint.hostHeader)
    info.origin = allocations.string(endpoint.hostHeader)
    info.ietf_version_or_minus_one = -1
    if endpoint.secure {
      var flags = Int32(LCCSCF_USE_SSL.rawValue)
      if !options.verifyCertificates {
        flags |= Int32(
          LCCSCF_ALLOW_SELFSIGNED.rawValue | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue
            | LCCSCF_ALLOW_EXPIRED.rawValue | LCCSCF_ALLOW_INSECURE.rawValue)
      }
      info.ssl_connection = flags
    }
    if lws_client_connect_via_info(&info) == nil {
      finish(.failed(.connectionFailed(reason: "could not start connecting to \(endpoint.host)")))
    }
  }

  private func processRequests() {
    let (messages, closeRequest, timedOut) = shared.withLock { state in
      let messages = state.outgoing
      state.outgoing = []
      return (messages, state.closeRequest, state.timedOut)
    }
    for message in messages { outbox.enqueue(message) }
    if let closeRequest, closing == nil {
      closing = closeRequest
      guard wsi != nil else {
        finish(.closed(code: closeRequest.code, reason: closeRequest.reason))
        return
      }
    }
    if let wsi, !messages.isEmpty || closing != nil { lws_callback_on_writable(wsi) }
    if timedOut, wsi == nil {
      finish(.failed(.connectTimeout(seconds: options.connectTimeout)))
    }
  }

  private func emit(_ event: SignalingEvent) {
    guard !terminated else { return }
    events.async { [handler] in handler(event) }
  }

  private func finish(_ event: SignalingEvent) {
    guard !terminated else { return }
    emit(event)
    terminated = true
    shared.withLock {
      $0.finished = true
      $0.isOpen = false
    }
  }

  /// The libwebsockets callback for this connection; returns non-zero to close.
  func handle(
    _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
  ) -> Int32 {
    switch reason {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
      return appendHeaders(wsi, input, length)
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
      guard !terminated else { return -1 }
      self.wsi = wsi
      shared.withLock { $0.isOpen = true }
      emit(.opened)
      processRequests()
    case LWS_CALLBACK_CLIENT_RECEIVE:
      return receive(wsi, input, length)
    case LWS_CALLBACK_CLIENT_WRITEABLE:
      return writeable(wsi)
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
      peerClose = WebSocketClosePayload(bytes: UnsafeRawBufferPointer(start: input, count: length))
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
      var detail = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
      // lws reports TLS failures as an opaque OpenSSL error; the verify result says why.
      if let ssl = lws_get_ssl(wsi) {
        let verify = SSL_get_verify_result(ssl)
        if verify != X509_V_OK, let text = X509_verify_cert_error_string(verify) {
          detail =
            "certificate verification failed: \(String(cString: text))"
            + (detail.map { " (\($0))" } ?? "")
        }
      }
      finish(.failed(.connectionFailed(reason: detail ?? "connection error")))
    case LWS_CALLBACK_CLIENT_CLOSED:
      if let closing {
        finish(.closed(code: closing.code, reason: closing.reason))
      } else if let peerClose {
        finish(.closed(code: peerClose.code, reason: peerClose.reason))
      } else {
        finish(.closed(code: 1006, reason: ""))
      }
      self.wsi = nil
    default:
      return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    return 0
  }

  private func appendHeaders(
    _ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int
  ) -> Int32 {
    guard let input else { return 0 }
    let cursor = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
    guard let start = cursor.pointee else { return 0 }
    let end = start + length
    var headers = options.headers.sorted { $0.key < $1.key }
    if let authorization = endpoint.basicAuthorization,
      !headers.contains(where: { $0.key.lowercased() == "authorization" })
    {
      headers.append((key: "Authorization", value: authorization))
    }
    for (name, value) in headers {
      let valueBytes = Array(value.utf8)
      let failed = (name + ":").withCString { cName in
        valueBytes.withUnsafeBufferPointer { bytes in
          lws_add_http_header_by_name(
            wsi, UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self), bytes.baseAddress,
            Int32(bytes.count), cursor, end)
        }
      }
      if failed != 0 { return -1 }
    }
    return 0
  }

  private func receive(
    _ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int
  ) -> Int32 {
    let piece = UnsafeRawBufferPointer(start: length > 0 ? input : nil, count: length)
    let first = lws_is_first_fragment(wsi) != 0
    let last = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
    let binary = lws_frame_is_binary(wsi) != 0
    do {
      guard let message = try assembler.append(piece, first: first, last: last, binary: binary)
      else { return 0 }
      // Signalling is text; a binary message is not for this layer and is dropped.
      if !message.binary { emit(.text(String(decoding: message.bytes, as: UTF8.self))) }
      return 0
    } catch {
      let payload = WebSocketClosePayload(code: 1009, reason: "message too big")
      closing = closing ?? payload
      LWSLibrary.setCloseReason(wsi, payload)
      return -1
    }
  }

  private func writeable(_ wsi: OpaquePointer) -> Int32 {
    if let frame = outbox.peek() {
      guard
        LWSLibrary.writeFrame(
          wsi, payload: frame.payload, first: frame.isFirst, final: frame.isFinal)
      else {
        finish(.failed(.connectionFailed(reason: "write failed")))
        return -1
      }
      outbox.advance()
      if !outbox.isEmpty || closing != nil { lws_callback_on_writable(wsi) }
      return 0
    }
    if let closing {
      LWSLibrary.setCloseReason(wsi, closing)
      return -1
    }
    return 0
  }
}

/// Client service threads inside their run loop (tests check that none is left after close).
let liveServiceThreads = Atomic<Int>(0)

/// The libwebsockets protocol callback of client contexts: finds the connection through the
/// context's user pointer and hands the call over.
func webSocketClientCallback(
  _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
  _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
  guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else {
    return 0
  }
  let connection = Unmanaged<WebSocketClientConnection>.fromOpaque(owner).takeUnretainedValue()
  return connection.handle(wsi, reason, user, input, length)
}
