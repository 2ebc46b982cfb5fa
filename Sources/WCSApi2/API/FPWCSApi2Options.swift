import Dispatch
import WCSMediaSeam
import WCSTransport

/// Session options (`FPWCSApi2SessionOptions`, api-surface.md §2.3). Read once, when the session
/// is created; later changes do not affect it.
public final class FPWCSApi2SessionOptions {
  /// WebSocket URL of the server, `ws://host:8080` or `wss://host:8443` (path ignored by WCS).
  public var urlServer: String?
  /// REST-hook application key; `nil` = `"defaultApp"`.
  public var appKey: String?
  /// Custom fields forwarded to the server's `connect` hook (JSON-compatible values).
  public var custom: [String: Any]?
  /// Ask the server to keep the session after the socket drops (resume with `authToken`).
  public var keepAlive: Bool = false
  /// Token of a kept-alive server session to re-attach to.
  public var authToken: String?
  /// Ask the server to REGISTER the SIP account (status Registered). Sent, SIP calls come later.
  public var sipRegisterRequired: Bool = false
  /// SIP user.
  public var sipLogin: String?
  /// SIP authentication name.
  public var sipAuthenticationName: String?
  /// SIP password.
  public var sipPassword: String?
  /// SIP display name.
  public var sipVisibleName: String?
  /// SIP domain.
  public var sipDomain: String?
  /// SIP outbound proxy.
  public var sipOutboundProxy: String?
  /// SIP port.
  public var sipPort: Int?
  /// STUN and TURN servers for every stream of the session (iOS `mediaConfig.iceServers`,
  /// `FPWCSApi2IceServer`); `nil` = the media engine's configured ones. Parsed when the
  /// session is created: a bad URI throws `WCSError.invalidOption`.
  public var iceServers: [FPWCSApi2IceServer]?
  /// Candidate policy for every stream (iOS `mediaConfig.iceTransportPolicy`); `nil` = the
  /// engine's (`.all` by default). `.relay` needs a TURN server.
  public var iceTransportPolicy: FPWCSApi2IceTransportPolicy?

  // Linux additions.

  /// Queue for every callback of this session and its streams; `nil` = a private serial queue.
  public var callbackQueue: DispatchQueue?
  /// Signalling transport to use; `nil` = `WCSApi2Environment.makeSignalingTransport()`.
  public var signalingTransport: (any SignalingTransport)?
  /// Media engine to use; `nil` = `WCSApi2Environment.sharedMediaBackend`.
  public var mediaBackend: (any MediaBackend)?
  /// WebSocket connect options: extra headers, timeout, TLS verification.
  public var connectOptions = SignalingConnectOptions()
  /// Missed-ping detection: after this many `probesInterval`s without a server `ping` the session
  /// fails (wcs-protocol.md §7.1, `receiveProbes`); 0 (default) = off.
  public var receiveProbes: Int = 0
  /// Seconds between missed-ping probes (default 5, the server's default ping interval).
  public var probesInterval: Double = 5
  /// Seconds between samples of each stream's media connection stats for
  /// `getNetworkBandwidth`/`getRemoteBitrate` and the local NOT_ENOUGH_BANDWIDTH check
  /// (Linux addition; 0 turns sampling off).
  public var bandwidthSampleInterval: Double = 1
  /// `clientVersion` sent in `connection`.
  public var clientVersion: String = "2.0"

  /// Empty options (`urlServer` must be set before creating a session).
  public init() {}
}

/// Stream options (`FPWCSApi2StreamOptions`, api-surface.md §2.6).
public final class FPWCSApi2StreamOptions {
  /// Stream name to publish or play.
  public var name: String?
  /// Media to send/receive; `nil` = audio and video with defaults.
  public var constraints: FPWCSApi2MediaConstraints?
  /// Where local preview (publish) or remote video (play) is rendered.
  public var display: (any VideoRenderer)?
  /// Record the published stream on the server (file name from `getRecordName()`).
  public var record: Bool = false
  /// Republish to this RTMP URL (publish only).
  public var rtmpUrl: String?
  /// Custom fields sent with `publishStream`/`playStream`.
  public var custom: [String: Any]?
  /// WebRTC media transport.
  public var transport: kFPWCSTransport = .fpwcsTransportUDP
  /// Codec names to remove from the offer (`"H264"`); strings or substrings (iOS: `NSArray`).
  public var stripCodecs: [Any]?
  /// Ask for the RTP Coordination-of-Video-Orientation extension (`cvoExtension`).
  public var cvoExtension: Bool = false
  /// Linux addition: the video codec offered first, `"H264"` or `"VP8"` (case-insensitive);
  /// nil offers VP8, then H.264. The server takes the first it supports; `stripCodecs` still
  /// removes a codec altogether.
  public var preferredVideoCodec: String?
  /// Linux addition: an H.264 profile above baseline (`.main`: `4d001f`, `.constrainedHigh`:
  /// `640c1f`, level 3.1, packetization-mode 1) offered before the baseline H.264 formats and,
  /// when the server's answer picks it, encoded by OpenH264 (CABAC: fewer bits for the same
  /// pictures). A player sets it too to receive such a stream from a relay that does not
  /// transcode (WCS passes H.264 on only with the same profile and mode). Nil: baseline only.
  public var h264Profile: H264OfferedProfile?

  // Linux additions.

  /// Play only: the sound output the stream's audio is played on, opened when `play()` creates
  /// the media connection (`.defaultDevice`: PulseAudio's default sink, else ALSA `default`;
  /// `.device(name)`: a sink or PCM name). Default `.none`: audio is decoded for the media
  /// backend's playout sink only. A device that cannot be opened then leaves the stream playing
  /// without it. Change it later with `FPWCSApi2Stream.setAudioOutput(_:)` or
  /// `setLoudspeakerStatus(_:)`. Ignored for a published stream.
  public var audioOutput: MediaConnectionRequest.AudioOutput = .none
  /// STUN and TURN servers for this stream only, replacing the session's
  /// (`FPWCSApi2SessionOptions.iceServers`); `nil` = the session's. `[]` = none at all.
  public var iceServers: [FPWCSApi2IceServer]?
  /// Candidate policy for this stream only; `nil` = the session's.
  public var iceTransportPolicy: FPWCSApi2IceTransportPolicy?

  /// Empty options.
  public init() {}
}
