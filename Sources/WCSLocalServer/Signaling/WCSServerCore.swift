import Foundation
import WCSTransport

/// The server side of the WCS signalling protocol (wcs-protocol.md §9), Sans-I/O.
///
/// One thread: call every method from the same thread (or serial queue). Inputs are the method
/// calls; each returns the actions to perform, in order. Time comes in as `now`, milliseconds
/// since the Unix epoch (it stamps `createDate` and paces `ping`); the core has no timers, so the
/// driver calls `tick(now:)` at `nextDeadline` (or more often).
///
/// Bad frames get a `fail` message (or a FAILED stream status when the frame names a stream);
/// they never end the session or touch other sessions.
public final class WCSServerCore {
  /// The settings given at creation.
  public let configuration: WCSServerConfiguration

  var sessions: [WCSConnectionID: ServerSession] = [:]
  var streams: [String: ServerStream] = [:]
  /// Stream name → publisher `mediaSessionId`.
  var publishersByName: [String: String] = [:]
  /// Publisher `mediaSessionId` → its players' ids, in the order they started.
  var playersBySource: [String: [String]] = [:]
  var actions: [WCSServerAction] = []
  /// `roomApp` rooms and memberships (WCSServerCore+Rooms.swift).
  var rooms = RoomDirectory()
  /// Record names given to publishers whose file the engine has not reported finished, by
  /// `mediaSessionId`: taken for the next records (`RecordNaming.uniqueFileName`).
  var unfinishedRecordNames: [String: String] = [:]
  /// Access checks waiting for `accessDecided`, by check id (WCSServerCore+Access.swift).
  var pendingAccessChecks: [Int: PendingAccessCheck] = [:]
  var nextAccessCheckId = 1
  /// Messages of sessions with an open access check, in arrival order.
  var heldMessages: [WCSConnectionID: [WCSMessage]] = [:]
  /// `snapshot` requests the media engine has not answered yet, by request id.
  var pendingSnapshots: [String: PendingSnapshot] = [:]
  /// SIP calls through the gateway (SIP/WCSServerCore+Calls.swift).
  var calls = ServerCallDirectory()

  /// Creates a core with no sessions.
  public init(configuration: WCSServerConfiguration = WCSServerConfiguration()) {
    self.configuration = configuration
  }

  /// Open WebSocket connections.
  public var sessionCount: Int { sessions.count }
  /// Live streams (publishers and players, pending or up).
  public var streamCount: Int { streams.count }
  /// Published stream names in use.
  public var publishedNameCount: Int { publishersByName.count }
  /// Players attached to some publisher.
  public var playerCount: Int { playersBySource.values.reduce(0) { $0 + $1.count } }

  /// The earliest time (ms since the Unix epoch) at which `tick(now:)` has work, `nil` if none.
  public var nextDeadline: Int64? {
    (sessions.values.compactMap(\.nextPingAt) + [nextCallDeadline].compactMap { $0 }).min()
  }

  // MARK: - Connection inputs

  /// A WebSocket was accepted. `remoteAddress` is the client's `ip:port` (goes into
  /// `authToken`, §1.4). Reusing the id of an open connection ends the old one first.
  public func connectionOpened(_ id: WCSConnectionID, remoteAddress: String, now: Int64)
    -> [WCSServerAction]
  {
    if sessions[id] != nil { endSession(id, now: now) }
    var session = ServerSession(id: id, remoteAddress: remoteAddress, openedAt: now)
    session.nextPingAt = now + configuration.handshakeTimeoutMillis
    sessions[id] = session
    log("session \(id) opened from \(remoteAddress)")
    return flush()
  }

  /// The WebSocket closed (any code). Ends the session's streams: their players on other
  /// sessions get STOPPED `Stopped by session disconnect` (§7.2). Unknown ids are ignored.
  public func connectionClosed(_ id: WCSConnectionID, now: Int64) -> [WCSServerAction] {
    if sessions[id] != nil {
      endSession(id, now: now)
      log("session \(id) closed")
    }
    return flush()
  }

