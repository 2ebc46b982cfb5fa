import Dispatch
import Foundation
import Synchronization
import WCSMediaSeam
import WCSTransport

/// What to join (`FPWCSApi2RoomOptions`, wcs-rooms-and-calls.md §A.3).
public final class FPWCSApi2RoomOptions {
  /// Room name; rooms are created by their first `join`. Required.
  public var name: String?
  /// `join`'s `record` (sent only when set, §A.10); its effect is the server's.
  public var record: Bool?

  /// Empty options (`name` must be set).
  public init() {}
}

/// A chat message of a room (`FPWCSApi2RoomMessage`, §A.4 `MESSAGE`).
public final class FPWCSApi2RoomMessage: Sendable {
  /// Login of the sender.
  public let from: String
  /// Login of the addressee (this client), as the server sent it; `nil` when absent.
  public let to: String?
  /// The text, as sent.
  public let text: String
  /// `{"name": <room>}`.
  public let roomConfig: [String: String]

  init(from: String, to: String?, text: String, room: String) {
    self.from = from
    self.to = to
    self.text = text
    self.roomConfig = ["name": room]
  }
}

/// A room event of the Swift-native `FPWCSApi2Room.events` stream, in the server's order.
public enum FPWCSApi2RoomEvent: Sendable {
  /// The join completed: the other participants, with their published streams.
  case state([FPWCSApi2RoomParticipant])
  /// A participant joined.
  case joined(FPWCSApi2RoomParticipant)
  /// A participant left (its streams ended first).
  case left(FPWCSApi2RoomParticipant)
  /// A participant's stream is publishing; play it with `participant.play(_:)`.
  case published(FPWCSApi2RoomParticipant, streamName: String)
  /// A participant's stream ended (`UNPUBLISHED` or the `FAILED` stream event).
  case unpublished(FPWCSApi2RoomParticipant, streamName: String)
  /// A chat message to this client.
  case message(FPWCSApi2RoomMessage)
  /// The join was refused, with the reason; the stream then finishes.
  case failed(String)
}

/// One joined room (`FPWCSApi2Room`, §A.3–A.6), made by `FPWCSApi2RoomManager.join(_:)`.
///
/// Callbacks run on the manager's callback queue. A callback set after its event happened
/// (`onStateCallback` after `STATE`, `onFailedCallback` after the refusal) runs once at once,
/// so the iOS pattern "join, then set the callbacks" never misses the answer.
public final class FPWCSApi2Room: Sendable {
  /// State callback (`RoomCallback`): the room, with its participants filled in.
  public typealias RoomCallback = (FPWCSApi2Room?) -> Void
  /// Failure callback (`RoomFailedCallback`): the room and the reason (`DataStatusEvent` `info`).
  public typealias RoomFailedCallback = (FPWCSApi2Room?, String?) -> Void
  /// Participant callback (`ParticipantCallback`).
  public typealias ParticipantCallback = (FPWCSApi2Room?, FPWCSApi2RoomParticipant?) -> Void
  /// Message callback (`RoomMessageCallback`).
  public typealias RoomMessageCallback = (FPWCSApi2Room?, FPWCSApi2RoomMessage?) -> Void

  /// The local reason of a second `join` of one room name (the local server's text).
  static let alreadyJoined = "Already joined this room"

  enum Phase: Equatable {
    case joining
    case joined
    /// Left, refused, or the session ended; `reason` for the last two.
    case ended(reason: String?)
  }

  struct State {
    var phase = Phase.joining
    var roster = RoomRoster()
    var participants: [String: FPWCSApi2RoomParticipant] = [:]
    /// Streams this client published into the room, oldest first.
    var published: [FPWCSApi2Stream] = []
    /// Streams this client plays, by participant login.
    var played: [String: [FPWCSApi2Stream]] = [:]
    var failure: String?
    var onState: UncheckedBox<RoomCallback>?
    var onFailed: UncheckedBox<RoomFailedCallback>?
    var onMessage: UncheckedBox<RoomMessageCallback>?
    var onParticipant: [kFPWCSRoomParticipantEvent: UncheckedBox<ParticipantCallback>] = [:]
    var eventContinuations: [UUID: AsyncStream<FPWCSApi2RoomEvent>.Continuation] = [:]
    var joinWaiters: [CheckedContinuation<Void, any Error>] = []
  }

