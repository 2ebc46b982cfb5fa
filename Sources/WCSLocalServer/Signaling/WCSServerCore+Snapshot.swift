import Foundation
import WCSTransport

/// A `snapshot` the media engine is working on: who gets the answer.
struct PendingSnapshot: Sendable, Equatable {
  /// The session that asked.
  var connection: WCSConnectionID
  /// The asking stream's id: the answer's `mediaSessionId` (wcs-protocol.md §4.6).
  var mediaSessionId: String
}

/// Snapshots (wcs-protocol.md §3 `snapshot`, §4.6): the core finds the publisher, the media
/// engine decodes its latest picture, the answer goes back as `notifyStreamEvent`.
extension WCSServerCore {
  /// Requests waiting for the engine at most; more are refused with `snapshotFailed`.
  static let maxPendingSnapshots = 64

  /// Asks the engine for a picture of the publisher named `name` (else the stream
  /// `mediaSessionId` plays or publishes); `snapshotFailed` at once when there is none.
  func requestSnapshot(_ id: WCSConnectionID, mediaSessionId: String, name: String?) {
    func fail(_ info: String) {
      log("session \(id): snapshot for \(mediaSessionId) failed: \(info)")
      send(
        id,
        ServerMessages.streamEvent(
          mediaSessionId: mediaSessionId, type: "snapshotFailed", payload: ["info": .string(info)]
        ))
    }
    var source = name.flatMap { publishersByName[$0] }
    if source == nil, let stream = streams[mediaSessionId] {
      switch stream.role {
      case .publisher: source = mediaSessionId
      case .player(let publisher): source = publisher
      }
    }
    guard let source else { return fail(WCSStreamInfo.streamNotFound) }
    guard pendingSnapshots.count < Self.maxPendingSnapshots else {
      return fail("Too many snapshots in progress")
    }
    let requestId = UUID().uuidString
    pendingSnapshots[requestId] = PendingSnapshot(connection: id, mediaSessionId: mediaSessionId)
    actions.append(.media(.snapshot(sourceMediaSessionId: source, requestId: requestId)))
  }

  /// The engine's answer to `requestId`, sent to the stream that asked (if its session is
  /// still there).
  func answerSnapshot(_ requestId: String, type: String, payload: JSONValue) {
    guard let pending = pendingSnapshots.removeValue(forKey: requestId) else { return }
    log("session \(pending.connection): \(type) for \(pending.mediaSessionId)")
    send(
      pending.connection,
      ServerMessages.streamEvent(
        mediaSessionId: pending.mediaSessionId, type: type, payload: payload))
  }
}
