import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam

/// NativeMediaBackend against aiortc with real media on 127.0.0.1: our offer, aiortc's answer
/// (the WCS shape), VP8 + Opus both ways, and a PLI from aiortc served with a key frame.
final class AiortcMediaInteropTests: XCTestCase {
  private static let width = 320
  private static let height = 240

  /// A publish connection of its own backend and loop, answered by aiortc (`receive` mode).
  private final class Publication {
    let loop = EventLoop(label: "aiortc-media-publish")
    let states = BackendTestBox<[MediaConnectionState]>([])
    let connection: NativeMediaConnection
    let peer: AiortcMediaPeer

    init(_ test: XCTestCase) throws {
      let backend = NativeMediaBackend(
        configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
      let states = states
      connection = try XCTUnwrap(
        try backend.makeConnection(
          MediaConnectionRequest(
            direction: .publish, audio: .init(),
            video: .init(
              maxWidth: AiortcMediaInteropTests.width, maxHeight: AiortcMediaInteropTests.height,
              maxFrameRate: 30))
        ) { state in states.mutate { $0.append(state) } } as? NativeMediaConnection)
      peer = try AiortcMediaPeer(mode: .receive)
      let offer = try test.offer(of: connection)
      try test.apply(answer: try peer.answer(offer), to: connection)
      test.waitForBackend("publish connection up", timeout: 20) {
        states.value.last == .connected
      }
    }

    func statistics(_ test: XCTestCase) -> NativeMediaConnection.DetailedStatistics {
      let box = BackendTestBox<NativeMediaConnection.DetailedStatistics?>(nil)
      connection.detailedStatistics { value in box.mutate { $0 = value } }
      test.waitForBackend("statistics", timeout: 10) { box.value != nil }
      return box.value ?? NativeMediaConnection.DetailedStatistics()
    }

    func close() {
      peer.close()
      connection.close()
      loop.shutdown()
    }
  }

  /// (a) aiortc decodes what we publish: VP8 pictures of the published size whose top band
  /// reads back as increasing VirtualCamera frame numbers, and the 440 Hz Opus tone.
  func testAiortcDecodesOurPublishedVP8AndOpus() throws {
    try AiortcMediaPeer.skipUnlessInstalled()
    let publication = try Publication(self)
    defer { publication.close() }
    let report = try publication.peer.report(timeout: 30) {
      $0.int("video_frames") >= 30 && $0.int("audio_frames") >= 100
    }
    print(
      "aiortc decoded \(report.int("video_frames")) pictures, \(report.int("audio_frames")) Opus "
        + "frames, tone \(report.double("audio_frequency")) Hz")
    XCTAssertEqual(report["state"] as? String, "connected")
    XCTAssertGreaterThanOrEqual(report.int("video_frames"), 30, "pictures aiortc decoded")
    XCTAssertGreaterThanOrEqual(report.int("audio_frames"), 100, "Opus frames aiortc decoded")
    XCTAssertEqual(report["widths"] as? [Int], [Self.width])
    XCTAssertEqual(report["heights"] as? [Int], [Self.height])

    let read = (report["frame_numbers"] as? [Any] ?? []).map { ($0 as? NSNumber)?.intValue }
    let numbers = read.compactMap { $0 }
    XCTAssertGreaterThanOrEqual(
      numbers.count, read.count * 9 / 10, "frame numbers readable in aiortc's pictures")
    XCTAssertEqual(numbers, numbers.sorted(), "frame numbers increase")
    XCTAssertEqual(Set(numbers).count, numbers.count, "no picture twice")
    XCTAssertGreaterThan(numbers.last ?? 0, numbers.first ?? 0)
    let encoded = publication.statistics(self).framesEncoded
    XCTAssertLessThan(numbers.last ?? .max, encoded, "only pictures we encoded")
    XCTAssertEqual(report.double("audio_frequency"), 440, accuracy: 15, "the virtual tone")
  }