  let name: String
  weak let manager: FPWCSApi2RoomManager?
  let callbackQueue: DispatchQueue
  let state = Mutex(State())

  init(name: String, manager: FPWCSApi2RoomManager) {
    self.name = name
    self.manager = manager
    self.callbackQueue = manager.session.callbackQueue
  }

  // MARK: iOS API

  /// The room name.
  public func getName() -> String { name }

  /// The other participants by login (`-getParticipants`); empty before `STATE`.
  public func getParticipants() -> [String: FPWCSApi2RoomParticipant] {
    state.withLock { $0.participants }
  }

  /// Sets the callback of the join's completion (`STATE`).
  public func onStateCallback(_ callback: @escaping RoomCallback) {
    let replay = state.withLock { state in
      state.onState = UncheckedBox(callback)
      return state.roster.hasState
    }
    if replay { async { callback($0) } }
  }

  /// Sets the callback of a refused join: the server's reason (§A.9).
  public func onFailedCallback(_ callback: @escaping RoomFailedCallback) {
    let failure = state.withLock { state in
      state.onFailed = UncheckedBox(callback)
      return state.failure
    }
    if let failure { async { callback($0, failure) } }
  }

  /// Sets the callback of one participant event.
  public func on(
    _ event: kFPWCSRoomParticipantEvent, participantCallback callback: @escaping ParticipantCallback
  ) {
    state.withLock { $0.onParticipant[event] = UncheckedBox(callback) }
  }

  /// Sets the callback of chat messages to this client.
  public func onMessageCallback(_ callback: @escaping RoomMessageCallback) {
    state.withLock { $0.onMessage = UncheckedBox(callback) }
  }

  /// Publishes the camera and microphone into the room (`-publish:`) with default constraints.
  /// See `publish(_:withOptions:)`.
  @discardableResult
  public func publish(_ display: (any VideoRenderer)?) throws -> FPWCSApi2Stream {
    try publish(display, withOptions: nil)
  }

  /// Publishes into the room (`-publish:withOptions:`, §A.5): a stream named
  /// `<room>-<login>-<4 hex>` (`…-<options.name>` when a name is given) with `custom.name` =
  /// the room, so the server announces it as `PUBLISHED` to the others. `options` supplies
  /// constraints, `record`, `custom`...; its `display` is replaced by `display`.
  /// - Returns: the stream (status Publishing, or Failed, follow through its callbacks).
  /// - Throws: `WCSError.invalidSessionState` before the join completed or after the room ended,
  ///   and whatever `FPWCSApi2Stream.publish()` throws.
  @discardableResult
  public func publish(_ display: (any VideoRenderer)?, withOptions options: FPWCSApi2StreamOptions?)
    throws -> FPWCSApi2Stream
  {
    guard let manager else { throw WCSError.disconnected }
    try checkJoined(operation: "publish")
    let suffix = String(UUID().uuidString.lowercased().prefix(4))
    var streamName = "\(name)-\(manager.username)-\(suffix)"
    if let appName = options?.name, !appName.isEmpty { streamName += "-\(appName)" }
    let stream = try manager.session.createStream(
      roomStreamOptions(options, name: streamName, display: display))
    state.withLock { $0.published.append(stream) }
    do {
      try stream.publish()
    } catch {
      state.withLock { $0.published.removeAll { $0 === stream } }
      throw error
    }
    return stream
  }

  /// Stops every stream this client publishes into the room (`-unpublish`).
  public func unpublish() {
    let streams = state.withLock { state in
      defer { state.published.removeAll() }
      return state.published
    }
    for stream in streams { try? stream.stop() }
  }

  /// Leaves the room (`-leave:`, §A.3): stops this client's streams of the room (published and
  /// played), then sends `leave`; `handler` gets the server's ACCEPTED or FAILED. The room ends
  /// locally either way.
  public func leave(_ handler: FPWCSApi2DataHandler?) {
    let streams = end(reason: nil, waitersGet: .dataRejected(info: "room left before STATE"))
    for stream in streams { try? stream.stop() }
    manager?.forget(self)
    guard let manager else {
      let box = UncheckedBox(handler)
      async { _ in box.value?.onRejected?(nil, nil) }
      return
    }
    manager.session.sendData(RoomCommands.leave(room: name), handler: handler)
  }

