/// What one WebRTC connection of a WCS stream must do, in media terms: built by WCSApi2 from the
/// app's `FPWCSApi2MediaConstraints` and stream options; read by the media engine.
public struct MediaConnectionRequest: Sendable {
  /// Publish sends local media (send-only offer); play receives (receive-only offer).
  public enum Direction: String, Sendable {
    /// Send-only: capture, encode, send.
    case publish
    /// Receive-only: receive, decode, render.
    case play
  }

  /// ICE candidate transport preference (wcs-protocol.md §3.1 `transport`).
  public enum Transport: String, Sendable {
    /// UDP candidates (default).
    case udp
    /// TCP candidates only.
    case tcp
  }

  /// Where a played stream's decoded audio is heard, besides the backend's playout sink.
  public enum AudioOutput: Sendable, Equatable {
    /// Nowhere (the default): audio is decoded for the playout sink only.
    case none
    /// The sound system's default output: PulseAudio's default sink (PipeWire's pulse server
    /// included), else ALSA's `default` PCM.
    case defaultDevice
    /// A named output: a PulseAudio sink name (`pactl list short sinks`) or an ALSA PCM name
    /// (`hw:0,0`), as `AudioDeviceEnumerator` lists speakers.
    case device(String)
  }

  /// Audio part; `nil` = no audio m-line.
  public struct Audio: Sendable, Equatable {
    /// Capture device id (`nil` = default microphone); publish only.
    public var deviceID: String?
    /// Opus in-band FEC (`useinbandfec=1`).
    public var useFEC: Bool
    /// Stereo Opus (`stereo=1;sprop-stereo=1`).
    public var useStereo: Bool
    /// Opus target bitrate in bits per second, 0 = encoder default.
    public var bitrate: Int
    /// Play only: the sound output the received audio is played on, opened when the offer is
    /// created (a device that cannot be opened then leaves the audio unplayed there, see
    /// `NativeMediaConnection.audioOutputFailure`; the stream goes on). Change it later with
    /// `MediaConnection.setAudioOutput(_:)`.
    public var output: AudioOutput

    /// Creates an audio description (defaults: default device, no FEC, mono, default bitrate,
    /// no sound output).
    public init(
      deviceID: String? = nil, useFEC: Bool = false, useStereo: Bool = false, bitrate: Int = 0,
      output: AudioOutput = .none
    ) {
      self.deviceID = deviceID
      self.useFEC = useFEC
      self.useStereo = useStereo
      self.bitrate = bitrate
      self.output = output
    }
  }

  /// Video part; `nil` = no video m-line.
  public struct Video: Sendable {
    /// Camera id (`nil` = default camera); ignored when `capturer` is set.
    public var deviceID: String?
    /// Capture width bounds in pixels, 0 = unconstrained.
    public var minWidth: Int, maxWidth: Int
    /// Capture height bounds in pixels, 0 = unconstrained.
    public var minHeight: Int, maxHeight: Int
    /// Frame rate bounds in frames per second, 0 = unconstrained.
    public var minFrameRate: Int, maxFrameRate: Int
    /// Publish encoder bitrate bounds in kbit/s, 0 = no limit (wcs-protocol.md §4.4 item 3).
    public var minBitrate: Int, maxBitrate: Int
    /// App-supplied source replacing the camera. `nonisolated(unsafe)`: the capturer's own
    /// API (`setFrameHandler`, `deliver`) is thread-safe; the engine calls nothing else on it
    /// except the `FPWCSVideoCapturer` hooks, from one thread at a time.
    public nonisolated(unsafe) var capturer: RTCVideoCapturer?

    /// Creates a video description (everything unconstrained, default camera).
    public init(
      deviceID: String? = nil, minWidth: Int = 0, maxWidth: Int = 0, minHeight: Int = 0,
      maxHeight: Int = 0, minFrameRate: Int = 0, maxFrameRate: Int = 0, minBitrate: Int = 0,
      maxBitrate: Int = 0, capturer: RTCVideoCapturer? = nil
    ) {
      self.deviceID = deviceID
      self.minWidth = minWidth
      self.maxWidth = maxWidth
      self.minHeight = minHeight
      self.maxHeight = maxHeight
      self.minFrameRate = minFrameRate
      self.maxFrameRate = maxFrameRate
      self.minBitrate = minBitrate
      self.maxBitrate = maxBitrate
      self.capturer = capturer
    }
  }

  /// Publish or play.
  public var direction: Direction
  /// Audio to send or receive.
  public var audio: Audio?
  /// Video to send or receive.
  public var video: Video?
  /// Local preview (publish) or remote video output (play).
  public var renderer: (any VideoRenderer)?
  /// ICE transport preference.
  public var transport: Transport
  /// Codec names (case-insensitive, e.g. `"H264"`) the engine must not offer.
  public var excludedCodecs: [String]
  /// The video codec offered first (`"VP8"` or `"H264"`, case-insensitive): the one the
  /// answerer picks when it takes both (RFC 3264 §6.1). Nil: VP8 first, then H.264.
  public var preferredVideoCodec: String? = nil
  /// Linux addition: an H.264 profile above baseline to offer first among the H.264 formats
  /// (`4d001f` main or `640c1f` constrained high, packetization-mode 1, RFC 6184 §8.1) and,
  /// when publishing and the answer picks it, to encode with. Nil: the baseline formats only.
  /// A player offers it too, so a relay passes such a stream on to it (same profile and mode,
  /// RFC 6184 §8.2.2).
  public var h264Profile: H264OfferedProfile? = nil
  /// Publish only: receive as well — a call's media, every section `sendrecv` (RFC 3264 §6.1).
  /// The received audio is played as a played stream's is (`audio.output`, the playout sink);
  /// received video goes to `remoteRenderer`, `renderer` staying the local preview.
  public var receivesToo = false
  /// Where a two-way connection (`receivesToo`) draws the received video.
  public var remoteRenderer: (any VideoRenderer)?

  /// Whether the connection captures and sends local media.
  public var sends: Bool { direction == .publish }
  /// Whether the connection receives and decodes the peer's media.
  public var receives: Bool { direction == .play || receivesToo }
  /// The renderer of the received video: `renderer` when playing, `remoteRenderer` in a call.
  public var receivedVideoRenderer: (any VideoRenderer)? {
    direction == .play ? renderer : remoteRenderer
  }
  /// STUN/TURN servers for this connection; `nil` uses the engine's configured ones.
  public var iceServers: [MediaICEServer]? = nil
  /// Candidate policy for this connection; `nil` uses the engine's configured one.
  public var iceTransportPolicy: MediaICETransportPolicy? = nil

  /// Creates a request.
  public init(
    direction: Direction, audio: Audio?, video: Video?, renderer: (any VideoRenderer)? = nil,
    transport: Transport = .udp, excludedCodecs: [String] = []
  ) {
    self.direction = direction
    self.audio = audio
    self.video = video
    self.renderer = renderer
    self.transport = transport
    self.excludedCodecs = excludedCodecs
  }
}