  /// Sends due `ping`s, drops sessions that missed `maxUnansweredPings` of them (§7.1) and
  /// connections that sent no `connection` within `handshakeTimeoutMillis`.
  public func tick(now: Int64) -> [WCSServerAction] {
    callTick(now: now)
    for id in sessions.keys.sorted() {
      guard var session = sessions[id], let due = session.nextPingAt, due <= now else { continue }
      guard session.isEstablished else {
        log("session \(id) dropped: no connection message")
        actions.append(
          .close(id, code: WCSCloseCode.handshakeTimeout, reason: "No connection message"))
        endSession(id, now: now)
        continue
      }
      if session.unansweredPings >= configuration.maxUnansweredPings {
        log("session \(id) dropped: \(session.unansweredPings) pings unanswered")
        actions.append(
          .close(id, code: WCSCloseCode.keepAliveTimeout, reason: "Terminated by keep-alive"))
        endSession(id, now: now)
        continue
      }
      session.unansweredPings += 1
      session.nextPingAt = now + configuration.pingIntervalMillis
      sessions[id] = session
      send(id, ServerMessages.ping)
    }
    return flush()
  }

  /// One WebSocket text frame from `id`.
  public func textReceived(_ id: WCSConnectionID, _ text: String, now: Int64)
    -> [WCSServerAction]
  {
    guard sessions[id] != nil else { return flush() }
    let message: WCSMessage
    do {
      message = try WCSMessageCodec.decode(text)
    } catch {
      reject(id, .malformedFrame(error.description))
      return flush()
    }
    receive(id, message, now: now)
    return flush()
  }

  /// Serves one message (after access control, WCSServerCore+Access.swift).
  func process(_ id: WCSConnectionID, _ message: WCSMessage, now: Int64) {
    guard let session = sessions[id] else { return }
    if message.name == "connection" {
      handleConnection(id, message, now: now)
    } else if !session.isEstablished {
      log("session \(id): \(message.name) before connection refused")
      send(id, ServerMessages.fail(info: WCSStreamInfo.sessionNotReady))
    } else {
      dispatch(id, message, now: now)
    }
  }

  // MARK: - Media engine inputs

  /// An event from the media engine (see `LocalServerMediaEngine`). Events for streams that no
  /// longer exist are ignored.
  public func mediaEvent(_ event: LocalServerMediaEvent, now: Int64) -> [WCSServerAction] {
    if handleCallMedia(event, now: now) { return flush() }
    switch event {
    case .answerReady(let id, let sdp): handleAnswer(id, sdp: sdp)
    case .connected(let id, let codecs): handleConnected(id, codecs: codecs)
    case .failed(let id, let reason): handleMediaFailure(id, reason: reason, now: now)
    case .recordingFinished(let id, let recordName):
      unfinishedRecordNames[id] = nil
      log("stream \(id) recording finished: \(recordName)")
    case .snapshotTaken(let requestId, let png):
      answerSnapshot(
        requestId, type: "snapshotCompleted",
        payload: [
          "snapshot": .string(Data(png).base64EncodedString())
        ])
    case .snapshotFailed(let requestId, let reason):
      answerSnapshot(requestId, type: "snapshotFailed", payload: ["info": .string(reason)])
    case .videoRate(let id, let inbound, let bitsPerSecond):
      reportVideoRate(id, inbound: inbound, bitsPerSecond: bitsPerSecond)
    case .rtmpPushStatus(let id, let status): reportRTMPPushStatus(id, status)
    }
    return flush()
  }

  /// Shorthand for `mediaEvent(.answerReady(...))`.
  public func answerReady(mediaSessionId: String, sdp: String, now: Int64) -> [WCSServerAction] {
    mediaEvent(.answerReady(mediaSessionId: mediaSessionId, sdp: sdp), now: now)
  }

  /// Shorthand for `mediaEvent(.connected(...))`.
  public func mediaConnected(
    mediaSessionId: String, codecs: LocalServerMediaCodecs = LocalServerMediaCodecs(), now: Int64
  ) -> [WCSServerAction] {
    mediaEvent(.connected(mediaSessionId: mediaSessionId, codecs: codecs), now: now)
  }

  /// Shorthand for `mediaEvent(.failed(...))`.
  public func mediaFailed(mediaSessionId: String, reason: String, now: Int64)
    -> [WCSServerAction]
  {
    mediaEvent(.failed(mediaSessionId: mediaSessionId, reason: reason), now: now)
  }

