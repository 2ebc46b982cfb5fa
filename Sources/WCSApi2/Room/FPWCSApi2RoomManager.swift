import Dispatch
import Foundation
import Synchronization
import WCSMediaSeam
import WCSTransport

/// Options of a room manager (`FPWCSApi2RoomManagerOptions`, wcs-rooms-and-calls.md §A.2,
/// §A.6). Read once, by `FPWCSApi2.createRoomManager(_:)`.
public final class FPWCSApi2RoomManagerOptions {
  /// WebSocket URL of the server, `ws://host:8080` or `wss://host:8443`.
  public var urlServer: String?
  /// The room identity: sent as `connection.custom.login`; others see it as the participant's
  /// name. Required, non-empty.
  public var username: String?

  // Linux additions.

  /// Server application; `nil` or empty = `"roomApp"` (the Web SDK's `appKey` override).
  public var appKey: String?
  /// Queue for every callback of the manager, its rooms and their streams; `nil` = a private
  /// serial queue (as `FPWCSApi2SessionOptions.callbackQueue`).
  public var callbackQueue: DispatchQueue?
  /// Media engine; `nil` = `WCSApi2Environment.sharedMediaBackend`.
  public var mediaBackend: (any MediaBackend)?
  /// Signalling transport; `nil` = `WCSApi2Environment.makeSignalingTransport()`.
  public var signalingTransport: (any SignalingTransport)?
  /// WebSocket connect options: extra headers, timeout, TLS verification.
  public var connectOptions = SignalingConnectOptions()
  /// Seconds between media-stats samples of each stream (`FPWCSApi2SessionOptions`).
  public var bandwidthSampleInterval: Double = 1

  /// Empty options (`urlServer` and `username` must be set).
  public init() {}
}

extension FPWCSApi2 {
  /// Creates a room manager and connects it (`+[FPWCSApi2 createRoomManager:error:]`, §A.2):
  /// a session with `appKey` `roomApp` and `custom.login` = `username`. Its events come through
  /// `FPWCSApi2RoomManager.on(_:callback:)`: Connected once the session is ESTABLISHED, Failed
  /// when the connection is refused or breaks, Disconnected after `disconnect()`.
  /// - Throws: `WCSError.invalidOptions` without `urlServer`/`username` or for a URL that is not
  ///   `ws://`/`wss://`.
  public static func createRoomManager(_ options: FPWCSApi2RoomManagerOptions) throws
    -> FPWCSApi2RoomManager
  {
    let manager = try FPWCSApi2RoomManager(options)
    manager.session.connect()
    return manager
  }

  /// Creates a room manager and returns once it is connected (Swift-native form).
  /// - Throws: as `createRoomManager(_:)`, and `WCSError.connectionRefused`/`.connectionFailed`
  ///   with the reason when the session does not reach ESTABLISHED.
  public static func connectRoomManager(_ options: FPWCSApi2RoomManagerOptions) async throws
    -> FPWCSApi2RoomManager
  {
    let manager = try FPWCSApi2RoomManager(options)
    try await manager.session.connect()
    return manager
  }
}

/// A connection to a WCS room application (`FPWCSApi2RoomManager`, §A.6): joins rooms by name.
///
/// Threading: every callback of the manager, its rooms and their participants runs on the
/// session's callback queue (`getSession().callbackQueue`), in the order the server sent the
/// events. Any method may be called from any thread, including from inside a callback.
///
/// The manager sets the session's Established/Disconnected/Failed callbacks and its app-data
/// callback; an app that replaces them on `getSession()` stops the manager's events.
public final class FPWCSApi2RoomManager: Sendable {
  /// Manager event callback (`RoomManagerCallback`).
  public typealias RoomManagerCallback = (FPWCSApi2RoomManager?) -> Void

  struct State {
    var rooms: [String: FPWCSApi2Room] = [:]
    var callbacks: [kFPWCSRoomManagerEvent: UncheckedBox<RoomManagerCallback>] = [:]
    /// The latest event, replayed to a callback set after it happened (the session may connect
    /// before the app sets `on(.fpwcsRoomManagerEventConnected)`).
    var lastEvent: kFPWCSRoomManagerEvent?
  }

  let session: FPWCSApi2Session
  let username: String
  let state = Mutex(State())

  init(_ options: FPWCSApi2RoomManagerOptions) throws(WCSError) {
    guard let username = options.username, !username.isEmpty else {
      throw .invalidOptions("username must be provided")
    }
    let sessionOptions = FPWCSApi2SessionOptions()
    sessionOptions.urlServer = options.urlServer
    let appKey = options.appKey ?? ""
    sessionOptions.appKey = appKey.isEmpty ? Self.appKey : appKey
    sessionOptions.custom = ["login": username]
    sessionOptions.callbackQueue = options.callbackQueue
    sessionOptions.mediaBackend = options.mediaBackend
    sessionOptions.signalingTransport = options.signalingTransport
    sessionOptions.connectOptions = options.connectOptions
    sessionOptions.bandwidthSampleInterval = options.bandwidthSampleInterval
    self.session = try FPWCSApi2Session(sessionOptions)
    self.username = username
    FPWCSApi2.register(session)
    let events: [(kFPWCSSessionStatus, kFPWCSRoomManagerEvent)] = [
      (.fpwcsSessionStatusEstablished, .fpwcsRoomManagerEventConnected),
      (.fpwcsSessionStatusDisconnected, .fpwcsRoomManagerEventDisconnected),
      (.fpwcsSessionStatusFailed, .fpwcsRoomManagerEventFailed),
    ]
    for (status, event) in events {
      session.on(status) { [weak self] _ in self?.sessionEvent(event) }
    }
    session.onAppDataCallback { [weak self] _, data in self?.appData(data?.payloadJSON) }
  }

