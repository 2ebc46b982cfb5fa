import BenchSupport
import FPWCSApi2Swift
import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia

/// The SDK's engine with every connection it makes kept, so the run can read their detailed
/// counters (NACKs, retransmissions, PLIs) that the public stats do not carry.
final class RecordingBackend: MediaBackend {
  let inner: NativeMediaBackend
  private let made = Mutex<[(MediaConnectionRequest.Direction, NativeMediaConnection)]>([])

  init(_ inner: NativeMediaBackend) { self.inner = inner }

  func connection(_ direction: MediaConnectionRequest.Direction) -> NativeMediaConnection? {
    made.withLock { $0.last { $0.0 == direction }?.1 }
  }

  func devices() -> [CaptureDevice] { inner.devices() }
  func supportedVideoFormats(deviceID: String?) -> [VideoCaptureFormat] {
    inner.supportedVideoFormats(deviceID: deviceID)
  }
  func makeConnection(
    _ request: MediaConnectionRequest,
    onStateChange: @escaping @Sendable (MediaConnectionState) -> Void
  ) throws(MediaBackendError) -> any MediaConnection {
    let connection = try inner.makeConnection(request, onStateChange: onStateChange)
    if let native = connection as? NativeMediaConnection {
      made.withLock { $0.append((request.direction, native)) }
    }
    return connection
  }
  func openLocalMedia(_ request: MediaConnectionRequest, display: (any VideoRenderer)?)
    throws(MediaBackendError)
  { try inner.openLocalMedia(request, display: display) }
  func releaseLocalMedia(display: (any VideoRenderer)?) -> Bool {
    inner.releaseLocalMedia(display: display)
  }
  func setPlayoutMuted(_ muted: Bool) { inner.setPlayoutMuted(muted) }
  func useExternalAudioSource(_ enabled: Bool) { inner.useExternalAudioSource(enabled) }
  func deliverExternalAudio(_ frame: AudioFrame) { inner.deliverExternalAudio(frame) }
}

extension NativeMediaConnection {
  /// The detailed counters, waited for (nil when the connection does not answer in 5 s).
  func detailed() -> DetailedStatistics? {
    wait(timeout: 5) { detailedStatistics(completion: $0) }
  }
}

extension LegResult {
  /// Copies the recovery counters of `receiver` (NACKs, PLIs it sent) and `sender`
  /// (retransmissions, key frames) where the run can see them.
  mutating func addCounters(
    receiver: NativeMediaConnection.DetailedStatistics?,
    sender: NativeMediaConnection.DetailedStatistics?
  ) {
    if let receiver {
      nacksSent = receiver.nacksSent
      plisSent = receiver.plisSent
      packetsLost = receiver.summary.packetsLost
      packetsRecovered = receiver.packetsRecovered
      rtxReceived = receiver.rtxPacketsReceived
    }
    if let sender {
      retransmissions = sender.retransmissions
      keyFrameRequests = sender.keyFrameRequests
      keyFramesEncoded = sender.keyFramesEncoded
      sendFailures = sender.rtpSendFailures
    }
  }
}

