import Dispatch
import Foundation
import Synchronization
import WCSTransport

/// Hands listener events to the server on its queue. `target` is set before the queue is
/// activated and cleared by `stop()` on the queue, and read in queue blocks: the lock is never
/// contended, it only makes that ordering checked.
final class LocalServerEventRelay: Sendable {
  private let server = Mutex<WCSLocalServer?>(nil)

  var target: WCSLocalServer? {
    get { server.withLock { $0 } }
    set { server.withLock { $0 = newValue } }
  }
}

/// The listening sockets of one `WCSLocalServer`, opened before the server object exists.
struct LocalServerListeners {
  let queue: DispatchQueue
  let relay: LocalServerEventRelay
  let servers: [WebSocketServer]
  let wsURL: String
  let wssURL: String?
  let httpBaseURL: String
  let legacyHTTPBaseURL: String?
  let serverAddress: String

  static let recordsMountPoint = "/client/records"

  /// The HTTP check asking `hook` about each record download: the token from `?token=` or
  /// `Authorization: Bearer`, the file name after the mount point.
  static func recordAccess(
    _ hook: @escaping @Sendable (WCSAccessRequest) -> WCSAccessDecision
  ) -> WebSocketServer.FileAccessCheck {
    WebSocketServer.FileAccessCheck { request in
      var token = request.queryValue("token")
      if token == nil, let authorization = request.authorization,
        authorization.lowercased().hasPrefix("bearer ")
      {
        token = String(authorization.dropFirst("bearer ".count))
      }
      let name =
        request.path.hasPrefix(recordsMountPoint + "/")
        ? String(request.path.dropFirst(recordsMountPoint.count + 1)) : request.path
      return hook(
        WCSAccessRequest(
          action: .recordDownload, remoteAddress: request.remoteAddress, token: token,
          fields: ["name": .string(name)])) == .allow
    }
  }

  /// Opens ws (+ records HTTP), then wss and the legacy HTTP port when configured; on any
  /// failure stops what was opened and throws.
  static func open(
    _ configuration: WCSLocalServer.Configuration
  ) throws(WCSLocalServerStartError) -> LocalServerListeners {
    if configuration.wssPort != nil,
      configuration.certificatePath == nil || configuration.privateKeyPath == nil
    {
      throw .missingCertificate
    }
    let queue = DispatchQueue(label: "WCSLocalServer", attributes: .initiallyInactive)
    let relay = LocalServerEventRelay()
    let handler: @Sendable (WebSocketServer.Event) -> Void = { event in
      queue.async { relay.target?.receive(event) }
    }
    let address = configuration.bindAddress
    var opened: [WebSocketServer] = []
    func startOne(
      _ name: String, _ settings: WebSocketServer.Configuration,
      _ eventHandler: @escaping @Sendable (WebSocketServer.Event) -> Void
    ) throws(WCSLocalServerStartError) -> WebSocketServer {
      let server = WebSocketServer(configuration: settings, handler: eventHandler)
      do {
        try server.start()
      } catch {
        for other in opened { other.stop() }
        // libdispatch traps when an inactive queue is released.
        queue.activate()
        throw .listen(WebSocketServerStartFailure(listener: name, reason: error.description))
      }
      opened.append(server)
      return server
    }
    let records = WebSocketServer.FileMount(
      mountPoint: recordsMountPoint, directory: configuration.recordsDirectory,
      port: configuration.httpPort,
      access: configuration.signaling.hooks.authorizeRecordDownload.map(recordAccess))
    let ws = try startOne(
      "ws",
      .init(
        address: address, port: configuration.wsPort, files: records,
        maximumMessageSize: configuration.maximumMessageSize,
        maximumOutboxSize: configuration.maximumOutboxSize), handler)
    let host = address.contains(":") ? "[\(address)]" : address
    var wssURL: String?
    if let wssPort = configuration.wssPort {
      let wss = try startOne(
        "wss",
        .init(
          address: address, port: wssPort, certificatePath: configuration.certificatePath,
          privateKeyPath: configuration.privateKeyPath,
          maximumMessageSize: configuration.maximumMessageSize,
          maximumOutboxSize: configuration.maximumOutboxSize), handler)
      wssURL = "wss://\(host):\(wss.port)/"
    }
    var legacyURL: String?
    if let legacyPort = configuration.legacyHTTPPort {
      // A file-only listener: its WebSocket side (on a free port) turns every client away.
      var mount = records
      mount.port = legacyPort
      let legacy = try startOne("http", .init(address: address, port: 0, files: mount)) {
        event in
        if case .connected(let connection) = event {
          connection.close(code: 1008, reason: "records only")
        }
      }
      legacyURL = "http://\(host):\(legacy.httpPort ?? legacyPort)"
    }
    return LocalServerListeners(
      queue: queue, relay: relay, servers: opened, wsURL: "ws://\(host):\(ws.port)/",
      wssURL: wssURL, httpBaseURL: "http://\(host):\(ws.httpPort ?? configuration.httpPort)",
      legacyHTTPBaseURL: legacyURL, serverAddress: "\(address):\(ws.port)")
  }
}
