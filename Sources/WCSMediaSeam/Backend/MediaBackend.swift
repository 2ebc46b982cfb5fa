/// Why the media engine could not do something. Every case carries a reason for the app.
public enum MediaBackendError: Error, Sendable, Equatable, CustomStringConvertible {
  /// No media engine is installed or it cannot run here.
  case unavailable(String)
  /// A capture device could not be opened (`reason` from the OS or the engine).
  case deviceUnavailable(String)
  /// The offer could not be created.
  case offerFailed(String)
  /// The server SDP could not be applied (unparsable, no common codec, bad fingerprint...).
  case answerRejected(String)
  /// The connection is closed; nothing more can be done with it.
  case closed
  /// A sound output device could not be opened or cannot be used for this connection
  /// (`reason`: the sound system's message, e.g. an `AudioDeviceError`, or why the connection
  /// has no played audio).
  case audioOutputUnavailable(String)

  /// One line saying what failed and why.
  public var description: String {
    switch self {
    case .unavailable(let reason): return "media engine unavailable: \(reason)"
    case .deviceUnavailable(let reason): return "capture device unavailable: \(reason)"
    case .offerFailed(let reason): return "could not create the SDP offer: \(reason)"
    case .answerRejected(let reason): return "server SDP rejected: \(reason)"
    case .closed: return "media connection is closed"
    case .audioOutputUnavailable(let reason): return "audio output unavailable: \(reason)"
    }
  }
}

/// Why a media connection went `.failed`: the transport (ICE, consent, DTLS) or a local
/// capture device. WCSApi2 lets the server decide the stream's status for transport failures
/// (the server sees them too) and fails a publishing stream locally when its capture device was
/// lost.
public enum MediaConnectionFailure: Sendable, Equatable, CustomStringConvertible {
  /// ICE connectivity checks failed on every candidate pair before media flowed (RFC 8445 §7.2.5.3).
  case ice
  /// Consent freshness checks stopped getting answers after the connection was up (RFC 7675 §5.1).
  case consentExpired
  /// Every candidate pair failed its checks before media flowed (RFC 8445 §7.2.5.3) and the
  /// engine can say what it tried: `tried` lists the local and remote candidates, the servers
  /// it could not use and the likely cause ("UDP blocked? configure TURN over TCP").
  case noCandidatePair(tried: String)
  /// The DTLS handshake failed or timed out, or the peer's certificate did not match the SDP
  /// fingerprint (RFC 8122 §5); `reason` is the DTLS layer's message.
  case dtls(String)
  /// Another transport failure (SRTP keys refused, incompatible `a=setup`, sockets); `reason`.
  case transport(String)
  /// A capture device stopped delivering while publishing: `kind` says camera or microphone,
  /// `reason` is the device layer's message (e.g. "camera /dev/video0 was lost: noDevice").
  case captureDeviceLost(CaptureDevice.Kind, String)
  /// The host's addresses changed under the connection (rtnetlink): an address it used went
  /// away, or a usable one appeared while it was disconnected; `reason` names the address.
  /// The SDK restarts ICE on it (RFC 8445 §9).
  case networkChanged(String)

  /// One line for logs.
  public var description: String {
    switch self {
    case .ice: return "ICE failed"
    case .consentExpired: return "ICE consent expired"
    case .noCandidatePair(let tried): return "no ICE candidate pair succeeded: \(tried)"
    case .dtls(let reason): return "DTLS failed: \(reason)"
    case .transport(let reason): return "transport failed: \(reason)"
    case .captureDeviceLost(let kind, let reason):
      return "\(kind == .video ? "camera" : "microphone") lost: \(reason)"
    case .networkChanged(let reason): return "network changed: \(reason)"
    }
  }
}

/// State of one WebRTC connection (ICE + DTLS), as `RTCPeerConnectionState` names it; `.failed`
/// carries the cause.
public enum MediaConnectionState: Sendable, Equatable, CustomStringConvertible {
  /// Created, no answer applied yet.
  case new
  /// ICE checks or the DTLS handshake are running.
  case connecting
  /// Media can flow.
  case connected
  /// ICE or DTLS failed, consent expired, or a capture device was lost; final.
  case failed(MediaConnectionFailure)
  /// Closed by `close()`; final.
  case closed

  /// The failure cause for `.failed`, `nil` otherwise.
  public var failure: MediaConnectionFailure? {
    if case .failed(let failure) = self { return failure }
    return nil
  }

  /// `true` for `.failed` (any cause).
  public var isFailed: Bool { failure != nil }

  /// `new`, `connecting`, `connected`, `failed (<cause>)` or `closed`.
  public var description: String {
    switch self {
    case .new: return "new"
    case .connecting: return "connecting"
    case .connected: return "connected"
    case .failed(let failure): return "failed (\(failure))"
    case .closed: return "closed"
    }
  }
}

