import WCSMedia

/// One publisher's side of the relay. Touched only on the engine's event loop.
final class RelayPublisher {
  let mediaSessionId: String
  let streamName: String
  let peerConnection: PeerConnection
  /// Offered Opus/VP8 payload types of the publisher.
  let codecs: [UInt8: RelayCodec]
  /// Our SSRC as the sender of this leg's RTCP (RR, PLI).
  let rtcpSSRC: UInt32
  var connected = false
  var caches: [UInt32: RelayPacketCache] = [:]
  var reception: [UInt32: RelayReceptionStatistics] = [:]
  /// The SSRC the publisher sends VP8 from, once seen (PLI target).
  var videoSSRC: UInt32?
  var keyFrameRequests: KeyFrameRequestLimiter
  var recording: RelayRecording?
  /// Players of this publisher, in the order they started.
  var playerIds: [String] = []

  init(
    mediaSessionId: String, streamName: String, peerConnection: PeerConnection,
    codecs: [UInt8: RelayCodec], rtcpSSRC: UInt32, keyFrameRequests: KeyFrameRequestLimiter
  ) {
    self.mediaSessionId = mediaSessionId
    self.streamName = streamName
    self.peerConnection = peerConnection
    self.codecs = codecs
    self.rtcpSSRC = rtcpSSRC
    self.keyFrameRequests = keyFrameRequests
  }
}

/// One player's side of the relay. Touched only on the engine's event loop.
final class RelayPlayer {
  let mediaSessionId: String
  let sourceMediaSessionId: String
  let peerConnection: PeerConnection
  /// Offered Opus/VP8 payload types of the player.
  let codecs: [UInt8: RelayCodec]
  /// The SSRC we send each kind from (signalled in the answer).
  let ssrcs: [RelayCodec.Kind: UInt32]
  var connected = false
  /// Per publisher SSRC: the rewriter and the stream's clock rate (for SR timestamps).
  var rewriters: [UInt32: RelayRTPRewriter] = [:]
  var clockRates: [UInt32: Int] = [:]

  init(
    mediaSessionId: String, sourceMediaSessionId: String, peerConnection: PeerConnection,
    codecs: [UInt8: RelayCodec], ssrcs: [RelayCodec.Kind: UInt32]
  ) {
    self.mediaSessionId = mediaSessionId
    self.sourceMediaSessionId = sourceMediaSessionId
    self.peerConnection = peerConnection
    self.codecs = codecs
    self.ssrcs = ssrcs
  }
}