  // MARK: Swift-native additions

  /// Every room event from now on, in order; finishes when the room is left, refused, or the
  /// session ends.
  public var events: AsyncStream<FPWCSApi2RoomEvent> {
    let (stream, continuation) = AsyncStream.makeStream(of: FPWCSApi2RoomEvent.self)
    let key = UUID()
    let open = state.withLock { state in
      guard case .ended = state.phase else {
        state.eventContinuations[key] = continuation
        return true
      }
      return false
    }
    if open {
      continuation.onTermination = { [weak self] _ in
        _ = self?.state.withLock { $0.eventContinuations.removeValue(forKey: key) }
      }
    } else {
      continuation.finish()
    }
    return stream
  }

  /// Leaves the room and returns once the server accepted it.
  /// - Throws: `WCSError.dataRejected(info:)` with the server's reason.
  public func leave() async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let handler = FPWCSApi2DataHandler()
      handler.onAccepted = { _, _ in continuation.resume() }
      handler.onRejected = { _, data in
        continuation.resume(throwing: WCSError.dataRejected(info: data?.info))
      }
      leave(handler)
    }
  }

  /// Whether the join completed (`STATE` arrived) and the room has not ended (Linux addition).
  public func isJoined() -> Bool { state.withLock { $0.phase == .joined } }

  // MARK: internals

  /// Waits for `STATE`; throws the refusal.
  func joined() async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let outcome: Result<Void, WCSError>? = state.withLock { state in
        switch state.phase {
        case .joined: return .success(())
        case .ended(let reason): return .failure(.dataRejected(info: reason ?? "room left"))
        case .joining:
          state.joinWaiters.append(continuation)
          return nil
        }
      }
      if let outcome { continuation.resume(with: outcome) }
    }
  }

  func checkJoined(operation: String) throws(WCSError) {
    guard state.withLock({ $0.phase == .joined }) else {
      let status = manager?.session.getStatus() ?? .fpwcsSessionStatusDisconnected
      throw .invalidSessionState(status, operation: "\(operation) in room \(name) (not joined)")
    }
  }

  /// Runs `body` on the callback queue with the room.
  func async(_ body: @escaping (FPWCSApi2Room?) -> Void) {
    let box = UncheckedBox(body)
    callbackQueue.async { [weak self] in box.value(self) }
  }

  /// The join was refused (or could not be sent): `onFailedCallback`, `failed` event.
  /// `async`: hop to the callback queue first (called from an app thread).
  func fail(_ reason: String, async hop: Bool) {
    guard hop else {
      deliverFailure(reason)
      return
    }
    async { $0?.deliverFailure(reason) }
  }

  private func deliverFailure(_ reason: String) {
    let (callback, continuations, waiters) = state.withLock { state in
      state.failure = reason
      state.phase = .ended(reason: reason)
      defer {
        state.eventContinuations.removeAll()
        state.joinWaiters.removeAll()
      }
      return (state.onFailed, Array(state.eventContinuations.values), state.joinWaiters)
    }
    for continuation in continuations {
      continuation.yield(.failed(reason))
      continuation.finish()
    }
    for waiter in waiters { waiter.resume(throwing: WCSError.dataRejected(info: reason)) }
    callback?.value(self, reason)
  }

  /// The session ended: the room ends without callbacks (the manager reports it).
  func closed(reason: String) {
    _ = end(reason: reason, waitersGet: .disconnected)
  }

  /// Ends the room; returns this client's room streams for the caller to stop.
  private func end(reason: String?, waitersGet error: WCSError) -> [FPWCSApi2Stream] {
    let (streams, continuations, waiters) = state.withLock { state in
      state.phase = .ended(reason: reason)
      let streams = state.published + state.played.values.flatMap { $0 }
      state.published.removeAll()
      state.played.removeAll()
      state.participants.removeAll()
      defer {
        state.eventContinuations.removeAll()
        state.joinWaiters.removeAll()
      }
      return (streams, Array(state.eventContinuations.values), state.joinWaiters)
    }
    for continuation in continuations { continuation.finish() }
    for waiter in waiters {
      waiter.resume(throwing: error)
    }
    return streams
  }

  func roomStreamOptions(
    _ options: FPWCSApi2StreamOptions?, name streamName: String, display: (any VideoRenderer)?
  ) -> FPWCSApi2StreamOptions {
    let copy = FPWCSApi2StreamOptions()
    if let options {
      copy.constraints = options.constraints
      copy.record = options.record
      copy.rtmpUrl = options.rtmpUrl
      copy.custom = options.custom
      copy.transport = options.transport
      copy.stripCodecs = options.stripCodecs
      copy.cvoExtension = options.cvoExtension
      copy.preferredVideoCodec = options.preferredVideoCodec
      copy.h264Profile = options.h264Profile
      copy.audioOutput = options.audioOutput
      copy.iceServers = options.iceServers
      copy.iceTransportPolicy = options.iceTransportPolicy
    }
    copy.name = streamName
    copy.display = display
    copy.custom = (copy.custom ?? [:]).merging(["name": name]) { _, room in room }
    return copy
  }

  /// Records a played stream of `login` (for `leave` and `participant.stop()`).
  func addPlayed(_ stream: FPWCSApi2Stream, of login: String) {
    state.withLock { $0.played[login, default: []].append(stream) }
  }

  func takePlayed(of login: String) -> [FPWCSApi2Stream] {
    state.withLock { $0.played.removeValue(forKey: login) ?? [] }
  }

  func streamNames(of login: String) -> [String] {
    state.withLock { $0.roster.member(login)?.streams ?? [] }
  }

  /// One event of this room (on the callback queue): updates the roster, then the callbacks.
  func receive(_ event: RoomEvent) {
    guard let manager else { return }
    typealias Delivery = (
      change: RoomRoster.Change, participant: FPWCSApi2RoomParticipant?,
      participants: [FPWCSApi2RoomParticipant], callbacks: State,
      continuations: [AsyncStream<FPWCSApi2RoomEvent>.Continuation],
      waiters: [CheckedContinuation<Void, any Error>]
    )
    let outcome: Result<Delivery, RoomEventSkipped> = state.withLock { state in
      guard !Self.isEnded(state.phase) else {
        return .failure(.init("event after the room ended"))
      }
      let result = state.roster.apply(event, ownLogin: manager.username)
      guard case .success(let change) = result else {
        if case .failure(let skipped) = result { return .failure(skipped) }
        return .failure(.init("unreachable"))
      }
      var participant: FPWCSApi2RoomParticipant?
      var waiters: [CheckedContinuation<Void, any Error>] = []
      switch change {
      case .state:
        state.phase = .joined
        for member in state.roster.members {
          state.participants[member.login] = FPWCSApi2RoomParticipant(
            name: member.login, room: self)
        }
        waiters = state.joinWaiters
        state.joinWaiters.removeAll()
      case .joined(let login):
        participant = FPWCSApi2RoomParticipant(name: login, room: self)
        state.participants[login] = participant
      case .left(let login):
        participant = state.participants.removeValue(forKey: login)
        state.played[login] = nil
      case .published(let login, _), .unpublished(let login, _):
        participant = state.participants[login]
      case .message(let from, _, _):
        participant = state.participants[from]
      }
      let ordered = state.roster.members.compactMap { state.participants[$0.login] }
      return .success(
        (change, participant, ordered, state, Array(state.eventContinuations.values), waiters))
    }
    let delivery: Delivery
    switch outcome {
    case .failure(let skipped):
      manager.session.skipped.withLock {
        $0.append("room \(name): \(skipped.reason)")
        if $0.count > 64 { $0.removeFirst() }
      }
      return
    case .success(let value): delivery = value
    }
    for waiter in delivery.waiters { waiter.resume() }
    let callbacks = delivery.callbacks
    let event: FPWCSApi2RoomEvent
    switch delivery.change {
    case .state:
      event = .state(delivery.participants)
      callbacks.onState?.value(self)
    case .joined:
      guard let participant = delivery.participant else { return }
      event = .joined(participant)
      callbacks.onParticipant[.fpwcsRoomParticipantEventJoined]?.value(self, participant)
    case .left:
      guard let participant = delivery.participant else { return }
      event = .left(participant)
      callbacks.onParticipant[.fpwcsRoomParticipantEventLeft]?.value(self, participant)
    case .published(_, let stream):
      guard let participant = delivery.participant else { return }
      event = .published(participant, streamName: stream)
      callbacks.onParticipant[.fpwcsRoomParticipantEventPublished]?.value(self, participant)
    case .unpublished(_, let stream):
      guard let participant = delivery.participant else { return }
      event = .unpublished(participant, streamName: stream)
      callbacks.onParticipant[.fpwcsRoomParticipantEventUnpublished]?.value(self, participant)
    case .message(let from, let to, let text):
      let message = FPWCSApi2RoomMessage(from: from, to: to, text: text, room: name)
      event = .message(message)
      callbacks.onMessage?.value(self, message)
    }
    for continuation in delivery.continuations { continuation.yield(event) }
  }

  private static func isEnded(_ phase: Phase) -> Bool {
    if case .ended = phase { return true }
    return false
  }
}

