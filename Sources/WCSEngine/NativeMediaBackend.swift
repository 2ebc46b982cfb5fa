import Synchronization
import WCSDevices
import WCSEventLoop
import WCSMediaSeam
import WCSPeerConnection

/// The real media engine: WebRTC connections on WCSMedia's own stack (ICE, DTLS-SRTP, RTP/RTCP,
/// VP8, Opus), always-present virtual devices (a test-pattern camera and a tone microphone),
/// file sources (`file:<path>`), local preview, and a process-wide playout sink for received
/// audio. `NativeMediaBackend.shared` is WCSApi2's default engine.
///
/// Threading: callable from any thread; state sits behind a mutex, connections run on the
/// configuration's event loop and their own codec queues.
public final class NativeMediaBackend: MediaBackend {
  /// Settings of the engine.
  public struct Configuration: Sendable {
    /// The loop every connection's transport runs on.
    public var loop: EventLoop
    /// PeerConnection settings (STUN/TURN servers, addresses, DTLS, an emulated network:
    /// `PeerConnectionConfiguration.networkEmulation`).
    public var peerConnection: PeerConnectionConfiguration
    /// Where received audio goes (`nil`: nowhere). A play connection can also play on a sound
    /// output: `MediaConnectionRequest.Audio.output`, `setAudioOutput(_:)`.
    public var playoutSink: (any PlayoutAudioSink)?
    /// Real cameras and microphones listed and opened beside the virtual ones (`nil`: only
    /// virtual devices and file sources).
    public var systemDevices: NativeSystemDevices?
    /// Whether a play connection with audio and video keeps them in sync from the sender's RTCP
    /// SRs by delaying the earlier one (`PlayoutSynchronizer`; default true).
    public var synchronizesPlayout: Bool
    /// What the virtual microphone plays (default a 440 Hz tone; a chirp gives timing).
    public var virtualMicrophoneSignal: VirtualMicrophone.Signal
    /// Whether a played track's video may be decoded (and handed to its renderer) on `loop`
    /// instead of its own queue, as decided once per track when it is negotiated
    /// (`DecodePlacement`: the asked size's estimated decode time at most
    /// `ReceiveTuning.inlineDecodeCostLimit`, the loop's tracks within
    /// `ReceiveTuning.inlineDecodeShare` of its time). It spares a thread hand-off and a wake-up
    /// per picture. Default true; false always decodes on the track's queue.
    public var decodesVideoOnLoop = true

    /// Defaults: the shared loop; every interface plus loopback (so a `wcs-local-server` on
    /// 127.0.0.1 is reachable); no playout sink; the machine's real devices.
    public init(
      loop: EventLoop = .shared,
      peerConnection: PeerConnectionConfiguration = PeerConnectionConfiguration(
        allowLoopback: true),
      playoutSink: (any PlayoutAudioSink)? = nil,
      systemDevices: NativeSystemDevices? = NativeSystemDevices(),
      synchronizesPlayout: Bool = true,
      virtualMicrophoneSignal: VirtualMicrophone.Signal = .tone(frequency: 440)
    ) {
      self.synchronizesPlayout = synchronizesPlayout
      self.virtualMicrophoneSignal = virtualMicrophoneSignal
      self.loop = loop
      self.peerConnection = peerConnection
      self.playoutSink = playoutSink
      self.systemDevices = systemDevices
    }
  }

  private struct State {
    var fileSources: [String] = []
    var previews: [LocalPreview] = []
    var playoutMuted = false
    var playoutSink: (any PlayoutAudioSink)?
    var externalAudio = false
    var externalSources: [ObjectIdentifier: ExternalAudioSource] = [:]
  }

  /// The process-wide engine with the default configuration.
  public static let shared = NativeMediaBackend()

  /// The configuration given at creation.
  public let configuration: Configuration
  private let state: Mutex<State>

