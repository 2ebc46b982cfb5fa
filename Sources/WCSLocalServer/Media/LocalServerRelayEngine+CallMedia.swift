import WCSPeerConnection

/// What the SIP gateway needs of a call's WebRTC leg: its audio packets as they arrive and a
/// way to send it packets. The WebRTC leg is a `createPublisher` connection answered
/// `sendrecv` (the SDK's call offers two-way media).
public protocol CallMediaPort: AnyObject, Sendable {
  /// Hands every audio RTP packet (decrypted, RTX unwrapped) the leg `mediaSessionId` receives
  /// to `receive`, on the engine's own thread. Returns the leg's Opus payload type, `nil` when
  /// there is no such leg or it negotiated no Opus.
  func openCallMedia(_ mediaSessionId: String, receive: @escaping @Sendable ([UInt8]) -> Void)
    -> UInt8?
  /// Sends one RTP packet on the leg (SRTP-protected there); dropped when the leg is gone.
  func sendCallMedia(_ mediaSessionId: String, _ packet: [UInt8])
  /// Hands every VP8 RTP packet the leg receives to `receive`, and calls `keyFrameRequested`
  /// when the client asks (PLI/FIR) for a key frame of the video sent to it. Returns the leg's
  /// VP8 payload type, `nil` without such a leg or VP8.
  func openCallVideo(
    _ mediaSessionId: String, receive: @escaping @Sendable ([UInt8]) -> Void,
    keyFrameRequested: @escaping @Sendable () -> Void
  ) -> UInt8?
  /// Asks the leg's client for a key frame of its video (PLI, RFC 4585 §6.3.1).
  func requestCallKeyFrame(_ mediaSessionId: String)
}

extension LocalServerRelayEngine: CallMediaPort {
  /// Taps the audio of the publisher connection `mediaSessionId` (a call's WebRTC leg), on the
  /// relay's loop; returns its lowest Opus payload type, `nil` without such a leg or Opus.
  public func openCallMedia(
    _ mediaSessionId: String, receive: @escaping @Sendable ([UInt8]) -> Void
  ) -> UInt8? {
    loop.submit {
      guard let publisher = publishers[mediaSessionId],
        let opus = publisher.codecs.filter({ $0.value.name.lowercased() == "opus" }).keys.min()
      else { return nil }
      publisher.callMediaTap = receive
      return opus
    }
  }

  /// Sends one RTP packet on the call leg `mediaSessionId` from the relay's loop (SRTP there);
  /// a packet for a leg that is gone, or one SRTP refuses, is dropped.
  public func sendCallMedia(_ mediaSessionId: String, _ packet: [UInt8]) {
    loop.execute { [self] in
      guard let publisher = publishers[mediaSessionId] else { return }
      try? publisher.peerConnection.sendRTP(packet)
    }
  }

  /// Taps the video of the call leg `mediaSessionId`; its lowest VP8 payload type, `nil`
  /// without such a leg or VP8.
  public func openCallVideo(
    _ mediaSessionId: String, receive: @escaping @Sendable ([UInt8]) -> Void,
    keyFrameRequested: @escaping @Sendable () -> Void
  ) -> UInt8? {
    loop.submit {
      guard let publisher = publishers[mediaSessionId],
        let vp8 = publisher.codecs.filter({ $0.value.name.lowercased() == "vp8" }).keys.min()
      else { return nil }
      publisher.callVideoTap = receive
      publisher.callKeyFrameTap = keyFrameRequested
      return vp8
    }
  }

  /// Asks the call leg's client for a key frame, through the publisher's PLI limiter.
  public func requestCallKeyFrame(_ mediaSessionId: String) {
    loop.execute { [self] in
      guard let publisher = publishers[mediaSessionId] else { return }
      _ = requestKeyFrame(publisher)
    }
  }
}