/// Another member of a room (`FPWCSApi2RoomParticipant`, §A.6).
public final class FPWCSApi2RoomParticipant: Sendable {
  let name: String
  weak let room: FPWCSApi2Room?

  init(name: String, room: FPWCSApi2Room) {
    self.name = name
    self.room = room
  }

  /// The participant's login.
  public func getName() -> String { name }

  /// The name of the participant's latest published stream; `nil` when it publishes none.
  public func getStreamName() -> String? { room?.streamNames(of: name).last }

  /// Every stream the participant publishes, oldest first (Linux addition).
  public func getStreamNames() -> [String] { room?.streamNames(of: name) ?? [] }

  /// Plays the participant's latest stream into `display` (`-play:`). See
  /// `play(_:withOptions:)`.
  @discardableResult
  public func play(_ display: (any VideoRenderer)?) throws -> FPWCSApi2Stream {
    try play(display, withOptions: nil)
  }

  /// Plays the participant's latest stream (`playStream` with `custom.name` = the room, §A.5);
  /// `options` supplies constraints and `audioOutput` (Linux addition).
  /// - Returns: the stream (Playing, or Failed, through its callbacks).
  /// - Throws: `WCSError.invalidArgument` when the participant publishes nothing,
  ///   `.invalidSessionState` when the room ended, and what `FPWCSApi2Stream.play()` throws.
  @discardableResult
  public func play(_ display: (any VideoRenderer)?, withOptions options: FPWCSApi2StreamOptions?)
    throws -> FPWCSApi2Stream
  {
    guard let room, let manager = room.manager else { throw WCSError.disconnected }
    try room.checkJoined(operation: "play \(name)")
    guard let streamName = getStreamName() else {
      throw WCSError.invalidArgument("participant \(name) publishes no stream")
    }
    let stream = try manager.session.createStream(
      room.roomStreamOptions(options, name: streamName, display: display))
    room.addPlayed(stream, of: name)
    try stream.play()
    return stream
  }