  /// Creates an engine.
  public init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
    state = Mutex(State(playoutSink: configuration.playoutSink))
  }

  // MARK: - Devices

  /// The virtual camera and microphone, then each file source added with `addFileSource` (a
  /// camera and a microphone each, id `file:<path>`), then the real V4L2 cameras
  /// (`v4l2:/dev/videoN`) and microphones (`pulse:<source>`, `alsa:<pcm>`) of
  /// `configuration.systemDevices`. Listing opens each video node briefly and runs `pactl`.
  public func devices() -> [CaptureDevice] {
    let files = state.withLock { $0.fileSources }
    return [NativeMediaDevices.virtualCamera, NativeMediaDevices.virtualMicrophone]
      + files.flatMap { NativeMediaDevices.fileDevices(path: $0) }
      + (configuration.systemDevices?.devices() ?? [])
  }

  /// Lists the media file at `path` as a camera and a microphone (id `file:<path>`); publishing
  /// with that device id sends the file, looped. The file is opened when publishing starts.
  public func addFileSource(path: String) {
    state.withLock { if !$0.fileSources.contains(path) { $0.fileSources.append(path) } }
  }

  /// Removes a file source from `devices()`.
  public func removeFileSource(path: String) {
    state.withLock { $0.fileSources.removeAll { $0 == path } }
  }

  /// The virtual camera's sizes (any size works; these are the usual ones), largest last; for
  /// a V4L2 camera (`v4l2:<node>`) the distinct sizes of its convertible formats, smallest
  /// first (empty when it cannot be opened).
  public func supportedVideoFormats(deviceID: String?) -> [VideoCaptureFormat] {
    if let deviceID, let path = NativeMediaDevices.v4l2Path(fromID: deviceID) {
      guard let io = configuration.systemDevices?.videoIO,
        let modes = try? V4L2CameraEnumerator(io: io).modes(path: path)
      else { return [] }
      var seen: Set<V4L2Size> = []
      return modes.map(\.size).filter { seen.insert($0).inserted }
        .sorted { ($0.width, $0.height) < ($1.width, $1.height) }
        .map { VideoCaptureFormat(width: $0.width, height: $0.height) }
    }
    guard deviceID == nil || deviceID == NativeMediaDevices.virtualCameraID else { return [] }
    return [
      VideoCaptureFormat(width: 320, height: 240), VideoCaptureFormat(width: 640, height: 360),
      VideoCaptureFormat(width: 640, height: 480), VideoCaptureFormat(width: 1280, height: 720),
    ]
  }

  // MARK: - Connections

  /// A `NativeMediaConnection` for `request`; nothing is opened until `createOffer`.
  public func makeConnection(
    _ request: MediaConnectionRequest,
    onStateChange: @escaping @Sendable (MediaConnectionState) -> Void
  ) throws(MediaBackendError) -> any MediaConnection {
    guard request.audio != nil || request.video != nil else {
      throw .deviceUnavailable("the request has neither audio nor video")
    }
    return NativeMediaConnection(
      request: request, configuration: configuration, backend: self,
      onStateChange: onStateChange)
  }

  // MARK: - Local preview

  /// Starts rendering the requested camera into `display` without publishing. Throws
  /// `.deviceUnavailable` for an unknown camera.
  public func openLocalMedia(_ request: MediaConnectionRequest, display: (any VideoRenderer)?)
    throws(MediaBackendError)
  {
    let preview = try LocalPreview(request: request, display: display)
    state.withLock { $0.previews.append(preview) }
    preview.start()
  }

  /// Stops the previews rendering into `display` (all of them for `nil`).
  public func releaseLocalMedia(display: (any VideoRenderer)?) -> Bool {
    let released = state.withLock { state -> [LocalPreview] in
      let matches = state.previews.filter { preview in
        display.map { preview.display === $0 } ?? true
      }
      state.previews.removeAll { preview in matches.contains { $0 === preview } }
      return matches
    }
    for preview in released { preview.stop() }
    return !released.isEmpty
  }

  // MARK: - Audio

  /// Silences (or restores) every played stream's audio.
  public func setPlayoutMuted(_ muted: Bool) {
    state.withLock { $0.playoutMuted = muted }
  }

  /// Replaces the process-wide playout sink (`nil`: received audio is decoded and dropped).
  public func setPlayoutSink(_ sink: (any PlayoutAudioSink)?) {
    state.withLock { $0.playoutSink = sink }
  }

  /// With `true`, connections published afterwards take their audio from
  /// `deliverExternalAudio(_:)` instead of a microphone.
  public func useExternalAudioSource(_ enabled: Bool) {
    state.withLock { $0.externalAudio = enabled }
  }

  /// Feeds 48 kHz PCM (mono or stereo, any block length) to every connection publishing
  /// external audio; other sample rates are dropped.
  public func deliverExternalAudio(_ frame: AudioFrame) {
    let sources = state.withLock { Array($0.externalSources.values) }
    for source in sources { source.deliver(frame) }
  }

  var isPlayoutMuted: Bool { state.withLock { $0.playoutMuted } }

  var usesExternalAudio: Bool { state.withLock { $0.externalAudio } }

  func currentPlayoutSink() -> (any PlayoutAudioSink)? {
    state.withLock { $0.playoutMuted ? nil : $0.playoutSink }
  }

  func register(externalAudio source: ExternalAudioSource) {
    state.withLock { $0.externalSources[ObjectIdentifier(source)] = source }
  }

  func unregister(externalAudio source: ExternalAudioSource) {
    state.withLock { $0.externalSources[ObjectIdentifier(source)] = nil }
  }
}
