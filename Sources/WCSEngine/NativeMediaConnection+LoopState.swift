import WCSDevices
import WCSEventLoop
import WCSMediaSeam
import WCSPeerConnection
import WCSProtocols

extension NativeMediaConnection {
  /// What changes in a connection, used on its loop only (`NativeMediaConnection.loopState`).
  struct LoopState {
    var peerConnection: PeerConnection?
    var state: MediaConnectionState = .new
    var closed = false
    var videoTrack: VideoSendTrack?
    var audioTrack: AudioSendTrack?
    var videoSource: (any NativeCaptureSource)?
    var videoDeviceID: String?
    var audioSource: (any NativeCaptureSource)?
    /// Publish: send streams, pacer, transport-wide numbering and the congestion controller
    /// (made with the answer; nil for play).
    var publishSession: RTPPublishSession?
    /// Fires at the publish session's next paced send time.
    var pacerTimer: EventLoopTimer?
    /// When `pacerTimer` fires.
    var pacerDeadline: MediaInstant?
    var videoPayloadType: UInt8 = 96
    /// The answer's H.264 packetization mode when it chose H.264 for video; nil for VP8.
    var h264PacketizationMode: Int?
    var audioPayloadType: UInt8 = 111
    var rtxPayloadType: UInt8?
    /// Play: routing, receive streams, transport feedback and receive counters (made anew
    /// with the answer's payload types; before, nothing is played).
    var playSession = RTPPlaySession(
      configuration: .init(localSSRC: 0, feedbackClockOrigin: .distantPast))
    var videoReceiveTrack: VideoReceiveTrack?
    var audioReceiveTrack: AudioReceiveTrack?
    /// Lip sync of the played audio and video (play with both, `synchronizesPlayout`).
    var playoutSync: PlayoutSync?
    var pollTimer: EventLoopTimer?
    /// When `pollTimer` fires (play: a packet whose stream falls due earlier re-arms it).
    var pollDeadline: MediaInstant?
    /// Drives the audio receive track's playout turns.
    var audioPlayoutTimer: EventLoopTimer?
    var counters = MediaConnectionStats()
    var extra = DetailedStatistics()
    /// The bitrate window's start and the video bytes sent and received then.
    var rateWindow: (start: MediaInstant, bytes: UInt64)?
    var mediaStarted = false
    /// ICE servers of the request left out, and why (`NativeICEServers.resolve`).
    var iceServerNotes: [String] = []
    /// The rtnetlink watch of the host's addresses (`watchNetworkChanges`), while open.
    var hostAddressWatcher: EventLoopHostAddressWatcher?
    /// Why the connection failed when a capture device was lost or failed; see `failureReason`.
    var captureFailure: (kind: CaptureDevice.Kind, reason: String)?
    /// The negotiated transport-wide sequence number extension id, `nil` without TWCC.
    var transportWideCCID: UInt8?
  }
}
