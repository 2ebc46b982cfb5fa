import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSPeerConnection
@testable import WCSProtocols

/// A play connection whose event loop is held busy 15 ms of every 100 ms (as a picture decoded
/// on it, or other streams, would): its packets are timed by the kernel's receive time, so the
/// RFC 3550 jitter it measures stays what the network made it, not what the loop did, and the
/// play goes on (pictures decode in order, no freeze).
final class KernelArrivalBusyLoopTests: XCTestCase {
  /// Holds its loop with `usleep` for `hold` every `period`, until stopped. Loop-confined.
  private final class LoopHog: @unchecked Sendable {
    // @unchecked Sendable: `running` and `holds` are touched on `loop` only.
    let loop: EventLoop
    let hold: useconds_t
    let period: Duration
    var running = true
    var holds = 0

    init(loop: EventLoop, hold: useconds_t, period: Duration) {
      self.loop = loop
      self.hold = hold
      self.period = period
    }

    func arm() {
      loop.schedule(after: period - .microseconds(Int(hold))) { [self] in
        guard running else { return }
        usleep(hold)
        holds += 1
        arm()
      }
    }
  }

  /// One RTP packet as the player's PeerConnection handed it over.
  private struct Tapped: Sendable {
    var payloadType: UInt8
    var sequenceNumber: UInt16
    var timestamp: UInt32
    var arrival: ContinuousClock.Instant?
    var handledAt: ContinuousClock.Instant
  }

  /// RFC 3550 §A.8 jitter (timestamp units) of `packets` timed by `time`.
  private func jitter(
    of packets: [Tapped], clockRate: Int, time: (Tapped) -> ContinuousClock.Instant
  ) -> Double {
    guard let origin = packets.first.map(time) else { return 0 }
    var statistics = RTPReceiveStatistics(ssrc: 1, clockRate: clockRate)
    for packet in packets {
      statistics.record(
        sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
        arrival: virtualTime(MediaDuration(time(packet) - origin).seconds))
    }
    return statistics.jitter
  }

