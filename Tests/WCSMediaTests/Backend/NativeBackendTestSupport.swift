import Foundation
import Synchronization
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSPeerConnection
@testable import WCSProtocols

/// A value shared between loop/codec threads and the test thread.
final class BackendTestBox<Value: Sendable>: Sendable {
  private let storage: Mutex<Value>

  init(_ value: Value) { storage = Mutex(value) }

  var value: Value { storage.withLock { $0 } }

  func mutate<Result>(_ body: (inout Value) -> Result) -> Result {
    storage.withLock { body(&$0) }
  }
}

/// A minimal SFU on loopback, as `wcs-local-server` is: two ICE-lite answerer
/// PeerConnections, one answering the publisher and one the player, relaying the publisher's
/// RTP to the player and RTCP both ways, SSRCs and payload types unchanged.
final class LoopbackRelay: @unchecked Sendable {
  // @unchecked Sendable: the PeerConnections are used on `loop` only.
  let loop: EventLoop
  private var publisherSide: PeerConnection?
  private var playerSide: PeerConnection?
  let relayedRTP = BackendTestBox(0)
  let relayedRTCP = BackendTestBox(0)
  /// Publisher SSRCs seen, by payload type.
  let ssrcsByPayloadType = BackendTestBox<[UInt8: UInt32]>([:])
  /// Decides whether a publisher RTP packet reaches the player (`true`: drop it); on the loop.
  var dropFilter: (@Sendable (_ payloadType: UInt8, _ sequenceNumber: UInt16) -> Bool)?
  let dropped = BackendTestBox(0)
  /// Extra one-way delay for the publisher's RTP of a payload type (`nil`: none), as a longer
  /// network path for that stream; RTCP is not delayed. Set before connecting.
  var rtpDelay: (@Sendable (_ payloadType: UInt8) -> Duration?)?
  /// Loss on the publisher's link, before the relay's SRTP (`DroppingUDPProxy`): decides
  /// whether a publisher SRTP packet is lost (`true`). Set before connecting; on the loop.
  var publisherLinkDrop: (@Sendable (_ payloadType: UInt8, _ sequenceNumber: UInt16) -> Bool)?
  let publisherLinkDropped = BackendTestBox(0)
  /// Whether the answers keep RTX (RFC 4588); false answers as a server without it, so NACKs
  /// are answered by plain resends. Set before connecting.
  var negotiatesRTX = true
  private var proxy: DroppingUDPProxy?

  init(loop: EventLoop) { self.loop = loop }

  private static let configuration = PeerConnectionConfiguration(
    iceLite: true, allowLoopback: true, hostAddresses: [.loopbackV4])

  /// Answers the publisher's offer (receive-only answer).
  func answerPublisher(_ offer: String) throws -> String {
    try loop.submit {
      let connection = PeerConnection(configuration: Self.configuration, loop: loop)
      try connection.setRemoteDescription(offer: offer)
      connection.onRTP = { [weak self] ssrc, packet in
        guard let self, packet.count >= 12 else { return }
        let payloadType = packet[1] & 0x7F
        let sequenceNumber = UInt16(packet[2]) << 8 | UInt16(packet[3])
        self.ssrcsByPayloadType.mutate { $0[payloadType] = ssrc }
        if let drop = self.dropFilter, drop(payloadType, sequenceNumber) {
          self.dropped.mutate { $0 += 1 }
          return
        }
        self.relayedRTP.mutate { $0 += 1 }
        if let delay = self.rtpDelay?(payloadType) {
          let bytes = [UInt8](packet)
          _ = self.loop.schedule(after: delay) { [weak self] in
            try? self?.playerSide?.sendRTP(bytes)
          }
          return
        }
        try? self.playerSide?.sendRTP(packet)
      }
      connection.onRTCP = { [weak self] packet in
        try? self?.playerSide?.sendRTCP(packet)
      }
      publisherSide = connection
      var answer = try restricted(try connection.createAnswer())
      if let drop = publisherLinkDrop, let server = connection.localAddresses.first {
        let dropped = publisherLinkDropped
        let proxy = try DroppingUDPProxy(loop: loop, server: server) { payloadType, sequence in
          guard drop(payloadType, sequence) else { return false }
          dropped.mutate { $0 += 1 }
          return true
        }
        self.proxy = proxy
        answer = try proxy.rewritingCandidates(of: answer)
      }
      return answer
    }
  }

  private func restricted(_ answer: String) throws -> String {
    guard !negotiatesRTX else { return answer }
    var description = try SDPParser.parse(answer).description
    description.stripCodecs(["rtx"])
    return SDPWriter.write(description)
  }

  /// Answers the player's offer (send-only answer).
  func answerPlayer(_ offer: String) throws -> String {
    try loop.submit {
      let connection = PeerConnection(configuration: Self.configuration, loop: loop)
      try connection.setRemoteDescription(offer: offer)
      connection.onRTCP = { [weak self] packet in
        guard let self else { return }
        self.relayedRTCP.mutate { $0 += 1 }
        try? self.publisherSide?.sendRTCP(packet)
      }
      playerSide = connection
      return try restricted(try connection.createAnswer())
    }
  }

  /// Sends raw RTP and RTCP to the player as if the publisher had sent them.
  func sendToPlayer(rtp: [[UInt8]], rtcp: [[UInt8]]) throws {
    try loop.submit {
      for packet in rtp { try playerSide?.sendRTP(packet) }
      for packet in rtcp { try? playerSide?.sendRTCP(packet) }
    }
  }