/// Transport counters of one connection, summed over its RTP streams.
public struct MediaConnectionStats: Sendable, Equatable {
  /// RTP payload + header bytes sent (RFC 3550 octet count semantics, before SRTP).
  public var bytesSent: UInt64
  /// Bytes received.
  public var bytesReceived: UInt64
  /// RTP packets sent.
  public var packetsSent: UInt64
  /// RTP packets received.
  public var packetsReceived: UInt64
  /// Packets reported lost (RTCP receiver reports, RFC 3550 §6.4.1 cumulative lost).
  public var packetsLost: Int64
  /// Current video send (publish) or receive (play) bitrate in bits per second.
  public var currentVideoBitrate: Int
  /// Congestion controller's estimate of available send bandwidth in bits per second (0 = unknown).
  public var availableOutgoingBitrate: Int

  /// Creates a stats value; all counters default to 0.
  public init(
    bytesSent: UInt64 = 0, bytesReceived: UInt64 = 0, packetsSent: UInt64 = 0,
    packetsReceived: UInt64 = 0, packetsLost: Int64 = 0, currentVideoBitrate: Int = 0,
    availableOutgoingBitrate: Int = 0
  ) {
    self.bytesSent = bytesSent
    self.bytesReceived = bytesReceived
    self.packetsSent = packetsSent
    self.packetsReceived = packetsReceived
    self.packetsLost = packetsLost
    self.currentVideoBitrate = currentVideoBitrate
    self.availableOutgoingBitrate = availableOutgoingBitrate
  }
}

/// One publish or play WebRTC connection. Completions run on an engine thread; the caller hops
/// to its own queue. Methods may be called from any thread.
public protocol MediaConnection: AnyObject, Sendable {
  /// Creates the SDP offer (send-only for publish, receive-only for play), applies it locally
  /// and returns it (CRLF line ends). Completes with `.offerFailed` or `.deviceUnavailable`.
  func createOffer(completion: @escaping @Sendable (Result<String, MediaBackendError>) -> Void)
  /// Applies the server's SDP answer; ICE and DTLS start. Completes with `.answerRejected` if it
  /// does not fit the offer.
  func setRemoteAnswer(
    _ sdp: String, completion: @escaping @Sendable (Result<Void, MediaBackendError>) -> Void)
  /// Enables or disables the local audio/video track (muted tracks send silence/black or nothing).
  func setTrackEnabled(_ kind: CaptureDevice.Kind, enabled: Bool)
  /// Moves a published video track to the next camera (or calls the custom capturer's
  /// `startCapture` with it). Throws `.deviceUnavailable` when there is no other camera.
  func switchCamera() throws(MediaBackendError)
  /// Plays this connection's received audio on a sound output (`.defaultDevice`, a named
  /// device) or stops playing it there (`.none`, which also closes the device). Opens the device
  /// before returning (may block briefly while the sound server answers); decoded audio still
  /// goes to the backend's playout sink as well. A later write failure stops the output without
  /// failing the connection. Throws `.audioOutputUnavailable` when the device cannot be opened
  /// or the connection plays no audio (publish, or no audio part), `.closed` after `close()`.
  func setAudioOutput(_ output: MediaConnectionRequest.AudioOutput) throws(MediaBackendError)
  /// Reads the current counters.
  func stats(completion: @escaping @Sendable (MediaConnectionStats) -> Void)
  /// Stops capture/rendering of this connection and releases its sockets. Idempotent.
  func close()
}

/// What WCSApi2 needs from the media engine (the "media backend"): devices, local preview and
/// WebRTC connections. WCSMedia provides the real one; tests use a fake. Methods may be called from
/// any thread.
public protocol MediaBackend: AnyObject, Sendable {
  /// Capture devices available now (cameras and microphones, virtual ones included).
  func devices() -> [CaptureDevice]
  /// Capture sizes a camera supports (`nil` = the default camera), largest last; empty when
  /// unknown.
  func supportedVideoFormats(deviceID: String?) -> [VideoCaptureFormat]
  /// Creates a connection for `request`; it must return quickly (heavy work such as opening
  /// devices belongs in `createOffer`), since the session calls it on its protocol queue. `onStateChange` reports its state, on an engine thread.
  /// Throws `.unavailable`/`.deviceUnavailable` when it cannot be created at all.
  func makeConnection(
    _ request: MediaConnectionRequest,
    onStateChange: @escaping @Sendable (MediaConnectionState) -> Void
  ) throws(MediaBackendError) -> any MediaConnection
  /// Opens local capture for `request` (audio/video parts) and renders the video into `display`
  /// without publishing (iOS `getMediaAccess`). Throws `.deviceUnavailable` on failure.
  func openLocalMedia(_ request: MediaConnectionRequest, display: (any VideoRenderer)?)
    throws(MediaBackendError)
  /// Stops local capture bound to `display` (or all local-only capture for `nil`); returns
  /// whether something was released.
  func releaseLocalMedia(display: (any VideoRenderer)?) -> Bool
  /// Silences (or restores) all playback audio of the process.
  func setPlayoutMuted(_ muted: Bool)
  /// With `true`, published audio comes from `deliverExternalAudio(_:)` instead of a microphone.
  func useExternalAudioSource(_ enabled: Bool)
  /// Feeds one block of PCM to the external audio source (dropped when it is not in use).
  func deliverExternalAudio(_ frame: AudioFrame)
}