  /// The default server application of rooms (§A.2).
  public static let appKey = "roomApp"

  // MARK: iOS API

  /// Sets the callback of one manager event, replacing an earlier one. When that event is the
  /// latest one already (Connected before the callback was set), it runs once right away.
  public func on(_ event: kFPWCSRoomManagerEvent, callback: @escaping RoomManagerCallback) {
    let replay = state.withLock { state in
      state.callbacks[event] = UncheckedBox(callback)
      return state.lastEvent == event
    }
    if replay {
      let box = UncheckedBox(callback)
      session.callbackQueue.async { [weak self] in box.value(self) }
    }
  }

  /// Joins `options.name` (`-join:`, §A.3): sends the `join` command and returns the room at
  /// once. The room's `onStateCallback` runs when the server's `STATE` lists the other
  /// participants; `onFailedCallback` gets the server's reason when the join is refused
  /// (`Room is full`, `Login is already in use in this room`...), or a local one: a room of
  /// that name joined already (`Already joined this room`), a missing name, a session that is
  /// not connected.
  public func join(_ options: FPWCSApi2RoomOptions) -> FPWCSApi2Room {
    startJoin(options)
  }

  private func startJoin(_ options: FPWCSApi2RoomOptions) -> FPWCSApi2Room {
    let name = options.name ?? ""
    let room = FPWCSApi2Room(name: name, manager: self)
    guard !name.isEmpty else {
      room.fail("room name must be provided", async: true)
      return room
    }
    let added = state.withLock { state in
      guard state.rooms[name] == nil else { return false }
      state.rooms[name] = room
      return true
    }
    guard added else {
      room.fail(FPWCSApi2Room.alreadyJoined, async: true)
      return room
    }
    if sessionEnded {
      forget(room)
      let error = WCSError.invalidSessionState(session.getStatus(), operation: "join")
      room.fail("\(error)", async: true)
      return room
    }
    let handler = FPWCSApi2DataHandler()
    handler.onRejected = { [weak self, weak room] _, data in
      guard let self, let room else { return }
      // A join the session's end cut short is closed by `sessionEvent` (Disconnected/Failed).
      if self.sessionEnded { return }
      self.forget(room)
      room.fail(data?.info ?? "join rejected", async: false)
    }
    session.sendData(RoomCommands.join(room: name, record: options.record), handler: handler)
    return room
  }

  /// Closes the connection (`-disconnect`): every room ends, Disconnected follows. Returns
  /// `true` (iOS returns whether a session was open).
  @discardableResult
  public func disconnect() -> Bool {
    session.disconnect()
    return true
  }

  /// The username the manager was created with.
  public func getUsername() -> String { username }

  /// The underlying session (appKey `roomApp`).
  public func getSession() -> FPWCSApi2Session { session }

  /// `"CONNECTED"`, `"DISCONNECTED"`, `"FAILED"` (`+roomManagerEventToString:`).
  public static func roomManagerEventToString(_ event: kFPWCSRoomManagerEvent) -> String {
    switch event {
    case .fpwcsRoomManagerEventConnected: return "CONNECTED"
    case .fpwcsRoomManagerEventDisconnected: return "DISCONNECTED"
    case .fpwcsRoomManagerEventFailed: return "FAILED"
    }
  }

  // MARK: Swift-native additions

  /// Joins `options.name` and returns once the server's `STATE` arrived, the room's
  /// participants filled in (`getParticipants()`).
  /// - Throws: `WCSError.dataRejected(info:)` with the server's (or local) reason,
  ///   `.disconnected` when the session ends first.
  public func join(_ options: FPWCSApi2RoomOptions) async throws -> FPWCSApi2Room {
    let room = startJoin(options)
    try await room.joined()
    return room
  }

  /// Rooms joined and not yet left (Linux addition).
  public func getRooms() -> [FPWCSApi2Room] {
    state.withLock { Array($0.rooms.values) }.sorted { $0.getName() < $1.getName() }
  }

  // MARK: internals

  /// Whether the session is Disconnected or Failed, read from its protocol state (which changes
  /// before the rejections and status callbacks of the end are delivered).
  var sessionEnded: Bool {
    session.onWork {
      let status = session.core.status
      return status == .fpwcsSessionStatusDisconnected || status == .fpwcsSessionStatusFailed
    }
  }

  func forget(_ room: FPWCSApi2Room) {
    state.withLock { state in
      if state.rooms[room.getName()] === room { state.rooms[room.getName()] = nil }
    }
  }

  /// Session status change (on the callback queue).
  private func sessionEvent(_ event: kFPWCSRoomManagerEvent) {
    let (callback, rooms) = state.withLock { state in
      state.lastEvent = event
      var rooms: [FPWCSApi2Room] = []
      if event != .fpwcsRoomManagerEventConnected {
        rooms = Array(state.rooms.values)
        state.rooms.removeAll()
      }
      return (state.callbacks[event], rooms)
    }
    let reason = session.getFailureReason() ?? "session disconnected"
    for room in rooms { room.closed(reason: reason) }
    callback?.value(self)
  }

  /// One `OnDataEvent` payload (on the callback queue).
  private func appData(_ payload: JSONValue?) {
    switch RoomEvent.parse(payload) {
    case .failure(let skipped):
      session.skipped.withLock {
        $0.append("room event skipped: \(skipped.reason)")
        if $0.count > 64 { $0.removeFirst() }
      }
    case .success(let event):
      guard let room = state.withLock({ $0.rooms[event.room] }) else {
        // §A.4: events for a room the client has not joined are ignored.
        return
      }
      room.receive(event)
    }
  }
}