  /// Sends RTCP to the publisher as if the player had sent it.
  func sendToPublisher(_ packets: [RTCPPacket]) throws {
    let bytes = try RTCPPacket.serializeCompound(packets)
    try loop.submit { try publisherSide?.sendRTCP(bytes) }
  }

  func close() {
    loop.submit {
      publisherSide?.close()
      playerSide?.close()
      proxy?.close()
    }
  }
}

extension XCTestCase {
  /// Polls `condition` every 20 ms until it holds or `timeout` passes (real network on
  /// loopback: no virtual clock exists for it); fails with `message` on timeout.
  func waitForBackend(
    _ message: String, timeout: TimeInterval = 20, file: StaticString = #filePath,
    line: UInt = #line, _ condition: () -> Bool
  ) {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
      if Date() > deadline {
        XCTFail("timed out: \(message)", file: file, line: line)
        return
      }
      Thread.sleep(forTimeInterval: 0.02)
    }
  }

  /// The offer of `connection`, waited for.
  func offer(of connection: any MediaConnection, file: StaticString = #filePath, line: UInt = #line)
    throws -> String
  {
    let result = BackendTestBox<Result<String, MediaBackendError>?>(nil)
    connection.createOffer { value in result.mutate { $0 = value } }
    waitForBackend("offer", timeout: 10, file: file, line: line) { result.value != nil }
    return try XCTUnwrap(result.value, file: file, line: line).get()
  }

  /// Applies `answer` to `connection`, waited for.
  func apply(answer: String, to connection: any MediaConnection) throws {
    let result = BackendTestBox<Result<Void, MediaBackendError>?>(nil)
    connection.setRemoteAnswer(answer) { value in result.mutate { $0 = value } }
    waitForBackend("answer", timeout: 10) { result.value != nil }
    try XCTUnwrap(result.value).get()
  }
}

/// A publisher and a player of one `NativeMediaBackend` joined through a `LoopbackRelay` on
/// 127.0.0.1, with the pictures and sound the player renders.
final class LoopbackCall: Sendable {
  let loop = EventLoop(label: "LoopbackCall")
  let backend: NativeMediaBackend
  let relay: LoopbackRelay
  let publisher: NativeMediaConnection
  let player: NativeMediaConnection
  let publishStates = BackendTestBox<[MediaConnectionState]>([])
  let playStates = BackendTestBox<[MediaConnectionState]>([])
  let frames = BackendTestBox<[VideoFrame]>([])
  let audio = BackendTestBox<[AudioFrame]>([])

  /// - Parameters:
  ///   - playOutput: the player request's sound output (`Audio.output`).
  ///   - renderer: the player's renderer instead of the one collecting `frames`.
  init(
    publish request: MediaConnectionRequest,
    playOutput: MediaConnectionRequest.AudioOutput = .none,
    renderer: (any VideoRenderer)? = nil,
    backend makeBackend: (NativeMediaBackend.Configuration) -> NativeMediaBackend = {
      NativeMediaBackend(configuration: $0)
    }
  ) throws {
    backend = makeBackend(NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
    relay = LoopbackRelay(loop: loop)
    let publishStates = publishStates
    let playStates = playStates
    let frames = frames
    let audio = audio
    guard
      let publisher = try backend.makeConnection(
        request,
        onStateChange: { state in
          publishStates.mutate { $0.append(state) }
        }) as? NativeMediaConnection,
      let player = try backend.makeConnection(
        MediaConnectionRequest(
          direction: .play,
          audio: request.audio.map { .init(useStereo: $0.useStereo, output: playOutput) },
          video: request.video.map { _ in .init() },
          renderer: renderer
            ?? VideoFrameCallbackRenderer { frame in frames.mutate { $0.append(frame) } }),
        onStateChange: { state in playStates.mutate { $0.append(state) } })
        as? NativeMediaConnection
    else { throw MediaBackendError.unavailable("not a NativeMediaConnection") }
    self.publisher = publisher
    self.player = player
    player.setPlayoutSink(PlayoutAudioCallbackSink { frame in audio.mutate { $0.append(frame) } })
  }

  /// Offer/answer for the publisher, through the relay.
  func connectPublisher(_ test: XCTestCase) throws {
    let offer = try test.offer(of: publisher)
    try test.apply(answer: try relay.answerPublisher(offer), to: publisher)
  }

  /// Offer/answer for the player, through the relay.
  func connectPlayer(_ test: XCTestCase) throws {
    let offer = try test.offer(of: player)
    try test.apply(answer: try relay.answerPlayer(offer), to: player)
  }

  /// The frame numbers of the pictures rendered so far (unreadable ones left out).
  var frameNumbers: [UInt32] {
    frames.value.compactMap { I420Image($0).flatMap { VirtualCamera.decodeFrameNumber(from: $0) } }
  }

  func statistics(of connection: NativeMediaConnection, _ test: XCTestCase)
    -> NativeMediaConnection.DetailedStatistics?
  {
    let box = BackendTestBox<NativeMediaConnection.DetailedStatistics?>(nil)
    connection.detailedStatistics { value in box.mutate { $0 = value } }
    test.waitForBackend("statistics") { box.value != nil }
    return box.value
  }

  func close() {
    publisher.close()
    player.close()
    relay.close()
  }
}

/// The dominant frequency of mono PCM by zero crossings, Hz.
func zeroCrossingFrequency(_ samples: [Int16], sampleRate: Int) -> Double {
  var crossings = 0
  for index in 1..<samples.count where (samples[index - 1] < 0) != (samples[index] < 0) {
    crossings += 1
  }
  return Double(crossings) / 2 / (Double(samples.count) / Double(sampleRate))
}
