import WCSTransport

/// The room application `roomApp` (wcs-rooms-and-calls.md §A.7): room commands arrive as
/// `sendData` payloads of sessions whose `connection.appKey` is `roomApp`, replies are
/// `DataStatusEvent`, room events are `OnDataEvent {payload: {roomName, name, info}}` (§A.3–A.4).
///
/// Rules kept here: a member never gets an event about itself; `STATE`/`JOINED` always precede
/// any other event about a member; `PUBLISHED` is sent only once the stream is PUBLISHING, and
/// `UNPUBLISHED` only for a stream that was announced; a member's room streams end when it
/// leaves or its socket drops, before the others get `LEFT`.
extension WCSServerCore {
  /// Rooms alive (each has at least one member).
  public var roomCount: Int { rooms.rooms.count }

  /// Logins of `room`'s members in join order; empty when there is no such room.
  public func roomMembers(_ room: String) -> [String] {
    rooms.rooms[room]?.members.compactMap { sessions[$0]?.login } ?? []
  }

  /// Sessions holding room state (a membership or a command budget).
  public var roomSessionCount: Int { rooms.memberships.count }

  func isRoomSession(_ id: WCSConnectionID) -> Bool {
    sessions[id]?.appKey == WCSRoomInfo.appKey
  }

  /// One `sendData` of a room session; always answers `operationId` with ACCEPTED or FAILED.
  func handleRoomData(
    _ id: WCSConnectionID, operationId: JSONValue, payload: JSONValue?, now: Int64
  ) {
    let limits = configuration.rooms
    let parsed = Result { () throws(WCSRequestError) in
      try RoomCommand(payload: payload, limits: limits)
    }
    let reply = { (failure: String?) in
      var status: [String: JSONValue] = [
        "operationId": operationId, "status": failure == nil ? "ACCEPTED" : "FAILED",
      ]
      if let failure { status["info"] = .string(failure) }
      self.send(id, ServerMessages.text("DataStatusEvent", [.object(status)]))
    }
    var membership = rooms.memberships[id] ?? RoomMembership(limits: limits, now: now)
    // `leave` frees resources, so a flood never keeps a member in a room.
    var allowed = true
    if case .success(.leave) = parsed {
    } else {
      allowed = membership.takeToken(limits: limits, now: now)
    }
    rooms.memberships[id] = membership
    guard allowed else {
      // Not logged per command: a flood would flood the log as well.
      reply(WCSRoomInfo.tooManyCommands)
      return
    }
    let command: RoomCommand
    switch parsed {
    case .success(let value): command = value
    case .failure(let error):
      log("session \(id): room command refused: \(error)")
      reply(error.description)
      return
    }
    let failure: String?
    switch command {
    case .join(let room): failure = joinRoom(id, room, reply: reply)
    case .leave(let room): failure = leaveRoom(id, room, reply: reply, now: now)
    case .sendMessage(let room, let to, let text):
      failure = sendRoomMessage(id, room: room, to: to, text: text, reply: reply)
    }
    if let failure {
      log("session \(id): room command FAILED: \(failure)")
      reply(failure)
    }
  }

  /// Adds the member; returns the failure reason instead when refused.
  private func joinRoom(
    _ id: WCSConnectionID, _ name: String, reply: (String?) -> Void
  ) -> String? {
    guard let login = sessions[id]?.login, !login.isEmpty else { return WCSRoomInfo.loginMissing }
    let limits = configuration.rooms
    do {
      try checkName(login, field: "custom.login", maxUTF8Bytes: limits.maxLoginUTF8Bytes)
    } catch {
      return error.description
    }
    guard let membership = rooms.memberships[id] else { return WCSRoomInfo.notJoined }
    if membership.rooms.contains(name) { return WCSRoomInfo.alreadyJoined }
    if membership.rooms.count >= limits.maxRoomsPerSession {
      return WCSRoomInfo.tooManyRoomsInSession
    }
    var room: ServerRoom
    if let existing = rooms.rooms[name] {
      if existing.members.count >= limits.maxParticipantsPerRoom { return WCSRoomInfo.roomFull }
      if existing.members.contains(where: { sessions[$0]?.login == login }) {
        return WCSRoomInfo.loginInUse
      }
      room = existing
    } else {
      if rooms.rooms.count >= limits.maxRooms { return WCSRoomInfo.serverRoomLimitReached }
      room = ServerRoom(name: name)
    }
    let others = room.members
    room.members.append(id)
    rooms.rooms[name] = room
    rooms.memberships[id]?.rooms.append(name)
    reply(nil)
    var state: [JSONValue] = []
    for member in others {
      guard let memberLogin = sessions[member]?.login else { continue }
      let published = publishedRoomStreams(of: member, in: name)
      if published.isEmpty {
        state.append(.string(memberLogin))
      } else {
        for stream in published {
          state.append(["login": .string(memberLogin), "name": .string(stream)])
        }
      }
    }
    sendRoomEvent(to: [id], room: name, event: "STATE", info: .array(state))
    sendRoomEvent(to: others, room: name, event: "JOINED", info: .string(login))
    log("session \(id): \(login) joined room \(name) (\(room.members.count) member(s))")
    return nil
  }

