import Foundation
import WCSTransport

@testable import WCSApi2

/// A minimal WCS server behind `MockTransport`s (wcs-protocol.md §9): accepts the connection,
/// answers publish/play with an SDP and PUBLISHING/PLAYING, stop with UNPUBLISHED/STOPPED
/// (`recordName` when recording).
final class ScriptedServer: @unchecked Sendable {
  // @unchecked Sendable: `transports` is guarded by `Locked`.
  let transports = Locked<[MockTransport]>([])
  /// Sessions seen by `settle()`; kept so that their queues are still flushed after they leave
  /// `getSessions()` (Disconnected/Failed).
  private let seen = Locked<[ObjectIdentifier: FPWCSApi2Session]>([:])

  func makeTransport() -> MockTransport {
    let transport = MockTransport()
    transport.onSend { [weak transport] text in
      guard let transport, let message = try? WCSMessageCodec.decode(text) else { return }
      ScriptedServer.answer(message, on: transport)
    }
    transports.withLock { $0.append(transport) }
    return transport
  }

  var last: MockTransport? { transports.value.last }

  private static func answer(_ message: WCSMessage, on transport: MockTransport) {
    let object = message.argument?.objectValue ?? [:]
    let id = object["mediaSessionId"] ?? .null
    func status(_ status: JSONValue, _ extra: [String: JSONValue] = [:]) {
      var body: [String: JSONValue] = [
        "mediaSessionId": id, "name": object["name"] ?? .null, "status": status,
      ]
      for (k, v) in extra { body[k] = v }
      transport.push(WCSMessage(name: "notifyStreamStatusEvent", data: [.object(body)]))
    }
    switch message.name {
    case "connection":
      transport.push(
        WCSMessage(name: "getUserData", data: [["status": "ESTABLISHED", "authToken": "scripted"]]))
      transport.push(WCSMessage(name: "getVersion", data: ["5.2-scripted"]))
    case "publishStream":
      transport.push(
        WCSMessage(
          name: "setRemoteSDP", data: [id, "v=0\r\nm=audio 31004 RTP/SAVPF 111\r\n", true]))
      status("PUBLISHING", ["record": object["record"] ?? false])
    case "playStream":
      transport.push(
        WCSMessage(
          name: "setRemoteSDP", data: [id, "v=0\r\nm=audio 31006 RTP/SAVPF 111\r\n", true]))
      status("PLAYING", ["audioState": ["muted": false], "videoState": ["muted": false]])
    case "unPublishStream":
      status(
        "UNPUBLISHED",
        ["info": "Stopped by user", "recordName": .string("stream-\(id.stringValue ?? "")-.mp4")])
    case "stopStream":
      status("STOPPED", ["info": "Stopped by user"])
    default:
      break
    }
  }

  /// Runs every queued event of every listed session until quiet.
  func settle() {
    for _ in 0..<6 {
      for transport in transports.value { transport.drain() }
      for session in FPWCSApi2.getSessions() {
        seen.withLock { $0[ObjectIdentifier(session)] = session }
      }
      for session in seen.value.values {
        session.work.sync {}
        session.callbackQueue.sync {}
      }
    }
  }

  /// Empties `FPWCSApi2.getSessions()` (sessions left by other tests) so seeds that use
  /// `getSessions()[0]` find theirs.
  static func clearSessions() {
    let cleanup = ScriptedServer()
    let previous = WCSApi2Environment.transportFactory
    WCSApi2Environment.transportFactory = { cleanup.makeTransport() }
    for session in FPWCSApi2.getSessions() {
      if session.getStatus() == .fpwcsSessionStatusNew { session.connect() }
      session.disconnect()
    }
    WCSApi2Environment.transportFactory = previous
  }
}
