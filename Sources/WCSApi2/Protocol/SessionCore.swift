import Foundation
import WCSMediaSeam
import WCSTransport

/// What `connection` carries (wcs-protocol.md §1.3).
struct SessionConnectionConfig: Sendable, Equatable {
  var appKey = "defaultApp"
  var custom: [String: JSONValue]?
  var keepAlive = false
  var authToken: String?
  var sip: [String: JSONValue] = [:]
  var clientVersion = "2.0"
  var clientOSVersion = "Linux"
  var clientBrowserVersion = "FPWCSLinux/0.1"
  /// Missed-ping detection (wcs-protocol.md §7.1 `receiveProbes`): this many probe intervals
  /// without a server `ping` fail the session; 0 = off.
  var receiveProbes = 0
}

/// The WCS client session state machine (wcs-protocol.md §1–§7, §9b), Sans-I/O: inputs are API
/// calls and transport events, outputs are `SessionEffect`s. Not thread-safe: its owner confines
/// it to one serial queue.
final class SessionCore {
  var status: kFPWCSSessionStatus = .fpwcsSessionStatusNew
  /// Why the session failed (the server's `info`, or the transport's reason).
  var failureReason: String?
  /// The failure came from the server refusing the connection (`fail`, `ConnectionStatusEvent`).
  var refusedByServer = false
  var authToken: String?
  var serverVersion: String?
  var userData: [String: JSONValue]?
  var streams: [String: StreamState] = [:]
  var streamOrder: [String] = []
  /// `setRemoteSDP` for ids not (yet) known, oldest first; bounded.
  var unclaimedRemoteSDP: [(id: String, sdp: String)] = []
  var availabilityChecks: Set<String> = []
  var pendingData: Set<String> = []
  /// Probe intervals since the last server `ping`.
  var missedProbes = 0
  /// Per publishing stream: whether the bandwidth estimate stayed under its minimum bitrate.
  var bandwidthDetectors: [String: InsufficientBandwidthDetector] = [:]
  /// SIP calls (SessionCore+Calls.swift).
  var calls = CallTable()
  var config: SessionConnectionConfig

  /// How many unclaimed `setRemoteSDP` answers are kept.
  static let unclaimedRemoteSDPLimit = 16

  init(config: SessionConnectionConfig) {
    self.config = config
  }

  /// Ids of the live streams, in creation order.
  var streamIds: [String] { streamOrder.filter { streams[$0] != nil } }

  // MARK: API inputs

  /// `connect()`: only from New, Disconnected or Failed (a re-connect).
  func connect() -> [SessionEffect] {
    switch status {
    case .fpwcsSessionStatusNew, .fpwcsSessionStatusDisconnected, .fpwcsSessionStatusFailed:
      status = .fpwcsSessionStatusPending
      failureReason = nil
      refusedByServer = false
      missedProbes = 0
      userData = nil
      return [.sessionStatus(status), .openTransport]
    default:
      return []
    }
  }

  /// The transport is open: send `connection` (wcs-protocol.md §1.2 step 2).
  func transportOpened() -> [SessionEffect] {
    guard status == .fpwcsSessionStatusPending else { return [] }
    return [.send(ClientMessages.connection(config))]
  }

  /// `disconnect()`: close the socket; the session is Disconnected at once.
  func disconnect() -> [SessionEffect] {
    switch status {
    case .fpwcsSessionStatusNew, .fpwcsSessionStatusDisconnected, .fpwcsSessionStatusFailed:
      return []
    default:
      return end(with: .fpwcsSessionStatusDisconnected, reason: nil, closeTransport: true)
    }
  }

  /// The transport closed by itself: Disconnected once established, Failed before.
  func transportClosed(code: Int, reason: String) -> [SessionEffect] {
    switch status {
    case .fpwcsSessionStatusPending:
      let text =
        "connection closed before ESTABLISHED (code \(code)\(reason.isEmpty ? "" : ", \(reason)"))"
      return end(with: .fpwcsSessionStatusFailed, reason: text, closeTransport: false)
    case .fpwcsSessionStatusEstablished, .fpwcsSessionStatusRegistered,
      .fpwcsSessionStatusUnregistered:
      return end(with: .fpwcsSessionStatusDisconnected, reason: nil, closeTransport: false)
    default:
      return []
    }
  }

  /// The transport failed: Failed with its reason.
  func transportFailed(reason: String) -> [SessionEffect] {
    switch status {
    case .fpwcsSessionStatusNew, .fpwcsSessionStatusDisconnected, .fpwcsSessionStatusFailed:
      return []
    default:
      return end(with: .fpwcsSessionStatusFailed, reason: reason, closeTransport: false)
    }
  }

  /// One probe interval passed (the driver's timer, every `probesInterval`): after
  /// `receiveProbes` intervals without a `ping` the session fails and the socket is closed.
  func probeTick() -> [SessionEffect] {
    guard config.receiveProbes > 0,
      isEstablishedOrRegistered
    else { return [] }
    missedProbes += 1
    guard missedProbes >= config.receiveProbes else { return [] }
    return end(
      with: .fpwcsSessionStatusFailed,
      reason: "no ping from the server in \(missedProbes) probe intervals",
      closeTransport: true)
  }

  // MARK: helpers

  /// Ends the session: every live stream fails locally (so that when the session callback runs
  /// each stream is already final), pending data is rejected, then the session status fires.
  func end(with final: kFPWCSSessionStatus, reason: String?, closeTransport: Bool)
    -> [SessionEffect]
  {
    var effects: [SessionEffect] = closeTransport ? [.closeTransport] : []
    for id in streamIds {
      guard var stream = streams[id], !stream.status.isTerminal else { continue }
      effects += finish(
        &stream, status: .fpwcsStreamStatusFailed, info: "Stopped by session disconnect",
        localDetail: nil)
    }
    for id in pendingData.sorted() {
      effects.append(
        .dataStatus(
          operationId: id, accepted: false, payload: nil, status: "FAILED", info: "session ended"))
    }
    pendingData.removeAll()
    availabilityChecks.removeAll()
    effects += calls.sessionEnded().map(SessionEffect.call)
    status = final
    failureReason = reason
    effects.append(.sessionStatus(final))
    return effects
  }

  /// Puts a stream in a terminal status, releases its media and forgets it.
  func finish(
    _ stream: inout StreamState, status: kFPWCSStreamStatus, info: String?, localDetail: String?
  ) -> [SessionEffect] {
    stream.status = status
    stream.info = localDetail.map { "\(info ?? ""): \($0)" } ?? info
    stream.statusInfo = FPWCSApi2Model.streamStatusInfo(from: info)
    streams[stream.id] = nil
    bandwidthDetectors[stream.id] = nil
    streamOrder.removeAll { $0 == stream.id }
    return [.releaseMedia(streamId: stream.id), .streamStatus(status, stream)]
  }

  static func parseBandwidth(_ info: String?, into stream: inout StreamState) {
    guard let parts = info?.split(separator: "/"), parts.count == 2,
      let remote = Int(parts[0].trimmingCharacters(in: .whitespaces)),
      let network = Int(parts[1].trimmingCharacters(in: .whitespaces))
    else { return }
    stream.remoteBitrate = remote
    stream.networkBandwidth = network
  }

  static func muteEventType(audio: Bool, muted: Bool) -> String {
    (audio ? "audio" : "video") + (muted ? "Muted" : "Unmuted")
  }
}
