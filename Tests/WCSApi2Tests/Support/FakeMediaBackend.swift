import Foundation
import Synchronization
import WCSApi2

/// A media engine double: records what the session asks and answers with canned SDP. With
/// `manualOffers` the offer completions wait for `completeOffers()`.
final class FakeMediaBackend: MediaBackend {
  struct State {
    var requests: [MediaConnectionRequest] = []
    var connections: [FakeMediaConnection] = []
    var localMediaOpened = 0
    var released = 0
    var playoutMuted = false
    var externalAudio = false
    var deliveredAudio: [AudioFrame] = []
  }

  let state = Mutex(State())
  let manualOffers: Bool
  let failConnections: MediaBackendError?

  init(manualOffers: Bool = false, failConnections: MediaBackendError? = nil) {
    self.manualOffers = manualOffers
    self.failConnections = failConnections
  }

  var connections: [FakeMediaConnection] { state.withLock { $0.connections } }
  var requests: [MediaConnectionRequest] { state.withLock { $0.requests } }

  func devices() -> [CaptureDevice] {
    [
      CaptureDevice(kind: .audio, id: "virtual:tone", label: "Tone microphone"),
      CaptureDevice(kind: .video, id: "virtual:pattern", label: "Test pattern camera"),
      CaptureDevice(kind: .video, id: "/dev/video0", label: "USB camera"),
    ]
  }

  func supportedVideoFormats(deviceID: String?) -> [VideoCaptureFormat] {
    [VideoCaptureFormat(width: 640, height: 480), VideoCaptureFormat(width: 1280, height: 720)]
  }

  func makeConnection(
    _ request: MediaConnectionRequest,
    onStateChange: @escaping @Sendable (MediaConnectionState) -> Void
  ) throws(MediaBackendError) -> any MediaConnection {
    if let failConnections { throw failConnections }
    let connection = FakeMediaConnection(
      request: request, manualOffer: manualOffers, onStateChange: onStateChange)
    state.withLock {
      $0.requests.append(request)
      $0.connections.append(connection)
    }
    return connection
  }

  func openLocalMedia(_ request: MediaConnectionRequest, display: (any VideoRenderer)?)
    throws(MediaBackendError)
  {
    state.withLock { $0.localMediaOpened += 1 }
  }

  func releaseLocalMedia(display: (any VideoRenderer)?) -> Bool {
    state.withLock {
      $0.released += 1
      return $0.localMediaOpened > 0
    }
  }

  func setPlayoutMuted(_ muted: Bool) { state.withLock { $0.playoutMuted = muted } }
  func useExternalAudioSource(_ enabled: Bool) { state.withLock { $0.externalAudio = enabled } }
  func deliverExternalAudio(_ frame: AudioFrame) {
    state.withLock { $0.deliveredAudio.append(frame) }
  }

  func completeOffers() {
    for connection in connections { connection.completeOffer() }
  }
}

/// One fake connection; the offer is `v=0 ... a=sendonly`/`a=recvonly` with two codecs.
final class FakeMediaConnection: MediaConnection {
  struct State {
    var answers: [String] = []
    var trackEnabled: [String: Bool] = [:]
    var closed = false
    var switchedCamera = 0
    /// Every `setAudioOutput` call, in order.
    var audioOutputs: [MediaConnectionRequest.AudioOutput] = []
    /// Thrown by `setAudioOutput` when set.
    var audioOutputError: MediaBackendError?
    /// Holds `setAudioOutput(gate.output)` until the test releases it (a slow device open).
    var audioOutputGate: AudioOutputGate?
    var pendingOffer: (@Sendable (Result<String, MediaBackendError>) -> Void)?
    /// Order of calls: "offer", "answer", "close".
    var log: [String] = []
  }

  let request: MediaConnectionRequest
  let manualOffer: Bool
  let onStateChange: @Sendable (MediaConnectionState) -> Void
  let state = Mutex(State())

