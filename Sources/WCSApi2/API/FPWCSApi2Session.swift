import Dispatch
import Foundation
import Synchronization
import WCSMedia
import WCSTransport

/// One connection to a WCS server (`FPWCSApi2Session`, api-surface.md §2.4): creates and owns
/// streams. Created by `FPWCSApi2.createSession(_:)` (or `WCSSession`), it connects on `connect()`.
///
/// Threading: protocol state lives on a private serial queue; transport and media events hop onto
/// it; every app callback runs on the callback queue (`FPWCSApi2SessionOptions.callbackQueue`,
/// a private serial queue by default), never on a transport or media thread. Any method may be
/// called from any thread, including from inside a callback.
public final class FPWCSApi2Session: @unchecked Sendable {
  // @unchecked Sendable: every `var` below is touched only on `work` (see `onWork`); what other
  // threads read (status snapshot, callbacks) sits behind Mutexes.

  /// Session callback (`SessionCallback`): receives the session.
  public typealias SessionCallback = (FPWCSApi2Session?) -> Void
  /// App-data callback (`SessionAppDataCallback`).
  public typealias SessionAppDataCallback = (FPWCSApi2Session?, FPWCSApi2Data?) -> Void

  private struct Snapshot {
    var status: kFPWCSSessionStatus = .fpwcsSessionStatusNew
    var authToken: String?
    var failureReason: String?
    var refusedByServer = false
    var serverVersion: String?
    var streamIds: [String] = []
  }

  private struct Callbacks {
    var status: [kFPWCSSessionStatus: UncheckedBox<SessionCallback>] = [:]
    var appData: UncheckedBox<SessionAppDataCallback>?
    var statusContinuations: [UUID: AsyncStream<kFPWCSSessionStatus>.Continuation] = [:]
  }

  private static let workKey = DispatchSpecificKey<UInt>()
  private static let nextToken = Mutex<UInt>(1)

  let work: DispatchQueue
  private let workToken: UInt
  /// Where app callbacks run.
  public let callbackQueue: DispatchQueue
  private let core: SessionCore
  private let serverUrl: String
  private let sessionID = UUID().uuidString
  private let connectOptions: SignalingConnectOptions
  private let injectedTransport: (any SignalingTransport)?
  let backend: any MediaBackend
  private var transport: (any SignalingTransport)?
  private var transportGeneration = 0
  private let probesInterval: Double
  private var probeTimer: (any DispatchSourceTimer)?
  private var connections: [String: any MediaConnection] = [:]
  private var streamObjects: [String: FPWCSApi2Stream] = [:]
  private var availabilityCallbacks: [String: UncheckedBox<(Bool, String?) -> Void>] = [:]
  private var dataHandlers: [String: UncheckedBox<FPWCSApi2DataHandler>] = [:]
  private var dataContinuations: [String: CheckedContinuation<FPWCSApi2Data, any Error>] = [:]
  private var connectWaiters: [CheckedContinuation<Void, any Error>] = []
  private let snapshot = Mutex(Snapshot())
  private let callbacks = Mutex(Callbacks())
  private let skipped = Mutex<[String]>([])

  init(_ options: FPWCSApi2SessionOptions) throws(WCSError) {
    guard let url = options.urlServer?.trimmingCharacters(in: .whitespaces), !url.isEmpty else {
      throw .invalidOptions("urlServer must be provided")
    }
    guard url.hasPrefix("ws://") || url.hasPrefix("wss://") else {
      throw .invalidOptions("urlServer must be a ws:// or wss:// URL, got '\(url)'")
    }
    var config = SessionConnectionConfig()
    if let appKey = options.appKey, !appKey.isEmpty { config.appKey = appKey }
    if let custom = options.custom {
      config.custom = try JSONConversion.object(custom, path: "custom")
    }
    config.keepAlive = options.keepAlive
    config.authToken = options.authToken
    config.clientVersion = options.clientVersion
    config.clientOSVersion = ProcessInfo.processInfo.operatingSystemVersionString
    config.sip = Self.sipFields(options)
    config.receiveProbes = max(options.receiveProbes, 0)
    self.probesInterval = max(options.probesInterval, 0.001)
    self.core = SessionCore(config: config)
    self.serverUrl = url
    self.connectOptions = options.connectOptions
    self.injectedTransport = options.signalingTransport
    self.backend = options.mediaBackend ?? WCSApi2Environment.sharedMediaBackend
    self.work = DispatchQueue(label: "FPWCSApi2Session.work")
    self.callbackQueue = options.callbackQueue ?? DispatchQueue(label: "FPWCSApi2Session.callbacks")
    self.workToken = Self.nextToken.withLock { token in
      defer { token += 1 }
      return token
    }
    work.setSpecific(key: Self.workKey, value: workToken)
  }

