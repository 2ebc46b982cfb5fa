import BenchSupport
import Foundation
import WCSMedia

/// The far end, in a child process: `peer-sink` answers one publish offer (ICE-lite) and drops
/// the media; `peer-publisher` publishes the virtual camera + microphone through an ICE-lite
/// relay and answers every play offer read from stdin, fanning the RTP out to all players and
/// their RTCP back to the publisher. `codec` is the one `peer-publisher` sends.
final class BenchPeer: @unchecked Sendable {
  // @unchecked Sendable: the PeerConnections are used on `loop` only.
  let loop = EventLoop(label: "PipelineBench.peer")
  let codec: BenchCodec
  private var publisherSide: PeerConnection?
  private var players: [PeerConnection] = []
  private var publisher: (any MediaConnection)?
  private static let configuration = PeerConnectionConfiguration(
    iceLite: true, allowLoopback: true, hostAddresses: [.loopbackV4])

  init(codec: BenchCodec) { self.codec = codec }

  func answerPublisher(_ offer: String, relay: Bool) throws -> String {
    try loop.submit {
      let connection = PeerConnection(configuration: Self.configuration, loop: loop)
      try connection.setRemoteDescription(offer: offer)
      if relay {
        connection.onRTP = { [weak self] _, packet in
          guard let self else { return }
          for player in self.players { try? player.sendRTP(packet) }
        }
      } else {
        connection.onRTP = { _, _ in }
      }
      publisherSide = connection
      return try connection.createAnswer()
    }
  }

  func answerPlayer(_ offer: String) throws -> String {
    try loop.submit {
      let connection = PeerConnection(configuration: Self.configuration, loop: loop)
      try connection.setRemoteDescription(offer: offer)
      connection.onRTCP = { [weak self] packet in try? self?.publisherSide?.sendRTCP(packet) }
      players.append(connection)
      return try connection.createAnswer()
    }
  }

  /// Starts the relayed publisher (`peer-publisher` mode).
  func startPublisher() throws {
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
    let connection = try backend.makeConnection(codec.restricting(PipelineSettings.publishRequest))
    {
      _ in
    }
    let offer = try wait { connection.createOffer(completion: $0) }.get()
    let answer = try answerPublisher(offer, relay: true)
    try wait { connection.setRemoteAnswer(answer, completion: $0) }.get()
    publisher = connection
  }

  /// Serves offers from stdin until it closes.
  func serve(mode: String) throws -> Never {
    if mode == "peer-publisher" { try startPublisher() }
    while let line = readLine() {
      guard let offer = SDPLine.decode(line) else { break }
      let answer =
        mode == "peer-sink" ? try answerPublisher(offer, relay: false) : try answerPlayer(offer)
      FileHandle.standardOutput.write(Data((SDPLine.encode(answer) + "\n").utf8))
    }
    publisher?.close()
    loop.submit {
      publisherSide?.close()
      for player in players { player.close() }
    }
    exit(0)
  }
}

/// What is published in every part: 640x480 at 30 fps VP8 pinned at 1 Mbit/s (so the raw
/// encoder runs at the same rate), mono Opus at the default 32 kbit/s.
enum PipelineSettings {
  // `PIPELINEBENCH_SIZE=WxH` (inherited by the child peer) changes the picture size, e.g. a
  // small one to run the play path under callgrind in real time.
  static let size: (width: Int, height: Int) = {
    let parts = ProcessInfo.processInfo.environment["PIPELINEBENCH_SIZE"]?.split(separator: "x")
      .compactMap { Int($0) }
    guard let parts, parts.count == 2, parts[0] > 0, parts[1] > 0 else { return (640, 480) }
    return (parts[0], parts[1])
  }()
  static let width = size.width
  static let height = size.height
  static let frameRate = 30
  static let bitrateKbps = 1000

  static var publishRequest: MediaConnectionRequest {
    MediaConnectionRequest(
      direction: .publish, audio: .init(),
      video: .init(
        maxWidth: width, maxHeight: height, maxFrameRate: frameRate, minBitrate: bitrateKbps,
        maxBitrate: bitrateKbps))
  }

  /// The VP8 settings `VideoSendTrack` uses for `publishRequest`.
  static var encoderConfiguration: VP8Encoder.Configuration {
    VP8Encoder.Configuration(
      width: width, height: height, frameRate: frameRate, bitrateKbps: bitrateKbps,
      keyFrameInterval: 3000)
  }
}
