import WCSProtocols

/// Pacing of the publish path: RTP packets leave through a `Pacer` at 2.5 × the congestion
/// controller's target, audio before video, instead of a key frame's packets in one burst.
extension NativeMediaConnection {
  /// A packet waiting in the pacer, not yet carrying its transport-wide sequence number.
  struct PacedRTPPacket {
    let packet: RTPPacket
    let isVideo: Bool
  }

  /// Bytes of RTP header the pacer counts per packet besides the payload (fixed header plus
  /// the extensions this engine writes).
  static let pacedHeaderOverhead = 24

  func enqueuePaced(_ packet: RTPPacket, video: Bool, now: MediaInstant) {
    pacer?.enqueue(
      PacedRTPPacket(packet: packet, isVideo: video), priority: video ? .video : .audio,
      size: packet.payload.count + Self.pacedHeaderOverhead, now: now)
  }

  /// Sends what the pacer releases now and arms a loop timer for its next send time.
  func drainPacer() {
    loop.assertInEventLoop()
    guard !closed, pacer != nil else { return }
    let now = loop.mediaNow()
    // In place: a copy would share the queues' storage and copy it on the first write.
    let releases = pacer?.process(now: now) ?? []
    let next = pacer?.nextSendTime
    for release in releases {
      if case .media(let paced, _, _, _) = release {
        stampAndSend(paced.packet, video: paced.isVideo, now: now)
      }
    }
    if let pacerTimer { loop.cancel(pacerTimer) }
    pacerTimer = nil
    guard let next else { return }
    let delay = max(next - now, .zero).duration
    pacerTimer = loop.schedule(after: delay) { [weak self] in
      self?.pacerTimer = nil
      self?.drainPacer()
    }
  }
}