  /// Shorthand for `mediaEvent(.recordingFinished(...))`.
  public func recordingFinished(mediaSessionId: String, recordName: String, now: Int64)
    -> [WCSServerAction]
  {
    mediaEvent(.recordingFinished(mediaSessionId: mediaSessionId, recordName: recordName), now: now)
  }

  // MARK: - Internals shared by the extensions

  func flush() -> [WCSServerAction] {
    defer { actions.removeAll(keepingCapacity: true) }
    return actions
  }

  func log(_ line: String) { actions.append(.log(line)) }

  /// Sends to `id` if it is still open; sessions being torn down get nothing.
  func send(_ id: WCSConnectionID, _ text: String) {
    guard sessions[id] != nil else { return }
    actions.append(.send(id, text: text))
  }

  /// A `fail` for a request that names no stream.
  func reject(_ id: WCSConnectionID, _ error: WCSRequestError) {
    log("session \(id): \(error)")
    send(id, ServerMessages.fail(info: error.description))
  }

  /// Forgets the session and ends every stream it owned. Sends nothing to it.
  func endSession(_ id: WCSConnectionID, now: Int64) {
    accessSessionEnded(id)
    guard let session = sessions.removeValue(forKey: id) else { return }
    for streamId in session.streamIds {
      guard let stream = streams[streamId] else { continue }
      endStream(
        streamId, status: stream.isPublisher ? .unpublished : .stopped,
        info: WCSStreamInfo.stoppedBySessionDisconnect,
        playersInfo: WCSStreamInfo.stoppedBySessionDisconnect, now: now)
    }
    roomSessionEnded(id, login: session.login)
    callsSessionEnded(id)
  }

  private func dispatch(_ id: WCSConnectionID, _ message: WCSMessage, now: Int64) {
    switch message.name {
    case "pong":
      sessions[id]?.unansweredPings = 0
    case "ping":
      // Client keepalive (§3.2); the reply is unconfirmed and SDKs ignore one, so send none.
      break
    case "publishStream": handleCreate(id, message, publish: true, now: now)
    case "playStream": handleCreate(id, message, publish: false, now: now)
    case "unPublishStream", "stopStream": handleStop(id, message, now: now)
    case "sendStreamEvent": handleStreamEvent(id, message)
    case "sendData": handleSendData(id, message, now: now)
    case "availableStream": handleAvailable(id, message)
    case "snapshot": handleSnapshot(id, message)
    case _ where Self.callMessageNames.contains(message.name):
      handleCallMessage(id, message, now: now)
    default:
      // Unknown names are ignored, as the SDKs do (§2); SIP and legacy messages land here.
      log("session \(id): ignored message \(message.name)")
    }
  }

  private func handleConnection(_ id: WCSConnectionID, _ message: WCSMessage, now: Int64) {
    guard var session = sessions[id] else { return }
    if session.isEstablished {
      log("session \(id): repeated connection refused")
      send(id, ServerMessages.fail(info: "Session already established"))
      return
    }
    var object: [String: JSONValue] = [:]
    if let argument = message.argument {
      guard let members = argument.objectValue else {
        reject(id, .argumentNotAnObject(message: "connection"))
        return
      }
      object = members
    }
    // The `-<uuid>` suffix keeps tokens unique when a client port is reused (§1.4).
    let token =
      "/\(session.remoteAddress)/\(configuration.serverAddress)-"
      + UUID().uuidString.lowercased()
    session.authToken = token
    if case .string(let login)? = object["custom"]?["login"] {
      session.login = login
    } else if case .string(let login)? = object["sipLogin"] {
      session.login = login
    }
    session.appKey = object["appKey"]?.stringValue ?? ""
    session.nextPingAt = now + configuration.pingIntervalMillis
    session.unansweredPings = 0
    sessions[id] = session

    var userData = object
    userData["authToken"] = .string(token)
    userData["status"] = "ESTABLISHED"
    userData["useWsTunnel"] = false
    userData["useWsTunnelPacketization2"] = false
    userData["useBase64BinaryEncoding"] = false
    send(id, ServerMessages.text("getUserData", [.object(userData)]))
    send(id, ServerMessages.getVersion(configuration.serverVersion))
    sipAccountConnected(id, object)
    let appKey = object["appKey"]?.stringValue ?? "-"
    log("session \(id) established: appKey=\(appKey) authToken=\(token)")
  }
}
