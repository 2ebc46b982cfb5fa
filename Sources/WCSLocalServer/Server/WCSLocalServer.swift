import Dispatch
import Foundation
import WCSPeerConnection
import WCSTransport

/// The WCS-compatible local server, in process: WebSocket signalling (`ws`, optionally `wss`)
/// driven by `WCSServerCore`, a media engine behind `LocalServerMediaEngine`, and the records
/// directory over HTTP at `/client/records/` (wcs-protocol.md §6, §9).
///
/// `let server = try WCSLocalServer.start(configuration)`, connect clients to `server.wsURL`,
/// download records from `server.httpBaseURL + "/client/records/<name>"`, and call `stop()` when
/// done (it ends every session, so recordings are finished). The server keeps itself alive until
/// `stop()`.
///
/// Threading (`@unchecked Sendable`): the core, the engine and every `var` below are touched
/// only on `queue`, a serial queue that is activated after they are set up; the `let`s other
/// threads read are immutable values.
public final class WCSLocalServer: @unchecked Sendable {
  /// How often (ms) an engine without `LocalServerMediaEngineHooks` is polled for events while
  /// streams exist.
  public static let mediaPollMillis: Int64 = 20

  /// `ws://address:port/` of the signalling listener (the actual port when configured with 0).
  public let wsURL: String
  /// `wss://address:port/` when a secure listener runs, else `nil`.
  public let wssURL: String?
  /// `http://address:port` of the records server; records are at `/client/records/<name>`.
  public let httpBaseURL: String
  /// `http://address:port` of the legacy records port, when configured.
  public let legacyHTTPBaseURL: String?
  /// The directory recordings are written to and served from.
  public let recordsDirectory: String

  let queue: DispatchQueue
  private let listeners: [WebSocketServer]
  private let relay: LocalServerEventRelay
  private let logSink: @Sendable (String) -> Void
  private let clock: @Sendable () -> Int64

  // Queue only.
  private let core: WCSServerCore
  let engine: any LocalServerMediaEngine
  private let engineWakesUs: Bool
  private var timer: (any DispatchSourceTimer)?
  /// The SIP side of the gateway (SIP/WCSLocalServer+SIP.swift).
  var sipGateway: SIPGateway?
  private var connections: [WCSConnectionID: WebSocketServer.Connection] = [:]
  private var connectionIDs: [ObjectIdentifier: WCSConnectionID] = [:]
  private var nextConnectionID: UInt64 = 1
  private var stopped = false
  /// Connections `stop()` asked to close that have not reported `.closed` yet.
  private var closingAtStop: Set<ObjectIdentifier> = []
  private let closedAtStop = DispatchSemaphore(value: 0)

  /// How long `stop()` waits for clients to acknowledge the close before dropping them.
  static let closeGraceSeconds = 2.0

  private init(
    parts: LocalServerListeners, core: WCSServerCore, configuration: Configuration,
    engine: any LocalServerMediaEngine
  ) {
    wsURL = parts.wsURL
    wssURL = parts.wssURL
    httpBaseURL = parts.httpBaseURL
    legacyHTTPBaseURL = parts.legacyHTTPBaseURL
    recordsDirectory = configuration.recordsDirectory
    queue = parts.queue
    listeners = parts.servers
    relay = parts.relay
    logSink = configuration.logSink
    clock = configuration.clock
    self.core = core
    self.engine = engine
    engineWakesUs = engine is any LocalServerMediaEngineHooks
  }

