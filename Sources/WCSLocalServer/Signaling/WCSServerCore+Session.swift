import Foundation
import WCSTransport

/// `sendStreamEvent`, `sendData`, `availableStream`, `snapshot` (wcs-protocol.md §3.1–3.2,
/// §4.6–4.7, §9.5–9.6).
extension WCSServerCore {
  /// Relays a publisher's event to each of its players as `notifyStreamEvent` with the
  /// player's own `mediaSessionId`; mute types update the state later players receive.
  func handleStreamEvent(_ id: WCSConnectionID, _ message: WCSMessage) {
    guard let object = message.argument?.objectValue else {
      reject(id, .argumentNotAnObject(message: message.name))
      return
    }
    let mediaSessionId: String
    let type: String
    do throws(WCSRequestError) {
      guard let found = try StreamRequest.mediaSessionId(of: object) else {
        throw WCSRequestError.missingField("mediaSessionId")
      }
      mediaSessionId = found
      type = try StreamRequest.requiredString("type", in: object)
      try checkName(type, field: "type", maxUTF8Bytes: WCSStreamRequestLimits.maxNameUTF8Bytes)
      try checkEventPayload(object["payload"])
    } catch {
      reject(id, error)
      return
    }
    guard var publisher = streams[mediaSessionId], publisher.owner == id, publisher.isPublisher
    else {
      log("session \(id): sendStreamEvent for \(mediaSessionId): \(WCSStreamInfo.streamNotFound)")
      send(id, ServerMessages.fail(info: WCSStreamInfo.streamNotFound))
      return
    }
    switch type {
    case "audioMuted": publisher.audioMuted = true
    case "audioUnmuted": publisher.audioMuted = false
    case "videoMuted": publisher.videoMuted = true
    case "videoUnmuted": publisher.videoMuted = false
    default: break
    }
    streams[mediaSessionId] = publisher
    let players = playersBySource[mediaSessionId] ?? []
    let payload = object["payload"].flatMap { $0.isNull ? nil : $0 }
    for player in players {
      guard let owner = streams[player]?.owner else { continue }
      send(owner, ServerMessages.streamEvent(mediaSessionId: player, type: type, payload: payload))
    }
    log("stream \(mediaSessionId) event \(type) relayed to \(players.count) player(s)")
  }

  /// Refuses a `sendStreamEvent` payload over `maxStreamEventPayloadBytes` of JSON.
  private func checkEventPayload(_ payload: JSONValue?) throws(WCSRequestError) {
    guard let payload, !payload.isNull else { return }
    let limit = configuration.maxStreamEventPayloadBytes
    // A payload that cannot be encoded could not be relayed either: it counts as over the limit.
    let bytes = (try? JSONEncoder().encode(payload).count) ?? Int.max
    guard bytes <= limit else {
      throw .invalidValue(
        field: "payload",
        reason:
          "must be at most \(limit) bytes of JSON, got \(bytes == Int.max ? "more" : "\(bytes)")")
    }
  }

  /// `sendData {operationId, payload}` → `DataStatusEvent {operationId, status:"ACCEPTED"}`;
  /// the local server has no REST backend, so every payload is accepted (§7.4), except on
  /// `roomApp` sessions, where payloads are room commands (WCSServerCore+Rooms.swift).
  func handleSendData(_ id: WCSConnectionID, _ message: WCSMessage, now: Int64) {
    guard let object = message.argument?.objectValue else {
      reject(id, .argumentNotAnObject(message: message.name))
      return
    }
    guard let operationId = object["operationId"], !operationId.isNull else {
      reject(id, .missingField("operationId"))
      return
    }
    guard case .string = operationId else {
      reject(id, .wrongType(field: "operationId", expected: "a string"))
      return
    }
    if isRoomSession(id) {
      handleRoomData(id, operationId: operationId, payload: object["payload"], now: now)
      return
    }
    send(
      id,
      ServerMessages.text(
        "DataStatusEvent", [["operationId": operationId, "status": "ACCEPTED"]]))
    log("session \(id): sendData \(operationId.stringValue ?? "") accepted")
  }

  /// `availableStream {mediaSessionId, name}` → `availableStream {status, info, id}` with the
  /// status as the strings `"true"`/`"false"` (§4.7); true when the name is PUBLISHING.
  func handleAvailable(_ id: WCSConnectionID, _ message: WCSMessage) {
    guard let object = message.argument?.objectValue else {
      reject(id, .argumentNotAnObject(message: message.name))
      return
    }
    let name: String
    let mediaSessionId: String?
    do {
      name = try StreamRequest.requiredString("name", in: object)
      mediaSessionId = try StreamRequest.mediaSessionId(of: object)
    } catch {
      reject(id, error)
      return
    }
    let available = publishersByName[name].flatMap { streams[$0] }?.status == .publishing
    send(
      id,
      ServerMessages.text(
        "availableStream",
        [
          [
            "status": available ? "true" : "false",
            "info": .string(available ? "Available" : WCSStreamInfo.streamNotFound),
            "id": mediaSessionId.map { .string($0) } ?? .null,
          ]
        ]))
    log("session \(id): availableStream \(name) = \(available)")
  }

  /// `snapshot {name, mediaSessionId}`: a picture of the publisher of `name` (§3, §4.6).
  func handleSnapshot(_ id: WCSConnectionID, _ message: WCSMessage) {
    guard let object = message.argument?.objectValue else {
      reject(id, .argumentNotAnObject(message: message.name))
      return
    }
    let mediaSessionId: String
    do throws(WCSRequestError) {
      guard let found = try StreamRequest.mediaSessionId(of: object) else {
        throw WCSRequestError.missingField("mediaSessionId")
      }
      mediaSessionId = found
    } catch {
      reject(id, error)
      return
    }
    requestSnapshot(id, mediaSessionId: mediaSessionId, name: object["name"]?.stringValue)
  }
}
