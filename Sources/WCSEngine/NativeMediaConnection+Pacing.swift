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

  /// Arms the pacer timer for the session's next paced send time (none when nothing waits);
  /// one already armed for that time is kept, as every frame sent asks again.
  func armPacerTimer(now: MediaInstant) {
    let next = closed ? nil : publishSession?.nextPacedSendTime.map { max($0, now) }
    guard next != pacerDeadline || pacerTimer == nil else { return }
    if let pacerTimer { loop.cancel(pacerTimer) }
    pacerTimer = nil
    pacerDeadline = next
    guard let next else { return }
    pacerTimer = loop.schedule(at: next, leeway: .zero) { [weak self] in
      self?.pacerTimer = nil
      self?.pacerDeadline = nil
      self?.drainPacer()
    }
  }
}
