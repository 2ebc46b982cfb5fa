import WCSProtocols

/// Pacing of the publish path: the publish session's pacer releases RTP packets at 2.5 × the
/// congestion controller's target, audio before video, instead of a key frame's packets in one
/// burst; a loop timer fires at its next send time.
extension NativeMediaConnection {
  /// Sends what the pacer releases now and arms the timer for its next send time.
  func drainPacer() {
    loop.assertInEventLoop()
    guard !closed else { return }
    let now = loop.mediaNow()
    // In place: a copy would share the queues' storage and copy it on the first write.
    guard let output = publishSession?.releasePaced(now: now) else { return }
    perform(output)
    armPacerTimer(now: now)
  }

  /// Arms the pacer timer for the session's next paced send time (none when nothing waits).
  func armPacerTimer(now: MediaInstant) {
    if let pacerTimer { loop.cancel(pacerTimer) }
    pacerTimer = nil
    guard !closed, let next = publishSession?.nextPacedSendTime else { return }
    pacerTimer = loop.schedule(at: max(next, now), leeway: .zero) { [weak self] in
      self?.pacerTimer = nil
      self?.drainPacer()
    }
  }
}