/// One run through the in-process `WCSLocalServer`: the SDK publishes the virtual camera
/// (640x360, 30 fps, `settings.codec`) and plays the stream back in the same session, as
/// `wcs-demo` does.
func runThroughServer(settings: RunSettings) -> [LegResult] {
  var result = LegResult(leg: "server")
  var configuration = WCSLocalServer.Configuration()
  configuration.wsPort = 0
  configuration.httpPort = 0
  configuration.logSink = { _ in }
  let server: WCSLocalServer
  do {
    server = try WCSLocalServer.start(configuration)
  } catch {
    result.failure = "local server: \(error)"
    return [result]
  }
  defer { server.stop() }

  let loop = EventLoop(label: "LossBench")
  let backend = RecordingBackend(
    NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(
        loop: loop, peerConnection: settings.peerConnection)))
  let events = Events()
  let sentLog = FrameLog()
  let playedLog = FrameLog()

  let options = FPWCSApi2SessionOptions()
  options.urlServer = server.wsURL
  options.appKey = "defaultApp"
  options.mediaBackend = backend
  guard let session = try? FPWCSApi2.createSession(options) else {
    result.failure = "createSession failed"
    return [result]
  }
  session.on(.fpwcsSessionStatusEstablished) { _ in events.mark("established") }
  session.on(.fpwcsSessionStatusFailed) { _ in events.mark("failed") }
  session.on(.fpwcsSessionStatusDisconnected) { _ in events.mark("disconnected") }
  session.connect()
  defer {
    session.disconnect()
    events.wait(for: ["disconnected", "failed"], timeout: 3)
  }
  guard events.wait(for: ["established", "failed"], timeout: 15) == "established" else {
    result.failure = "session did not reach ESTABLISHED"
    return [result]
  }

  let name = "loss-\(UInt32.random(in: 0...UInt32.max))"
  let constraints = FPWCSApi2MediaConstraints()
  let video = FPWCSApi2VideoConstraints()
  video.minWidth = settings.width
  video.maxWidth = settings.width
  video.minHeight = settings.height
  video.maxHeight = settings.height
  video.minFrameRate = settings.fps
  video.maxFrameRate = settings.fps
  constraints.audio = FPWCSApi2AudioConstraints()
  constraints.video = video
  let publishOptions = FPWCSApi2StreamOptions()
  publishOptions.name = name
  publishOptions.display = sentLog.renderer
  publishOptions.constraints = constraints
  if settings.codec == "H264" { publishOptions.preferredVideoCodec = "H264" }
  guard let publishStream = try? session.createStream(publishOptions) else {
    result.failure = "createStream (publish) failed"
    return [result]
  }
  publishStream.on(.fpwcsStreamStatusPublishing) { _ in events.mark("publishing") }
  publishStream.on(.fpwcsStreamStatusFailed) { _ in events.mark("publish failed") }
  events.mark("publish")
  guard (try? publishStream.publish()) != nil else {
    result.failure = "publish() threw"
    return [result]
  }
  let ends = ["publish failed", "play failed", "failed", "disconnected"]
  guard let published = events.wait(for: ["publishing"] + ends, timeout: 20),
    published == "publishing"
  else {
    result.failure = "no PUBLISHING"
    return [result]
  }
  result.toPublishing = events.seconds(from: "publish", to: "publishing")

  let playOptions = FPWCSApi2StreamOptions()
  playOptions.name = name
  playOptions.display = playedLog.renderer
  guard let playStream = try? session.createStream(playOptions) else {
    result.failure = "createStream (play) failed"
    return [result]
  }
  playStream.on(.fpwcsStreamStatusPlaying) { _ in events.mark("playing") }
  playStream.on(.fpwcsStreamStatusFailed) { _ in events.mark("play failed") }
  events.mark("play")
  guard (try? playStream.play()) != nil else {
    result.failure = "play() threw"
    return [result]
  }
  if events.wait(for: ["playing"] + ends, timeout: 20) == "playing" {
    result.toPlaying = events.seconds(from: "play", to: "playing")
  } else {
    result.failure = "no PLAYING"
  }

  // Media for `seconds`, then the frames sent by then may still arrive (retransmissions).
  let end = ContinuousClock.now + .milliseconds(Int(settings.seconds * 1000))
  while ContinuousClock.now < end, result.failure == nil {
    if let ended = events.wait(for: ends, timeout: 0.1) { result.failure = "\(ended)" }
  }
  let endTime = ContinuousClock.now
  let sentNumbers = sentLog.numbers
  Thread.sleep(forTimeInterval: 0.6)
  result.count(sent: sentNumbers, received: playedLog.numbers)
  result.longestGap = playedLog.longestGap(until: endTime)
  if let playing = events.time("playing"), let first = playedLog.firstArrival {
    result.firstFrame = (first - playing).seconds
  }
  let played = backend.connection(.play)?.detailed()
  result.addCounters(receiver: played, sender: backend.connection(.publish)?.detailed())
  result.videoCodec = played?.videoCodec
  try? playStream.stop()
  try? publishStream.stop()
  if result.failure == nil, result.decoded == 0 { result.failure = "no picture decoded" }
  return [result]
}