  /// Opens the listeners and starts serving.
  /// - Throws: `WCSLocalServerStartError` when a port cannot be opened (nothing is left
  ///   listening then), `wss` lacks a certificate or key, or the records directory is unusable.
  public static func start(_ configuration: Configuration = Configuration())
    throws(WCSLocalServerStartError) -> WCSLocalServer
  {
    try prepareRecordsDirectory(configuration.recordsDirectory)
    // Off the first stream's setup (see `PeerConnection.prepareSecurity()`).
    PeerConnection.prepareSecurity()
    let sip = try SIPEventRelay.open(configuration.sipGateway)
    let parts = try LocalServerListeners.open(configuration)
    var signaling = configuration.signaling
    signaling.serverAddress = parts.serverAddress
    if signaling.hooks.recordNameTaken == nil {
      let directory = configuration.recordsDirectory
      signaling.hooks.recordNameTaken = { name in
        FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent(name))
      }
    }
    signaling.sipGatewayEnabled = configuration.sipGateway != nil
    let engine = configuration.mediaEngine ?? defaultEngine(configuration)
    let server = WCSLocalServer(
      parts: parts, core: WCSServerCore(configuration: signaling),
      configuration: configuration, engine: engine)
    // Safe before `activate()`: no block runs on the queue yet, so the relay's first reader
    // (a queue block) happens after this write.
    parts.relay.target = server
    if let hooks = engine as? any LocalServerMediaEngineHooks {
      hooks.attach(wakeUp: { [weak server] in
        guard let server else { return }
        server.queue.async { server.collectMediaEvents() }
      })
    }
    let timer = DispatchSource.makeTimerSource(queue: parts.queue)
    timer.setEventHandler { [weak server] in server?.timerFired() }
    timer.schedule(deadline: .distantFuture)
    timer.resume()
    server.timer = timer
    server.attach(sip)
    parts.queue.activate()
    let warning = exposureWarning(configuration)
    server.queue.async {
      var line = "wcs-local-server listening on \(server.wsURL)"
      if let wss = server.wssURL { line += " and \(wss)" }
      line += ", records at \(server.httpBaseURL)/client/records/"
      if let legacy = server.legacyHTTPBaseURL { line += " and \(legacy)/client/records/" }
      server.logSink(line)
      if let warning { server.logSink(warning) }
    }
    return server
  }

  /// Ends every session as if its client had disconnected (players get STOPPED, recordings are
  /// released and finished), closes the connections with 1001, stops the listeners and shuts
  /// the engine down. Blocks until done; later calls do nothing. Do not call it on the server's
  /// own queue (e.g. from the log sink).
  public func stop() {
    let state = queue.sync { () -> (wasRunning: Bool, waitForCloses: Bool) in
      guard !stopped else { return (false, false) }
      stopped = true
      timer?.cancel()
      timer = nil
      for id in connections.keys.sorted() {
        execute(core.connectionClosed(id, now: clock()))
        if let connection = connections[id] {
          closingAtStop.insert(ObjectIdentifier(connection))
          connection.close(code: 1001, reason: "server stopped")
        }
      }
      connections = [:]
      connectionIDs = [:]
      return (true, !closingAtStop.isEmpty)
    }
    guard state.wasRunning else { return }
    // Stopping the listeners drops sockets without a close frame; give clients a moment to get
    // the 1001 first.
    if state.waitForCloses { _ = closedAtStop.wait(timeout: .now() + Self.closeGraceSeconds) }
    for listener in listeners { listener.stop() }
    sipGateway?.stop()
    queue.sync {
      (engine as? any LocalServerMediaEngineHooks)?.shutdown()
      relay.target = nil
      logSink("wcs-local-server stopped")
    }
  }

  /// Open signalling sessions (WebSocket connections the core knows).
  public var sessionCount: Int { queue.sync { core.sessionCount } }
  /// Live streams, publishers and players.
  public var streamCount: Int { queue.sync { core.streamCount } }
  /// Rooms of `roomApp` with at least one member.
  public var roomCount: Int { queue.sync { core.roomCount } }
  /// Logins of a room's members in join order (empty when there is no such room).
  public func roomMembers(_ room: String) -> [String] { queue.sync { core.roomMembers(room) } }

  /// A warning when the server listens beyond loopback with no access control: anyone who
  /// can reach the ports may then publish, play and download every record.
  static func exposureWarning(_ configuration: Configuration) -> String? {
    let address = configuration.bindAddress
    let loopback = address.hasPrefix("127.") || address == "::1" || address == "localhost"
    guard !loopback, configuration.signaling.hooks.authorize == nil else { return nil }
    return "warning: listening on \(address) without access control: anyone who can reach it "
      + "may publish, play and download every record (use --token-file or "
      + "WCSServerHooks.authorize)"
  }

  /// The relay engine on `bindAddress`, recording into `recordsDirectory`, logging to the
  /// server's log sink.
  private static func defaultEngine(_ configuration: Configuration) -> LocalServerRelayEngine {
    var engine = LocalServerRelayEngine.Configuration(
      recordsDirectory: configuration.recordsDirectory, bindAddress: configuration.bindAddress)
    engine.log = configuration.logSink
    engine.statisticsInterval = configuration.statisticsInterval
    engine.snapshots = configuration.snapshots
    engine.peerConnection.networkEmulation = configuration.networkEmulation
    if configuration.signaling.iceTCPTransport { engine.peerConnection.iceCandidateProtocol = .tcp }
    return LocalServerRelayEngine(configuration: engine)
  }

  private static func prepareRecordsDirectory(_ path: String) throws(WCSLocalServerStartError) {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
      guard isDirectory.boolValue else {
        throw .recordsDirectory(path: path, reason: "not a directory")
      }
      return
    }
    do {
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true)
    } catch {
      throw .recordsDirectory(path: path, reason: error.localizedDescription)
    }
  }

  // MARK: - Queue only

  func receive(_ event: WebSocketServer.Event) {
    guard !stopped else {
      switch event {
      case .connected(let connection): connection.close(code: 1001, reason: "server stopped")
      case .closed(let connection, _, _):
        if closingAtStop.remove(ObjectIdentifier(connection)) != nil, closingAtStop.isEmpty {
          closedAtStop.signal()
        }
      case .text: break
      }
      return
    }
    switch event {
    case .connected(let connection):
      let id = WCSConnectionID(nextConnectionID)
      nextConnectionID += 1
      connections[id] = connection
      connectionIDs[ObjectIdentifier(connection)] = id
      execute(
        core.connectionOpened(id, remoteAddress: connection.remoteAddress, now: clock()))
      if let line = LocalServerUpgradeLog.line(session: id, headers: connection.headers) {
        logSink(line)
      }
    case .text(let connection, let text):
      guard let id = connectionIDs[ObjectIdentifier(connection)] else { return }
      execute(core.textReceived(id, text, now: clock()))
    case .closed(let connection, _, _):
      guard let id = connectionIDs.removeValue(forKey: ObjectIdentifier(connection)) else {
        return
      }
      connections[id] = nil
      execute(core.connectionClosed(id, now: clock()))
    }
  }

  /// Performs `initial` in order, feeding media events back into the core until the engine
  /// has nothing more to say, then re-arms the timer.
  func execute(_ initial: [WCSServerAction]) {
    var pending = initial
    while !pending.isEmpty {
      var engineTouched = false
      for action in pending {
        switch action {
        case .send(let id, let text): connections[id]?.send(text)
        case .close(let id, let code, let reason):
          if let connection = connections.removeValue(forKey: id) {
            connectionIDs[ObjectIdentifier(connection)] = nil
            connection.close(code: code, reason: reason)
          }
        case .log(let line): logSink(line)
        case .sip(let command): sipGateway?.perform(command)
        case .media(let request):
          engine.perform(request)
          engineTouched = true
        case .authorize(let check): authorize(check)
        }
      }
      pending = engineTouched ? mediaActions() : []
    }
    reschedule()
  }

  /// Runs the access hook off the queue and feeds its answer back on it.
  private func authorize(_ check: WCSAccessCheck) {
    guard let hook = core.configuration.hooks.authorize else {
      execute(core.accessDecided(check.id, .allow, now: clock()))
      return
    }
    Task { [weak self] in
      let decision = await hook(check.request)
      guard let self else { return }
      self.queue.async {
        guard !self.stopped else { return }
        self.execute(self.core.accessDecided(check.id, decision, now: self.clock()))
      }
    }
  }

  private func mediaActions() -> [WCSServerAction] {
    let events = engine.takeEvents()
    guard !events.isEmpty else { return [] }
    let now = clock()
    return events.flatMap { core.mediaEvent($0, now: now) }
  }

  func coreSIPEvent(_ event: SIPGatewayEvent) -> [WCSServerAction] {
    stopped ? [] : core.sipEvent(event, now: clock())
  }

  func collectMediaEvents() {
    guard !stopped else { return }
    execute(mediaActions())
  }

  private func timerFired() {
    guard !stopped else { return }
    let now = clock()
    var actions = core.tick(now: now)
    if !engineWakesUs { actions += mediaActions() }
    execute(actions)
  }

  private func reschedule() {
    guard let timer else { return }
    var deadline = core.nextDeadline
    if !engineWakesUs, core.streamCount > 0 {
      let poll = clock() + Self.mediaPollMillis
      deadline = min(deadline ?? poll, poll)
    }
    guard let deadline else {
      timer.schedule(deadline: .distantFuture)
      return
    }
    let delay = max(0, deadline - clock())
    timer.schedule(deadline: .now() + .milliseconds(Int(clamping: delay)))
  }
}
