import Dispatch
import Foundation
import Synchronization
import WCSEngine
import WCSMediaSeam
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

  struct Snapshot {
    var status: kFPWCSSessionStatus = .fpwcsSessionStatusNew
    var authToken: String?
    var failureReason: String?
    var refusedByServer = false
    var serverVersion: String?
    var streamIds: [String] = []
  }

  struct Callbacks {
    var status: [kFPWCSSessionStatus: UncheckedBox<SessionCallback>] = [:]
    var appData: UncheckedBox<SessionAppDataCallback>?
    var incomingCall: UncheckedBox<IncomingCallCallback>?
    var statusContinuations: [UUID: AsyncStream<kFPWCSSessionStatus>.Continuation] = [:]
  }

  private static let workKey = DispatchSpecificKey<UInt>()
  private static let nextToken = Mutex<UInt>(1)

  let work: DispatchQueue
  let workToken: UInt
  /// Where app callbacks run.
  public let callbackQueue: DispatchQueue
  let core: SessionCore
  let serverUrl: String
  let sessionID = UUID().uuidString
  let connectOptions: SignalingConnectOptions
  let injectedTransport: (any SignalingTransport)?
  let backend: any MediaBackend
  /// The session's ICE servers and policy (`FPWCSApi2SessionOptions.iceServers`).
  let iceSettings: ICESettings
  var transport: (any SignalingTransport)?
  var transportGeneration = 0
  let probesInterval: Double
  let bandwidthSampleInterval: Double
  var probeTimer: (any DispatchSourceTimer)?
  /// Samples every media connection's stats once a second for the bandwidth getters.
  var bandwidthTimer: (any DispatchSourceTimer)?
  var connections: [String: any MediaConnection] = [:]
  var streamObjects: [String: FPWCSApi2Stream] = [:]
  /// SIP calls and their media (FPWCSApi2Session+Calls.swift).
  var callObjects: [String: FPWCSApi2Call] = [:]
  var callConnections: [String: any MediaConnection] = [:]
  var availabilityCallbacks: [String: UncheckedBox<(Bool, String?) -> Void>] = [:]
  var dataHandlers: [String: UncheckedBox<FPWCSApi2DataHandler>] = [:]
  var dataContinuations: [String: CheckedContinuation<FPWCSApi2Data, any Error>] = [:]
  var connectWaiters: [CheckedContinuation<Void, any Error>] = []
  let snapshot = Mutex(Snapshot())
  let callbacks = Mutex(Callbacks())
  let skipped = Mutex<[String]>([])

  init(_ options: FPWCSApi2SessionOptions) throws(WCSError) {
    guard let url = options.urlServer?.trimmingCharacters(in: .whitespaces), !url.isEmpty else {
      throw .invalidOptions("urlServer must be provided")
    }
    // Schemes are case-insensitive (RFC 3986 §3.1): `WS://` is the same URL.
    let lowercased = url.lowercased()
    guard lowercased.hasPrefix("ws://") || lowercased.hasPrefix("wss://") else {
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
    self.bandwidthSampleInterval = max(options.bandwidthSampleInterval, 0)
    self.core = SessionCore(config: config)
    self.serverUrl = url
    self.connectOptions = options.connectOptions
    self.iceSettings = try ICESettings(
      servers: options.iceServers, policy: options.iceTransportPolicy)
    self.injectedTransport = options.signalingTransport
    self.backend = options.mediaBackend ?? WCSApi2Environment.sharedMediaBackend
    // libsrtp's self-tests and the DTLS certificate, while the session connects rather than
    // on the first stream's event loop after its DTLS handshake.
    NativeMediaBackend.prepareSecurity()
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
    bandwidthTimer?.cancel()
    transport?.close(code: 1000, reason: "")
    for connection in connections.values { connection.close() }
    for connection in callConnections.values { connection.close() }
    let continuations = callbacks.withLock { $0.statusContinuations.values }
    for continuation in continuations { continuation.finish() }
  }

  static func sipFields(_ options: FPWCSApi2SessionOptions) -> [String: JSONValue] {
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
  /// - Throws: `WCSError.invalidOptions` without a name, `.invalidOption(field:reason:)` for a
  ///   name or constraint out of `FPWCSApi2StreamLimits`, `.invalidArgument` for non-JSON
  ///   `custom`.
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
  var headerOverride: [String: String]?

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
    // Constraints are shared objects the app may have changed since `createStream`.
    try FPWCSApi2StreamLimits.validate(stream.constraints)
    try onWork { () throws(WCSError) in
      let id = stream.mediaSessionId
      try core.checkCanStart(streamId: id, operation: published ? "publish" : "play")
      let connection: any MediaConnection
      do throws(MediaBackendError) {
        connection = try backend.makeConnection(
          stream.connectionRequest(published: published),
          onStateChange: connectionStateHandler(streamId: id))
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

  func requestSnapshot(_ stream: FPWCSApi2Stream) throws(WCSError) {
    try onWork { () throws(WCSError) in run(try core.snapshot(streamId: stream.mediaSessionId)) }
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

}
