import Foundation
import WCSMediaSeam

/// What the session does when a stream's media connection changes state, and ICE restart.
extension FPWCSApi2Session {
  /// The media connection's state handler for stream `streamId`: records the state on the
  /// stream, and on failure fails the stream (lost capture device, no candidate pair) or
  /// restarts ICE (consent lost while up, the host's addresses changed under it, or a restart
  /// that did not connect, while restarts remain). A network change before the stream was up
  /// (no restart allowed then) fails it at once, the `info` naming the change. Other failures are left to the server, which sees them too.
  func connectionStateHandler(streamId id: String) -> @Sendable (MediaConnectionState) -> Void {
    { [weak self] state in
      guard let self else { return }
      self.work.async {
        guard let stream = self.streamObjects[id] else { return }
        stream.setConnectionState(state)
        switch state {
        case .connected:
          self.core.iceConnected(streamId: id)
        case .failed(.captureDeviceLost(let kind, let reason)):
          self.run(self.core.captureDeviceLost(streamId: id, kind: kind, reason: reason))
        case .failed(.consentExpired):
          self.restartICE(stream)
        case .failed(let failure) where failure.isNoCandidatePair || failure.isNetworkChange:
          if !self.restartICE(stream) {
            self.run(self.core.mediaUnreachable(streamId: id, failure: failure))
          }
        default:
          break
        }
      }
    }
  }

  /// Restarts ICE for `stream` (on the work queue): a new media connection with new ICE
  /// credentials, offered in a new `publishStream`/`playStream` under the same name
  /// (`SessionCore.restartICE`). Returns false, changing nothing, when the stream may not
  /// restart now or the engine cannot make a connection.
  @discardableResult
  func restartICE(_ stream: FPWCSApi2Stream) -> Bool {
    let oldId = stream.mediaSessionId
    guard core.canRestartICE(streamId: oldId) else { return false }
    let newId = UUID().uuidString.lowercased()
    let connection: any MediaConnection
    do throws(MediaBackendError) {
      connection = try backend.makeConnection(
        stream.connectionRequest(published: stream.isPublished()),
        onStateChange: connectionStateHandler(streamId: newId))
    } catch {
      return false
    }
    let effects = core.restartICE(streamId: oldId, newId: newId)
    stream.adoptMediaSessionId(newId)
    streamObjects[oldId] = nil
    streamObjects[newId] = stream
    connections[newId] = connection
    run(effects)
    publishSnapshot()
    return true
  }
}

extension MediaConnectionFailure {
  /// `true` for `.noCandidatePair`.
  var isNoCandidatePair: Bool {
    if case .noCandidatePair = self { return true }
    return false
  }

  /// `true` for `.networkChanged`.
  var isNetworkChange: Bool {
    if case .networkChanged = self { return true }
    return false
  }
}

extension FPWCSApi2Stream {
  /// Restarts ICE now (Linux addition; RFC 8445 §9), e.g. after the app saw the network
  /// change: a new connection with new ICE credentials replaces the current one. WCS takes a
  /// new offer only as a new stream, so the stream is published (played) again under the same
  /// name with a new `mediaSessionId` (`getStreamID()` changes). Status callbacks: no FAILED
  /// and no PENDING; a second PUBLISHING (PLAYING) says the server took the new connection.
  /// Players of a re-published stream see it stop and must play it again (the server ends
  /// the old one). The same restart runs by itself when ICE consent expires (RFC 7675) while
  /// the stream is up, and again, up to `SessionCore.maximumICERestarts` times in a row, while
  /// the new connection finds no working pair; after that the stream fails.
  /// - Throws: `WCSError.invalidStreamState` unless PUBLISHING or PLAYING,
  ///   `.disconnected` without a session.
  public func restartIce() throws {
    guard let session = ownerSession else { throw WCSError.disconnected }
    let status = getStatus()
    try session.onWork { () throws(WCSError) in
      guard session.restartICE(self) else {
        throw .invalidStreamState(status, operation: "restartIce")
      }
    }
  }
}
