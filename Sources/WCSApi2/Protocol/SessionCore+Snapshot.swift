import Foundation
import WCSTransport

/// Stream snapshots (wcs-protocol.md §3 `snapshot`): the server answers with a
/// `notifyStreamEvent` `snapshotCompleted` (a base64 PNG) or `snapshotFailed` (§4.6).
extension SessionCore {
  /// `snapshot {name, mediaSessionId}` for a stream that is NEW (the usual case: no publish or
  /// play needed), PLAYING or PUBLISHING.
  /// - Throws: `WCSError.invalidSessionState` unless established, `.invalidStreamState` for an
  ///   unknown stream or one in another status.
  func snapshot(streamId: String) throws(WCSError) -> [SessionEffect] {
    guard isEstablishedOrRegistered else {
      throw .invalidSessionState(status, operation: "snapshot")
    }
    guard let stream = streams[streamId] else {
      throw .invalidStreamState(.fpwcsStreamStatusFailed, operation: "snapshot")
    }
    let allowed: [kFPWCSStreamStatus] = [
      .fpwcsStreamStatusNew, .fpwcsStreamStatusPlaying, .fpwcsStreamStatusPublishing,
    ]
    guard allowed.contains(stream.status) else {
      throw .invalidStreamState(stream.status, operation: "snapshot")
    }
    let object: JSONValue = ["name": .string(stream.name), "mediaSessionId": .string(streamId)]
    return [.send(WCSMessage(name: "snapshot", data: [object]))]
  }
}
