/// Settings of the signalling core. Defaults follow WCS (wcs-protocol.md §7.1, §6).
public struct WCSServerConfiguration: Sendable, Equatable {
  /// `ping` interval in ms (`keep_alive.server_interval`, default 5000).
  public var pingIntervalMillis: Int64 = 5000
  /// Unanswered pings after which the session is dropped (`keep_alive.probes`, default 10).
  public var maxUnansweredPings: Int = 10
  /// How long (ms) a connection may stay open without sending `connection` before it is
  /// closed; idle sockets would otherwise hold resources forever.
  public var handshakeTimeoutMillis: Int64 = 30_000
  /// The string sent in `getVersion` (§1.2 step 5). Starts with a WCS-like version so clients
  /// that parse it see a 5.2 server.
  public var serverVersion: String = "5.2.0-wcs-local-server-0.1"
  /// The server's own `ip:port`, used in `authToken` (`/<client>/<server>`, §1.4).
  public var serverAddress: String = "127.0.0.1:8080"
  /// Record file name template (`stream_record_policy_template`, §6). See `RecordNaming`.
  public var recordTemplate: String = RecordNaming.defaultTemplate
  /// Extension appended to record names of VP8 and audio-only streams: VP8 + Opus goes into
  /// WebM (§6).
  public var recordExtension: String = "webm"
  /// Extension appended to record names of H.264 streams, which are recorded to MP4 (H.264 +
  /// Opus in ISO BMFF), as WCS's `record_formats` default `h264-mp4,vp8-webm`.
  public var recordExtensionH264: String = "mp4"
  /// Live streams (publishers and players, pending or up) one session may hold; a further
  /// `publishStream`/`playStream` gets FAILED `WCSStreamInfo.tooManyStreamsInSession`. Each
  /// stream holds a UDP socket, so without a cap one WebSocket could exhaust the server's fds.
  public var maxStreamsPerSession: Int = 32
  /// Live streams over all sessions; beyond it FAILED `WCSStreamInfo.serverStreamLimitReached`.
  public var maxStreams: Int = 1000
  /// Bounds of the `roomApp` room application (wcs-rooms-and-calls.md §A.7).
  public var rooms = WCSRoomLimits()
  /// Largest `sendStreamEvent` `payload`, in bytes of its JSON encoding (default 16 KiB). The
  /// server copies the payload to every player of the stream, so one message would otherwise
  /// cost up to the WebSocket message limit (1 MiB) times the players; a larger one is refused
  /// with `fail` `Bad request: payload ...` and reaches no player.
  public var maxStreamEventPayloadBytes = 16_384

  /// Access control and record naming asked of the application (`WCSServerHooks`); none by
  /// default.
  public var hooks = WCSServerHooks()
  /// Bounds and timers of SIP calls (SIP/WCSServerCore+Calls.swift).
  public var calls = WCSCallLimits()
  /// Whether a SIP gateway serves `call` (set by `WCSLocalServer.start` when
  /// `Configuration.sipGateway` is given); off, calls get FAILED at once.
  public var sipGatewayEnabled = false

  /// Media over TCP only, as a WCS with `ice_tcp_transport=true`: the relay answers every
  /// publish and play with passive ICE-TCP host candidates (RFC 6544), one listener per host
  /// address and connection, and binds no UDP socket; clients must use transport TCP.
  /// `wcs-local-server --ice-tcp`. Off by default (UDP).
  public var iceTCPTransport = false

  /// Hosts (lower-case names or IP literals) whose `rtsp://`/`rtmp://` URLs a played name may
  /// make the server pull: loopback only by default, so a client cannot make the server open
  /// connections to whatever it can reach; `nil` allows any host, as a WCS does. A play of a
  /// URL on another host gets FAILED saying so. The same hosts bound a publisher's `rtmpUrl`
  /// (re-publishing, `RTMPPushURL`). `wcs-local-server --pull-hosts any|HOST,...`.
  public var pullSourceHosts: Set<String>? = ["127.0.0.1", "localhost", "::1"]

  /// All defaults.
  public init() {}
}