  /// (c) A PLI from aiortc's receiver is served: the key-frame request and key-frame counters
  /// of the publish connection go up, and aiortc receives a key frame after it and decodes on.
  func testPLIFromAiortcGetsAKeyFrame() throws {
    try AiortcMediaPeer.skipUnlessInstalled()
    let publication = try Publication(self)
    defer { publication.close() }
    let before = try publication.peer.report(timeout: 30) { $0.int("video_frames") >= 15 }
    XCTAssertGreaterThanOrEqual(before.int("video_frames"), 15)
    let ours = publication.statistics(self)
    XCTAssertGreaterThanOrEqual(before.int("keyframes"), 1, "the stream starts with a key frame")

    let ssrc = try publication.peer.sendPLI()
    XCTAssertEqual(ssrc, publication.connection.videoSSRC, "PLI names our video SSRC")
    var served = ours
    waitForBackend("PLI served", timeout: 20) {
      served = publication.statistics(self)
      return served.keyFrameRequests > ours.keyFrameRequests
        && served.keyFramesEncoded > ours.keyFramesEncoded
    }
    XCTAssertGreaterThan(served.keyFrameRequests, ours.keyFrameRequests)
    XCTAssertGreaterThan(served.keyFramesEncoded, ours.keyFramesEncoded)

    let after = try publication.peer.report(timeout: 20) {
      $0.int("keyframes") > before.int("keyframes") && $0.int("decoded_since_keyframe") >= 5
    }
    XCTAssertGreaterThanOrEqual(after.int("plis_sent"), before.int("plis_sent") + 1)
    XCTAssertGreaterThan(after.int("keyframes"), before.int("keyframes"), "key frame arrived")
    XCTAssertGreaterThanOrEqual(
      after.int("decoded_since_keyframe"), 5, "aiortc decodes from the new key frame on")
    XCTAssertGreaterThan(after.int("video_frames"), before.int("video_frames"))
  }

  /// (b) aiortc sends (VP8 test pattern with the frame-number band, 1 kHz Opus tone); our play
  /// connection decodes both: pictures on our renderer, audio in the playout sink.
  func testWeDecodeAiortcsVP8AndOpus() throws {
    try AiortcMediaPeer.skipUnlessInstalled()
    let loop = EventLoop(label: "aiortc-media-play")
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
    let states = BackendTestBox<[MediaConnectionState]>([])
    let pictures = BackendTestBox<[(width: Int, height: Int, number: UInt32?)]>([])
    let audio = BackendTestBox<[AudioFrame]>([])
    let renderer = VideoFrameCallbackRenderer { frame in
      let number = I420Image(frame).flatMap { VirtualCamera.decodeFrameNumber(from: $0) }
      pictures.mutate { $0.append((frame.width, frame.height, number)) }
    }
    let player = try XCTUnwrap(
      try backend.makeConnection(
        MediaConnectionRequest(direction: .play, audio: .init(), video: .init(), renderer: renderer)
      ) { state in states.mutate { $0.append(state) } } as? NativeMediaConnection)
    player.setPlayoutSink(PlayoutAudioCallbackSink { frame in audio.mutate { $0.append(frame) } })
    let peer = try AiortcMediaPeer(mode: .send)
    defer {
      peer.close()
      player.close()
      loop.shutdown()
    }
    let offer = try offer(of: player)
    XCTAssertTrue(offer.contains("a=recvonly"))
    let answer = try peer.answer(offer)
    XCTAssertTrue(answer.contains("a=sendonly"), answer)
    try apply(answer: answer, to: player)
    waitForBackend("play connection up", timeout: 20) { states.value.last == .connected }

    func loud(_ frames: [AudioFrame]) -> [AudioFrame] {
      frames.filter { ($0.samples.map { abs(Int($0)) }.max() ?? 0) > 3000 }
    }
    waitForBackend("pictures and sound decoded", timeout: 30) {
      pictures.value.count >= 30 && loud(audio.value).count >= 50
    }
    let rendered = pictures.value
    XCTAssertGreaterThanOrEqual(rendered.count, 30)
    XCTAssertTrue(rendered.allSatisfy { $0.width == 320 && $0.height == 240 }, "aiortc's size")
    let numbers = rendered.compactMap(\.number)
    XCTAssertGreaterThanOrEqual(numbers.count, rendered.count * 9 / 10, "band readable")
    XCTAssertEqual(numbers, numbers.sorted(), "aiortc's frame numbers increase")
    XCTAssertGreaterThan(numbers.last ?? 0, numbers.first ?? 0)

    let tone = loud(audio.value).dropFirst(5).prefix(25).flatMap(\.samples)
    XCTAssertEqual(zeroCrossingFrequency(tone, sampleRate: 48_000), 1000, accuracy: 15)

    let box = BackendTestBox<NativeMediaConnection.DetailedStatistics?>(nil)
    player.detailedStatistics { value in box.mutate { $0 = value } }
    waitForBackend("statistics", timeout: 10) { box.value != nil }
    let statistics = try XCTUnwrap(box.value)
    XCTAssertGreaterThanOrEqual(statistics.framesDecoded, 30)
    XCTAssertGreaterThanOrEqual(statistics.audioFramesDecoded, 50)
    XCTAssertEqual(statistics.malformedPackets, 0)
    let sent = try peer.report()
    XCTAssertGreaterThanOrEqual(sent.int("video_sent"), numbers.count, "aiortc sent them")
  }
}
