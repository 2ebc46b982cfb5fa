// Loopback publish → ICE-lite relay → play through NativeMediaBackend on 127.0.0.1, virtual
// camera and microphone: time to the first rendered picture, delivered frame rate, PSNR of the
// rendered pictures against the source, bitrate and process CPU per second of media.
// Run: `swift run -c release NativeBackendBench [width height seconds]`.
import BenchSupport
import Foundation
import Synchronization
import WCSMedia

/// Answers both offers and relays the publisher's RTP to the player and RTCP both ways.
final class Relay: @unchecked Sendable {
  // @unchecked Sendable: the PeerConnections are used on `loop` only.
  let loop: EventLoop
  var publisherSide: PeerConnection?
  var playerSide: PeerConnection?

  init(loop: EventLoop) { self.loop = loop }

  func answer(_ offer: String, publisher: Bool) throws -> String {
    try loop.submit {
      let connection = PeerConnection(
        configuration: PeerConnectionConfiguration(
          iceLite: true, allowLoopback: true, hostAddresses: [.loopbackV4]), loop: loop)
      try connection.setRemoteDescription(offer: offer)
      if publisher {
        connection.onRTP = { [weak self] _, packet in try? self?.playerSide?.sendRTP(packet) }
        connection.onRTCP = { [weak self] packet in try? self?.playerSide?.sendRTCP(packet) }
        publisherSide = connection
      } else {
        connection.onRTCP = { [weak self] packet in try? self?.publisherSide?.sendRTCP(packet) }
        playerSide = connection
      }
      return try connection.createAnswer()
    }
  }
}

func cpuSeconds() -> Double { clockSeconds(CLOCK_PROCESS_CPUTIME_ID) }

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let width = arguments.count > 0 ? arguments[0] : 640
let height = arguments.count > 1 ? arguments[1] : 480
let seconds = arguments.count > 2 ? arguments[2] : 5

let loop = EventLoop(label: "NativeBackendBench")
let backend = NativeMediaBackend(
  configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
let camera = VirtualCamera(width: width, height: height, frameRate: 30)
struct Rendered: Sendable {
  var first: ContinuousClock.Instant?
  var count = 0
  var psnrSum = 0.0
  var psnrCount = 0
}
let rendered = Mutex(Rendered())
let renderer = VideoFrameCallbackRenderer { frame in
  let now = ContinuousClock.now
  var score: Double?
  rendered.withLock { state in
    state.first = state.first ?? now
    state.count += 1
    // Every 10th picture is compared: PSNR costs more than decoding.
    guard state.count % 10 == 0 else { return }
    score = -1
  }
  guard score != nil,
    let image = I420Image(
      width: frame.width, height: frame.height, y: [UInt8](frame.dataY), strideY: frame.strideY,
      u: [UInt8](frame.dataU), strideU: frame.strideU, v: [UInt8](frame.dataV),
      strideV: frame.strideV),
    let number = VirtualCamera.decodeFrameNumber(from: image),
    let psnr = image.psnr(to: camera.frame(Int(number)))
  else { return }
  rendered.withLock {
    $0.psnrSum += min(psnr, 99)
    $0.psnrCount += 1
  }
}

let publisher = try backend.makeConnection(
  MediaConnectionRequest(
    direction: .publish, audio: .init(),
    video: .init(maxWidth: width, maxHeight: height, maxFrameRate: 30))
) { _ in }
let player = try backend.makeConnection(
  MediaConnectionRequest(direction: .play, audio: .init(), video: .init(), renderer: renderer)
) { _ in }
let relay = Relay(loop: loop)
let cpuStart = cpuSeconds()
let start = ContinuousClock.now
let publishOffer = try wait { publisher.createOffer(completion: $0) }.get()
let publishAnswer = try relay.answer(publishOffer, publisher: true)
try wait { publisher.setRemoteAnswer(publishAnswer, completion: $0) }.get()
let playOffer = try wait { player.createOffer(completion: $0) }.get()
let playAnswer = try relay.answer(playOffer, publisher: false)
try wait { player.setRemoteAnswer(playAnswer, completion: $0) }.get()
Thread.sleep(forTimeInterval: Double(seconds))
let elapsed = ContinuousClock.now - start
let cpu = cpuSeconds() - cpuStart
let sent: MediaConnectionStats = wait { publisher.stats(completion: $0) }
let got: MediaConnectionStats = wait { player.stats(completion: $0) }
publisher.close()
player.close()

let state = rendered.withLock { $0 }
let wall = elapsed.seconds
let firstFrame = state.first.map { $0 - start }
print("NativeBackendBench \(width)x\(height)@30, \(seconds) s of media")
print("  time to first rendered picture: \(firstFrame.map { "\($0)" } ?? "none")")
print(
  "  pictures rendered: \(state.count) (\(String(format: "%.1f", Double(state.count) / wall)) fps over the whole run)"
)
print(
  "  mean PSNR (every 10th picture): \(state.psnrCount > 0 ? String(format: "%.1f dB", state.psnrSum / Double(state.psnrCount)) : "n/a")"
)
print(
  "  video bitrate sent/received: \(sent.currentVideoBitrate / 1000) / \(got.currentVideoBitrate / 1000) kbit/s"
)
print("  congestion controller estimate: \(sent.availableOutgoingBitrate / 1000) kbit/s")
print(
  "  packets sent/received: \(sent.packetsSent) / \(got.packetsReceived), lost \(got.packetsLost)")
print(
  "  process CPU: \(String(format: "%.2f", cpu)) s over \(String(format: "%.2f", wall)) s (\(String(format: "%.0f", cpu / wall * 100))% of one core, encode + decode + both transports)"
)