  /// Stops every stream of this participant this client plays (`-stop`).
  public func stop() {
    for stream in room?.takePlayed(of: name) ?? [] { try? stream.stop() }
  }

  /// Sends `text` to this participant (`-sendMessage:`); the result is not reported.
  public func sendMessage(_ text: String) { sendMessage(text, handler: nil) }

  /// Sends `text` to this participant (`sendMessage` command, §A.3); `handler` gets ACCEPTED,
  /// or FAILED with the server's reason (`Participant not found` once it left, `Too many room
  /// commands` in a flood) (Linux addition).
  public func sendMessage(_ text: String, handler: FPWCSApi2DataHandler?) {
    guard let room, let manager = room.manager else {
      let box = UncheckedBox(handler)
      DispatchQueue.global().async { box.value?.onRejected?(nil, nil) }
      return
    }
    manager.session.sendData(
      RoomCommands.sendMessage(room: room.getName(), to: name, text: text), handler: handler)
  }

  /// Sends `text` and returns once the server accepted it.
  /// - Throws: `WCSError.dataRejected(info:)` with the server's reason.
  public func sendMessage(_ text: String) async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let handler = FPWCSApi2DataHandler()
      handler.onAccepted = { _, _ in continuation.resume() }
      handler.onRejected = { _, data in
        continuation.resume(throwing: WCSError.dataRejected(info: data?.info ?? "message not sent"))
      }
      sendMessage(text, handler: handler)
    }
  }
}
