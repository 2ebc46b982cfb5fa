import WCSEventLoop
import WCSPeerConnection
import WCSProtocols

/// One publisher's side of the relay. Touched only on the engine's event loop.
final class RelayPublisher {
  let mediaSessionId: String
  let streamName: String
  let peerConnection: PeerConnection
  /// Offered Opus/VP8 payload types of the publisher.
  let codecs: [UInt8: RelayCodec]
  /// Our SSRC as the sender of this leg's RTCP (RR, PLI).
  let rtcpSSRC: UInt32
  /// The CNAME of our RTCP on this leg (`LocalServerRelayEngine.cname(streamName:)`).
  let cname: String
  var connected = false
  var caches: [UInt32: RelayPacketCache] = [:]
  var reception: [UInt32: RelayReceptionStatistics] = [:]
  /// The SSRC the publisher sends VP8 from, once seen (PLI target).
  var videoSSRC: UInt32?
  var keyFrameRequests: KeyFrameRequestLimiter
  /// Fires when the PLI deferred by `keyFrameRequests` is due.
  var keyFrameTimer: EventLoopTimer?
  var recording: RelayRecording?
  /// The `rtmpUrl` re-publication, while it runs.
  var rtmpPush: RTMPPusher?
  /// The frames a snapshot decodes (since the last key frame).
  let snapshots = RelaySnapshotSource()
  /// Players of this publisher, in the order they started.
  var playerIds: [String] = []
  /// The publisher's RTX payload types → the media payload type each repairs (RFC 4588).
  var retransmissionPayloadTypes: [UInt8: UInt8] = [:]
  /// The publisher's RTX SSRCs → their media SSRC (`a=ssrc-group:FID` of its offer).
  var retransmissionSSRCs: [UInt32: UInt32] = [:]
  /// Media kinds the publisher accepts generic NACKs for.
  var nackKinds: Set<RelayCodec.Kind> = []
  /// Per media SSRC: what is missing and when to ask for it again.
  var losses: [UInt32: RelayLossTracker] = [:]
  /// Fires when a NACK is due on this leg; `nackTimerDeadline` is when, ms.
  var nackTimer: EventLoopTimer?
  var nackTimerDeadline: MediaInstant?
  var statistics: RelayLegStatistics
  /// `statistics.videoBytes` when the last video rate was measured, and when.
  var videoRateSample: (bytes: Int, at: MediaInstant)?

  init(
    mediaSessionId: String, streamName: String, peerConnection: PeerConnection,
    codecs: [UInt8: RelayCodec], rtcpSSRC: UInt32, keyFrameRequests: KeyFrameRequestLimiter
  ) {
    self.mediaSessionId = mediaSessionId
    self.streamName = streamName
    self.peerConnection = peerConnection
    self.codecs = codecs
    self.rtcpSSRC = rtcpSSRC
    cname = LocalServerRelayEngine.cname(streamName: streamName)
    self.keyFrameRequests = keyFrameRequests
    statistics = RelayLegStatistics(role: .publisher, streamName: streamName)
  }

  /// The media SSRC an RTX packet on `ssrc` repairs: its FID partner, else the one SSRC seen of
  /// the repaired codec's kind (a publisher that signalled no group).
  func mediaSSRC(repairedBy ssrc: UInt32, kind: RelayCodec.Kind) -> UInt32? {
    if let media = retransmissionSSRCs[ssrc] { return media }
    return kind == .video ? videoSSRC : audioSSRC
  }

  /// The SSRC the publisher sends Opus from, once seen.
  var audioSSRC: UInt32?
  /// A gateway call's WebRTC leg: where its audio packets go besides the relay
  /// (`CallMediaPort`).
  var callMediaTap: (@Sendable ([UInt8]) -> Void)?
  /// Its video packets, and its client's key frame requests for the video it gets.
  var callVideoTap: (@Sendable ([UInt8]) -> Void)?
  var callKeyFrameTap: (@Sendable () -> Void)?
}

/// The losses of one publisher SSRC: its sequence numbers extended past the wrap (RFC 3550
/// §A.1) and the `NACKGenerator` that decides what to request and when.
struct RelayLossTracker {
  var sequence = RTPExtendedSequenceNumber()
  var generator: NACKGenerator
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
  /// The CNAME of the answer's `a=ssrc` lines and of our RTCP on this leg.
  let cname: String
  var connected = false
  /// Per publisher SSRC: the rewriter and the stream's clock rate (for SR timestamps).
  var rewriters: [UInt32: RelayRTPRewriter] = [:]
  var clockRates: [UInt32: Int] = [:]
  /// The player's media payload type → its RTX payload type (the answer kept them: RFC 4588).
  var retransmissionPayloadTypes: [UInt8: UInt8] = [:]
  /// The SSRC we send each kind's RTX from (signalled in the answer's FID group).
  let retransmissionSSRCs: [RelayCodec.Kind: UInt32]
  /// The next sequence number of each RTX stream (its own numbering, RFC 4588 §4).
  var retransmissionSequenceNumbers: [RelayCodec.Kind: UInt16]
  var resends: RelayResendLimiter
  var statistics: RelayLegStatistics
  /// `statistics.videoBytes` when the last video rate was measured, and when.
  var videoRateSample: (bytes: Int, at: MediaInstant)?
  /// Cumulative loss of the newest receiver report block about each SSRC we send.
  var lostBySSRC: [UInt32: Int] = [:]

  init(
    mediaSessionId: String, sourceMediaSessionId: String, streamName: String,
    peerConnection: PeerConnection, codecs: [UInt8: RelayCodec], ssrcs: [RelayCodec.Kind: UInt32],
    retransmissionSSRCs: [RelayCodec.Kind: UInt32],
    retransmissionSequenceNumbers: [RelayCodec.Kind: UInt16], resends: RelayResendLimiter
  ) {
    self.mediaSessionId = mediaSessionId
    self.sourceMediaSessionId = sourceMediaSessionId
    self.peerConnection = peerConnection
    self.codecs = codecs
    self.ssrcs = ssrcs
    cname = LocalServerRelayEngine.cname(streamName: streamName)
    self.retransmissionSSRCs = retransmissionSSRCs
    self.retransmissionSequenceNumbers = retransmissionSequenceNumbers
    self.resends = resends
    statistics = RelayLegStatistics(role: .player, streamName: streamName)
  }
}
