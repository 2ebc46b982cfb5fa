import WCSProtocols

/// Limits on how long a connection may hold its sockets without a live peer: the connect
/// timeout, and consent expiry for an ICE-lite answerer, whose agent sends no consent checks
/// of its own (RFC 7675 §5.1 applies to full agents; a lite server instead watches the peer's
/// checks, which browsers keep sending on the selected pair).
extension PeerConnection {
  /// Fails the connection when its deadline passed, otherwise (re)schedules itself for it.
  func serviceWatchdog() {
    if let watchdog { loop.cancel(watchdog) }
    watchdog = nil
    guard !state.isFinal, let connectDeadline else { return }
    let now = loop.mediaNow()
    let deadline: MediaInstant
    if !hasConnected {
      deadline = connectDeadline
    } else if configuration.iceLite, signalingRole == .answerer, let agent {
      // The agent connected on an authenticated check, so the time is set here.
      deadline =
        (agent.lastAuthenticatedRequest ?? now) + MediaDuration(configuration.iceConsentTimeout)
    } else {
      return
    }
    if now >= deadline {
      fail(.iceFailed)
      return
    }
    watchdog = loop.schedule(at: deadline, leeway: .zero) { [weak self] in
      self?.serviceWatchdog()
    }
  }

}