  deinit {
    probeTimer?.cancel()
    transport?.close(code: 1000, reason: "")
    for connection in connections.values { connection.close() }
    let continuations = callbacks.withLock { $0.statusContinuations.values }
    for continuation in continuations { continuation.finish() }
  }

  private static func sipFields(_ options: FPWCSApi2SessionOptions) -> [String: JSONValue] {
    var sip: [String: JSONValue] = [:]
    if let v = options.sipLogin { sip["sipLogin"] = .string(v) }
    if let v = options.sipAuthenticationName { sip["sipAuthenticationName"] = .string(v) }
    if let v = options.sipPassword { sip["sipPassword"] = .string(v) }
    if let v = options.sipVisibleName { sip["sipVisibleName"] = .string(v) }
    if let v = options.sipDomain { sip["sipDomain"] = .string(v) }
    if let v = options.sipOutboundProxy { sip["sipOutboundProxy"] = .string(v) }
    if let v = options.sipPort { sip["sipPort"] = .number(Double(v)) }
    if options.sipRegisterRequired { sip["sipRegisterRequired"] = true }
    return sip
  }

  /// Runs `body` on the work queue: inline when already there, else synchronously.
  func onWork<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    if DispatchQueue.getSpecific(key: Self.workKey) == workToken { return try body() }
    return try work.sync { Result<T, E>(catching: body) }.get()
  }

  // MARK: faithful API

  /// Creates a stream of this session (status New). `options.name` is required.
  /// - Throws: `WCSError.invalidOptions` without a name, `.invalidArgument` for non-JSON `custom`.
  public func createStream(_ options: FPWCSApi2StreamOptions) throws -> FPWCSApi2Stream {
    let stream = try FPWCSApi2Stream(session: self, options: options)
    onWork {
      core.addStream(id: stream.mediaSessionId, name: stream.name)
      streamObjects[stream.mediaSessionId] = stream
      publishSnapshot()
    }
    return stream
  }

  /// Opens the WebSocket and sends `connection`; status Pending, then Established (or Failed).
  /// A Disconnected or Failed session may connect again.
  public func connect() {
    FPWCSApi2.register(self)
    onWork { run(core.connect()) }
  }

  /// Like `connect()` with extra HTTP headers on the WebSocket upgrade request.
  public func connect(withHeaders headers: [String: String]) {
    onWork { headerOverride = headers }
    connect()
  }
  private var headerOverride: [String: String]?

  /// Closes the connection; status Disconnected at once, every live stream Failed.
  public func disconnect() {
    onWork { run(core.disconnect()) }
  }

  /// Current status.
  public func getStatus() -> kFPWCSSessionStatus { snapshot.withLock { $0.status } }

  /// The URL the session was created with.
  public func getServerUrl() -> String { serverUrl }

  /// Client-generated session id.
  public func getSessionID() -> String { sessionID }

  /// The server's `authToken` (from `getUserData`); reconnect with it via `options.authToken`.
  public func getAuthToken() -> String? { snapshot.withLock { $0.authToken } }

  /// The server version from `getVersion` (Linux addition).
  public func getServerVersion() -> String? { snapshot.withLock { $0.serverVersion } }

  /// Why the session failed (server `info` or transport reason), if it did (Linux addition).
  public func getFailureReason() -> String? { snapshot.withLock { $0.failureReason } }

  /// Live streams (not yet Unpublished/Stopped/Failed), in creation order.
  public func getStreams() -> [FPWCSApi2Stream] {
    onWork { core.streamIds.compactMap { streamObjects[$0] } }
  }

  /// A live stream by its id (`mediaSessionId`).
  public func getStream(_ streamID: String) -> FPWCSApi2Stream? {
    onWork { streamObjects[streamID] }
  }

  /// Sets the callback for one status, replacing an earlier one. Returns self.
  @discardableResult
  public func on(_ status: kFPWCSSessionStatus, callback: @escaping SessionCallback)
    -> FPWCSApi2Session
  {
    callbacks.withLock { $0.status[status] = UncheckedBox(callback) }
    return self
  }

  /// Sets the callback for app data pushed by the server (`OnDataEvent`). Returns self.
  @discardableResult
  public func onAppDataCallback(_ callback: @escaping SessionAppDataCallback) -> FPWCSApi2Session {
    callbacks.withLock { $0.appData = UncheckedBox(callback) }
    return self
  }

  /// Sends a JSON object to the server app (`sendData`); the result is not reported.
  public func sendData(_ data: [String: Any]) {
    sendData(data, handler: nil)
  }

  /// Sends a JSON object to the server app; `handler` learns whether it was accepted (rejected
  /// also when the data is not JSON or the session is not established).
  public func sendData(_ data: [String: Any], handler: FPWCSApi2DataHandler?) {
    let operationId = UUID().uuidString
    do {
      let payload = JSONValue.object(try JSONConversion.object(data))
      try onWork { () throws(WCSError) in
        let effects = try core.sendData(operationId: operationId, payload: payload)
        if let handler { dataHandlers[operationId] = UncheckedBox(handler) }
        run(effects)
      }
    } catch {
      let result = FPWCSApi2Data(
        operationId: operationId, payload: nil, status: "FAILED", info: "\(error)")
      let box = UncheckedBox(handler)
      callbackQueue.async { [weak self] in box.value?.onRejected?(self, result) }
    }
  }

  // MARK: Swift-native additions

  /// Connects and returns once Established.
  /// - Throws: `WCSError.connectionRefused` with the server's reason, `.connectionFailed` when
  ///   the socket fails or closes first, `.disconnected` if `disconnect()` is called meanwhile.
  public func connect() async throws {
    FPWCSApi2.register(self)
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      onWork {
        let effects = core.connect()
        switch core.status {
        case .fpwcsSessionStatusEstablished, .fpwcsSessionStatusRegistered:
          continuation.resume()
        default:
          connectWaiters.append(continuation)
          run(effects)
        }
      }
    }
  }

  /// Sends a JSON object to the server app and returns the accepted `DataStatusEvent`.
  /// - Throws: `WCSError.dataRejected` with the server's info, `.invalidSessionState`, `.invalidArgument`.
  public func sendData(_ data: [String: Any]) async throws -> FPWCSApi2Data {
    let payload = JSONValue.object(try JSONConversion.object(data))
    let operationId = UUID().uuidString
    return try await withCheckedThrowingContinuation { continuation in
      do {
        try onWork { () throws(WCSError) in
          let effects = try core.sendData(operationId: operationId, payload: payload)
          dataContinuations[operationId] = continuation
          run(effects)
        }
      } catch {
        continuation.resume(throwing: error)
      }
    }
  }

  /// Every status change from now on, in order; finishes when the session is released.
  public var statusUpdates: AsyncStream<kFPWCSSessionStatus> {
    let (stream, continuation) = AsyncStream.makeStream(of: kFPWCSSessionStatus.self)
    let key = UUID()
    callbacks.withLock { $0.statusContinuations[key] = continuation }
    continuation.onTermination = { [weak self] _ in
      _ = self?.callbacks.withLock { $0.statusContinuations.removeValue(forKey: key) }
    }
    return stream
  }

  // MARK: streams (called by FPWCSApi2Stream)

  func startStream(_ stream: FPWCSApi2Stream, published: Bool) throws(WCSError) {
    try onWork { () throws(WCSError) in
      let id = stream.mediaSessionId
      try core.checkCanStart(streamId: id, operation: published ? "publish" : "play")
      let connection: any MediaConnection
      do throws(MediaBackendError) {
        connection = try backend.makeConnection(stream.connectionRequest(published: published)) {
          [weak self] state in
          guard let self else { return }
          self.work.async { self.streamObjects[id]?.setConnectionState(state) }
        }
      } catch {
        throw .media(error)
      }
      connections[id] = connection
      run(core.start(streamId: id, request: stream.streamRequest(published: published)))
    }
  }

  func stopStream(_ stream: FPWCSApi2Stream) {
    onWork { run(core.stop(streamId: stream.mediaSessionId)) }
  }

  func setMuted(_ stream: FPWCSApi2Stream, audio: Bool, muted: Bool) {
    onWork { run(core.setLocalMuted(streamId: stream.mediaSessionId, audio: audio, muted: muted)) }
  }

  func sendStreamData(_ stream: FPWCSApi2Stream, payload: JSONValue) throws(WCSError) {
    try onWork { () throws(WCSError) in
      run(try core.sendStreamData(streamId: stream.mediaSessionId, payload: payload))
    }
  }

  func checkAvailable(name: String, callback: @escaping (Bool, String?) -> Void) {
    let checkId = UUID().uuidString
    do {
      try onWork { () throws(WCSError) in
        let effects = try core.checkAvailable(checkId: checkId, name: name)
        availabilityCallbacks[checkId] = UncheckedBox(callback)
        run(effects)
      }
    } catch {
      let box = UncheckedBox(callback)
      callbackQueue.async { box.value(false, "\(error)") }
    }
  }

  func connection(of stream: FPWCSApi2Stream) -> (any MediaConnection)? {
    onWork { connections[stream.mediaSessionId] }
  }

  /// Frames and messages skipped so far (not JSON, wrong shape, unknown ids), for diagnostics.
  var skippedInputs: [String] { skipped.withLock { $0 } }

  // MARK: effects

  private func run(_ effects: [SessionEffect]) {
    for effect in effects { perform(effect) }
  }

  private func perform(_ effect: SessionEffect) {
    switch effect {
    case .openTransport: openTransport()
    case .send(let message): transport?.send(WCSMessageCodec.encode(message))
    case .closeTransport:
      transportGeneration += 1
      transport?.close(code: 1000, reason: "")
      transport = nil
    case .sessionStatus(let status): sessionStatusChanged(status)
    case .streamStatus(let status, let state): streamStatusChanged(status, state)
    case .streamUpdated(let state): streamObjects[state.id]?.update(state)
    case .createOffer(let id): createOffer(id)
    case .applyAnswer(let id, let sdp): applyAnswer(id, sdp)
    case .setTrackEnabled(let id, let audio, let enabled):
      connections[id]?.setTrackEnabled(audio ? .audio : .video, enabled: enabled)
    case .releaseMedia(let id): connections.removeValue(forKey: id)?.close()
    case .streamEvent(let id, let type, let payload):
      let event = FPWCSApi2StreamEvent(type: type, payload: payload, mediaSessionId: id)
      streamObjects[id]?.deliverEvent(event)
    case .availability(let checkId, let available, let info):
      guard let callback = availabilityCallbacks.removeValue(forKey: checkId) else { return }
      callbackQueue.async { callback.value(available, info) }
    case .dataStatus(let operationId, let accepted, let payload, let status, let info):
      dataStatus(operationId, accepted: accepted, payload: payload, status: status, info: info)
    case .appData(let operationId, let payload):
      let data = FPWCSApi2Data(operationId: operationId, payload: payload, status: nil, info: nil)
      let callback = callbacks.withLock { $0.appData }
      callbackQueue.async { [weak self] in callback?.value(self, data) }
    case .serverVideoRate(let id, let bitrate):
      guard let stream = streamObjects[id], stream.isQualityCalculationEnabled,
        let connection = connections[id]
      else { return }
      connection.stats { stats in
        stream.addQualitySample(clientBitrate: stats.currentVideoBitrate, serverBitrate: bitrate)
      }
    case .skipped(let reason):
      skipped.withLock {
        $0.append(reason)
        if $0.count > 64 { $0.removeFirst() }
      }
    }
  }

  private func openTransport() {
    transportGeneration += 1
    let generation = transportGeneration
    transport?.close(code: 1000, reason: "")
    let newTransport = injectedTransport ?? WCSApi2Environment.makeSignalingTransport()
    transport = newTransport
    var options = connectOptions
    if let headers = headerOverride { options.headers.merge(headers) { _, new in new } }
    newTransport.connect(to: serverUrl, options: options) { [weak self] event in
      guard let self else { return }
      self.work.async { self.transportEvent(event, generation: generation) }
    }
  }

  private func transportEvent(_ event: SignalingEvent, generation: Int) {
    guard generation == transportGeneration else { return }
    switch event {
    case .opened: run(core.transportOpened())
    case .text(let text):
      run(core.receive(text))
      publishSnapshot()
    case .closed(let code, let reason):
      transport = nil
      run(core.transportClosed(code: code, reason: reason))
    case .failed(let error):
      transport = nil
      run(core.transportFailed(reason: "\(error)"))
    }
  }

  private func publishSnapshot() {
    let status = core.status
    let token = core.authToken
    let reason = core.failureReason
    let refused = core.refusedByServer
    let version = core.serverVersion
    let ids = core.streamIds
    snapshot.withLock {
      $0.status = status
      $0.authToken = token
      $0.failureReason = reason
      $0.refusedByServer = refused
      $0.serverVersion = version
      $0.streamIds = ids
    }
  }

  private func sessionStatusChanged(_ status: kFPWCSSessionStatus) {
    publishSnapshot()
    let (callback, continuations) = callbacks.withLock {
      ($0.status[status], Array($0.statusContinuations.values))
    }
    for continuation in continuations { continuation.yield(status) }
    // Strong capture: a Disconnected/Failed session leaves `getSessions()` and may have no other
    // owner; its callback must still receive it.
    callbackQueue.async { callback?.value(self) }
    switch status {
    case .fpwcsSessionStatusEstablished, .fpwcsSessionStatusRegistered:
      startProbeTimer()
      let waiters = connectWaiters
      connectWaiters = []
      for waiter in waiters { waiter.resume() }
    case .fpwcsSessionStatusFailed, .fpwcsSessionStatusDisconnected:
      let error: WCSError
      if status == .fpwcsSessionStatusDisconnected {
        error = .disconnected
      } else if core.refusedByServer {
        error = .connectionRefused(reason: core.failureReason ?? "")
      } else {
        error = .connectionFailed(reason: core.failureReason ?? "")
      }
      let waiters = connectWaiters
      connectWaiters = []
      for waiter in waiters { waiter.resume(throwing: error) }
      probeTimer?.cancel()
      probeTimer = nil
      FPWCSApi2.unregister(self)
    default:
      break
    }
  }

  private func startProbeTimer() {
    guard core.config.receiveProbes > 0, probeTimer == nil else { return }
    let timer = DispatchSource.makeTimerSource(queue: work)
    timer.schedule(deadline: .now() + probesInterval, repeating: probesInterval)
    timer.setEventHandler { [weak self] in
      guard let self else { return }
      self.run(self.core.probeTick())
    }
    probeTimer = timer
    timer.resume()
  }

  private func streamStatusChanged(_ status: kFPWCSStreamStatus, _ state: StreamState) {
    guard let stream = streamObjects[state.id] else { return }
    stream.update(state)
    stream.deliverStatus(status, state: state)
    if state.status.isTerminal {
      streamObjects[state.id] = nil
      publishSnapshot()
    }
  }

  private func createOffer(_ id: String) {
    guard let connection = connections[id] else {
      run(core.offerCreated(streamId: id, result: .failure(.closed)))
      return
    }
    connection.createOffer { [weak self] result in
      guard let self else { return }
      self.work.async { self.run(self.core.offerCreated(streamId: id, result: result)) }
    }
  }

  private func applyAnswer(_ id: String, _ sdp: String) {
    guard let connection = connections[id] else { return }
    connection.setRemoteAnswer(sdp) { [weak self] result in
      guard let self, case .failure(let error) = result else { return }
      self.work.async { self.run(self.core.answerFailed(streamId: id, error: error)) }
    }
  }

  private func dataStatus(
    _ operationId: String, accepted: Bool, payload: JSONValue?, status: String?, info: String?
  ) {
    let data = FPWCSApi2Data(operationId: operationId, payload: payload, status: status, info: info)
    if let continuation = dataContinuations.removeValue(forKey: operationId) {
      if accepted {
        continuation.resume(returning: data)
      } else {
        continuation.resume(throwing: WCSError.dataRejected(info: info))
      }
    }
    if let handler = dataHandlers.removeValue(forKey: operationId) {
      callbackQueue.async { [weak self] in
        if accepted {
          handler.value.onAccepted?(self, data)
        } else {
          handler.value.onRejected?(self, data)
        }
      }
    }
  }
}