  /// Ends the member's streams in the room, removes it and tells the others `LEFT`.
  private func leaveRoom(
    _ id: WCSConnectionID, _ name: String, reply: (String?) -> Void, now: Int64
  ) -> String? {
    guard rooms.memberships[id]?.rooms.contains(name) == true else { return WCSRoomInfo.notJoined }
    let login = sessions[id]?.login ?? ""
    for streamId in sessions[id]?.streamIds ?? [] {
      guard let stream = streams[streamId], stream.request.roomName == name else { continue }
      endStream(
        streamId, status: stream.isPublisher ? .unpublished : .stopped,
        info: WCSStreamInfo.stoppedByUser, playersInfo: WCSStreamInfo.stoppedByPublisherStop,
        now: now)
    }
    removeMember(id, login: login, from: name)
    reply(nil)
    return nil
  }

  private func sendRoomMessage(
    _ id: WCSConnectionID, room name: String, to: String, text: String,
    reply: (String?) -> Void
  ) -> String? {
    guard let room = rooms.rooms[name], room.members.contains(id), let from = sessions[id]?.login
    else { return WCSRoomInfo.notJoined }
    guard let recipient = room.members.first(where: { $0 != id && sessions[$0]?.login == to })
    else { return WCSRoomInfo.participantNotFound }
    reply(nil)
    sendRoomEvent(
      to: [recipient], room: name, event: "MESSAGE",
      info: [
        "from": .string(from), "to": .string(to), "text": .string(text),
        "roomConfig": ["name": .string(name)],
      ])
    return nil
  }

  // MARK: - Hooks from the stream and session code

  /// Why a room session may not publish `request` (`nil`: it may). A stream is a room stream
  /// when `custom.name` names a room (§A.5); its name must be `<room>-<login>` or start with
  /// `<room>-<login>-`, so no member can publish under another's name.
  func roomPublishRefusal(_ id: WCSConnectionID, _ request: StreamRequest) -> String? {
    guard isRoomSession(id), let room = request.roomName else { return nil }
    guard rooms.memberships[id]?.rooms.contains(room) == true, let login = sessions[id]?.login
    else { return WCSRoomInfo.notJoined }
    let prefix = "\(room)-\(login)"
    guard request.name == prefix || request.name.hasPrefix(prefix + "-") else {
      return WCSRoomInfo.streamNameNotInRoom
    }
    return nil
  }

  /// A room publisher reached PUBLISHING: `PUBLISHED {login, name}` to the other members.
  func roomStreamPublished(_ stream: ServerStream) {
    guard let name = stream.request.roomName, let room = rooms.rooms[name],
      stream.isPublisher, room.members.contains(stream.owner)
    else { return }
    sendRoomEvent(
      to: room.members.filter { $0 != stream.owner }, room: name, event: "PUBLISHED",
      info: ["login": .string(stream.ownerLogin), "name": .string(stream.request.name)])
  }

  /// A publisher ended with `status`: `UNPUBLISHED` (or `FAILED`) to the other members, when it
  /// had been announced as PUBLISHED.
  func roomStreamEnded(_ stream: ServerStream, status: WCSStreamStatus) {
    guard let name = stream.request.roomName, let room = rooms.rooms[name],
      stream.isPublisher, stream.status == .publishing, room.members.contains(stream.owner)
    else { return }
    sendRoomEvent(
      to: room.members.filter { $0 != stream.owner }, room: name,
      event: status == .failed ? "FAILED" : "UNPUBLISHED",
      info: ["login": .string(stream.ownerLogin), "name": .string(stream.request.name)])
  }

  /// The session is gone (its streams already ended): `LEFT` in every room it was in.
  func roomSessionEnded(_ id: WCSConnectionID, login: String) {
    guard let membership = rooms.memberships.removeValue(forKey: id) else { return }
    for name in membership.rooms { removeMember(id, login: login, from: name) }
  }

  // MARK: - Helpers

  private func removeMember(_ id: WCSConnectionID, login: String, from name: String) {
    if let index = rooms.memberships[id]?.rooms.firstIndex(of: name) {
      rooms.memberships[id]?.rooms.remove(at: index)
    }
    guard var room = rooms.rooms[name] else { return }
    room.members.removeAll { $0 == id }
    if room.members.isEmpty {
      rooms.rooms[name] = nil
      log("room \(name): \(login) left, room closed")
      return
    }
    rooms.rooms[name] = room
    sendRoomEvent(to: room.members, room: name, event: "LEFT", info: .string(login))
    log("room \(name): \(login) left (\(room.members.count) member(s))")
  }

  /// Names of the member's PUBLISHING streams in `room`, oldest first.
  private func publishedRoomStreams(of member: WCSConnectionID, in room: String) -> [String] {
    (sessions[member]?.streamIds ?? []).compactMap { streamId in
      guard let stream = streams[streamId], stream.isPublisher, stream.status == .publishing,
        stream.request.roomName == room
      else { return nil }
      return stream.request.name
    }
  }

  private func sendRoomEvent(
    to members: [WCSConnectionID], room: String, event: String, info: JSONValue
  ) {
    let text = ServerMessages.text(
      "OnDataEvent",
      [["payload": ["roomName": .string(room), "name": .string(event), "info": info]]])
    for member in members { send(member, text) }
  }
}