  init(
    request: MediaConnectionRequest, manualOffer: Bool,
    onStateChange: @escaping @Sendable (MediaConnectionState) -> Void
  ) {
    self.request = request
    self.manualOffer = manualOffer
    self.onStateChange = onStateChange
  }

  var offerSDP: String {
    let direction = request.direction == .publish ? "sendonly" : "recvonly"
    return [
      "v=0", "o=- 7032618850551196210 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1",
      "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:0", "a=\(direction)",
      "a=rtpmap:111 opus/48000/2", "a=fmtp:111 minptime=10;useinbandfec=1",
      "m=video 9 UDP/TLS/RTP/SAVPF 96 102", "c=IN IP4 0.0.0.0", "a=mid:1", "a=\(direction)",
      "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack pli", "a=rtpmap:102 H264/90000",
      "a=fmtp:102 packetization-mode=1;profile-level-id=42e01f", "a=rtcp-fb:102 nack", "",
    ].joined(separator: "\r\n")
  }

  var answers: [String] { state.withLock { $0.answers } }
  var isClosed: Bool { state.withLock { $0.closed } }
  var log: [String] { state.withLock { $0.log } }

  func createOffer(completion: @escaping @Sendable (Result<String, MediaBackendError>) -> Void) {
    if manualOffer {
      state.withLock { $0.pendingOffer = completion }
    } else {
      state.withLock { $0.log.append("offer") }
      completion(.success(offerSDP))
    }
  }

  func completeOffer() {
    let pending: (@Sendable (Result<String, MediaBackendError>) -> Void)? = state.withLock {
      let p = $0.pendingOffer
      $0.pendingOffer = nil
      if p != nil { $0.log.append("offer") }
      return p
    }
    pending?(.success(offerSDP))
  }

  func setRemoteAnswer(
    _ sdp: String, completion: @escaping @Sendable (Result<Void, MediaBackendError>) -> Void
  ) {
    state.withLock {
      $0.answers.append(sdp)
      $0.log.append("answer")
    }
    if sdp.contains("m=") {
      onStateChange(.connecting)
      onStateChange(.connected)
      completion(.success(()))
    } else {
      completion(.failure(.answerRejected("no media sections")))
    }
  }

  func setTrackEnabled(_ kind: CaptureDevice.Kind, enabled: Bool) {
    state.withLock { $0.trackEnabled[kind.rawValue] = enabled }
  }

  func switchCamera() throws(MediaBackendError) {
    state.withLock { $0.switchedCamera += 1 }
  }

  func setAudioOutput(_ output: MediaConnectionRequest.AudioOutput) throws(MediaBackendError) {
    if let gate = state.withLock({ $0.audioOutputGate }), gate.output == output {
      gate.entered.signal()
      gate.release.wait()
    }
    let error = state.withLock { state -> MediaBackendError? in
      if let error = state.audioOutputError { return error }
      state.audioOutputs.append(output)
      return nil
    }
    if let error { throw error }
  }

  var audioOutputs: [MediaConnectionRequest.AudioOutput] { state.withLock { $0.audioOutputs } }

  /// Reports `.failed(failure)` as the engine would (on the calling thread).
  func fail(_ failure: MediaConnectionFailure) {
    onStateChange(.failed(failure))
  }

  func stats(completion: @escaping @Sendable (MediaConnectionStats) -> Void) {
    completion(
      MediaConnectionStats(
        bytesSent: 1200, packetsSent: 10, currentVideoBitrate: 812_344,
        availableOutgoingBitrate: 2_000_000))
  }

  func close() {
    state.withLock {
      $0.closed = true
      $0.log.append("close")
    }
    onStateChange(.closed)
  }
}

/// A `setAudioOutput` call the test holds in the middle, as a device that takes long to open.
final class AudioOutputGate: Sendable {
  let output: MediaConnectionRequest.AudioOutput
  /// Signalled when the held call has started.
  let entered = DispatchSemaphore(value: 0)
  /// Signalled by the test to let the held call finish.
  let release = DispatchSemaphore(value: 0)

  init(_ output: MediaConnectionRequest.AudioOutput) { self.output = output }
}