  func testABusyPlayerLoopDoesNotShowUpAsJitterAndPlayGoesOn() throws {
    // The publisher and the relay on one loop, the player on its own: only the player's loop
    // is held, so what it does is all the difference between the two timings.
    let sendLoop = EventLoop(label: "BusyLoopSend")
    let playLoop = EventLoop(label: "BusyLoopPlay")
    let sendBackend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: sendLoop, peerConnection: .loopback))
    // The player reads packets as they come: with receive coalescing (the default) its loop
    // reads them at its audio turns anyway, at a steady phase, so holds add less loop-timed
    // jitter and the margin below shrank to within noise (a clean-clone run failed it). That
    // coalescing keeps kernel arrivals has its own tests (EventLoopReceiveCoalescingTests).
    var playConfiguration = PeerConnectionConfiguration.loopback
    playConfiguration.receiveCoalescing = .zero
    let playBackend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(
        loop: playLoop, peerConnection: playConfiguration))
    let publishStates = BackendTestBox<[MediaConnectionState]>([])
    let playStates = BackendTestBox<[MediaConnectionState]>([])
    let frames = BackendTestBox<[VideoFrame]>([])
    let publisher = try XCTUnwrap(
      try sendBackend.makeConnection(
        MediaConnectionRequest(
          direction: .publish, audio: .init(),
          video: .init(maxWidth: 320, maxHeight: 240, maxFrameRate: 30))
      ) { state in publishStates.mutate { $0.append(state) } } as? NativeMediaConnection)
    let renderer = VideoFrameCallbackRenderer { frame in frames.mutate { $0.append(frame) } }
    let player = try XCTUnwrap(
      try playBackend.makeConnection(
        MediaConnectionRequest(direction: .play, audio: .init(), video: .init(), renderer: renderer)
      ) { state in playStates.mutate { $0.append(state) } } as? NativeMediaConnection)
    player.setPlayoutSink(PlayoutAudioCallbackSink { _ in })
    let relay = LoopbackRelay(loop: sendLoop)
    defer {
      publisher.close()
      player.close()
      relay.close()
    }
    try apply(answer: try relay.answerPublisher(try offer(of: publisher)), to: publisher)
    try apply(answer: try relay.answerPlayer(try offer(of: player)), to: player)
    waitForBackend("both connected") {
      publishStates.value.last == .connected && playStates.value.last == .connected
    }
    waitForBackend("10 pictures") { frames.value.count >= 10 }

    // Tap what the player's PeerConnection hands to the connection, with both timings.
    let tapped = BackendTestBox<[Tapped]>([])
    let audioPayloadType = try playLoop.submit { () throws -> UInt8 in
      let connection = try XCTUnwrap(player.peerConnection)
      let original = try XCTUnwrap(connection.onRTP)
      connection.onRTP = { ssrc, raw in
        if raw.count >= 12 {
          let entry = Tapped(
            payloadType: raw[1] & 0x7F, sequenceNumber: UInt16(raw[2]) << 8 | UInt16(raw[3]),
            timestamp: UInt32(raw[4]) << 24 | UInt32(raw[5]) << 16 | UInt32(raw[6]) << 8
              | UInt32(raw[7]),
            arrival: playLoop.datagramArrival?.continuousInstant, handledAt: playLoop.now())
          tapped.mutate { $0.append(entry) }
        }
        original(ssrc, raw)
      }
      return player.audioPayloadType
    }
    let hog = LoopHog(loop: playLoop, hold: 15_000, period: .milliseconds(100))
    playLoop.execute { hog.arm() }
    let framesBefore = frames.value.count
    // 3 s of audio (20 ms packets) under the hog.
    waitForBackend("150 audio packets tapped") {
      tapped.value.filter { $0.payloadType == audioPayloadType }.count >= 150
    }
    // Read the stream's own jitter with the packets it has seen, in one go on the loop.
    let (reported, packets, holds, freezes) = playLoop.submit {
      hog.running = false
      let stream = player.playSession.audio?.source
      return (
        stream?.statistics.jitter, tapped.value.filter { $0.payloadType == audioPayloadType },
        hog.holds, player.videoReceiveTrack?.statistics.freezes
      )
    }
    XCTAssertGreaterThanOrEqual(holds, 20, "the loop was held every 100 ms")
    XCTAssertTrue(packets.allSatisfy { $0.arrival != nil }, "every datagram has an arrival")
    XCTAssertTrue(
      packets.allSatisfy { packet in packet.arrival.map { $0 <= packet.handledAt } ?? false },
      "arrival never after the handling")
    let kernelJitter = jitter(of: packets, clockRate: 48_000) { $0.arrival ?? $0.handledAt }
    let loopJitter = jitter(of: packets, clockRate: 48_000) { $0.handledAt }
    let streamJitter = try XCTUnwrap(reported)
    print(
      "audio jitter (48 kHz units): kernel-timed \(kernelJitter), loop-timed \(loopJitter),"
        + " reported \(streamJitter); holds \(holds)")
    // The connection times packets by their arrival: its jitter is the kernel-timed one (the
    // packets before the tap weigh (15/16)^150 ≈ 1e-4 of it).
    XCTAssertEqual(streamJitter, kernelJitter, accuracy: 1 + kernelJitter * 0.01)
    // A packet in a 15 ms hold is read up to 15 ms late: timed by the loop that is 1.4–2.3 ms
    // of jitter here (about one packet in five late by 0–15 ms); timed by the kernel, only the
    // network's (loopback) and the sender's, 0.1–0.2 ms.
    // (Additive, not a ratio: what a loaded machine adds on the sender's side is in both.)
    XCTAssertGreaterThan(loopJitter, kernelJitter + 48 * 0.5, "the hog shows in loop timing only")

    // The play went on: pictures in order, no freeze.
    waitForBackend("30 more pictures") { frames.value.count >= framesBefore + 30 }
    let numbers = frames.value.compactMap { frame in
      I420Image(frame).flatMap { VirtualCamera.decodeFrameNumber(from: $0) }
    }
    XCTAssertEqual(numbers, numbers.sorted(), "frame numbers increase")
    XCTAssertEqual(freezes, 0)
  }
}
