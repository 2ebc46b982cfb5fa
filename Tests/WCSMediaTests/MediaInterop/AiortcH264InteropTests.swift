import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam

/// H.264 (RFC 6184) against aiortc (PyAV: libx264 encoding, libavcodec decoding) on
/// 127.0.0.1: our offer lists H.264 first, aiortc's answer takes it, and each side decodes
/// the other's pictures, read back by their VirtualCamera frame numbers.
final class AiortcH264InteropTests: XCTestCase {
  private func statistics(_ connection: NativeMediaConnection)
    -> NativeMediaConnection.DetailedStatistics?
  {
    let box = BackendTestBox<NativeMediaConnection.DetailedStatistics?>(nil)
    connection.detailedStatistics { value in box.mutate { $0 = value } }
    waitForBackend("statistics", timeout: 10) { box.value != nil }
    return box.value
  }

  func testAiortcDecodesOurH264() throws {
    try AiortcMediaPeer.skipUnlessInstalled()
    let loop = EventLoop(label: "aiortc-h264-publish")
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
    let states = BackendTestBox<[MediaConnectionState]>([])
    var request = MediaConnectionRequest(
      direction: .publish, audio: .init(), video: .init(maxWidth: 320, maxHeight: 240))
    request.preferredVideoCodec = "H264"
    let connection = try XCTUnwrap(
      try backend.makeConnection(request) { state in states.mutate { $0.append(state) } }
        as? NativeMediaConnection)
    let peer = try AiortcMediaPeer(mode: .receive)
    defer {
      peer.close()
      connection.close()
      loop.shutdown()
    }
    // aiortc answers VP8 first; publishing, we send the H.264 we prefer, which it accepted.
    let answer = try peer.answer(try offer(of: connection))
    XCTAssertTrue(answer.contains("H264/90000"), answer)
    try apply(answer: answer, to: connection)
    waitForBackend("publish connection up", timeout: 20) { states.value.last == .connected }
    let report = try peer.report(timeout: 30) { $0.int("video_frames") >= 30 }
    XCTAssertGreaterThanOrEqual(report.int("video_frames"), 30, "pictures aiortc decoded")
    XCTAssertEqual(report["widths"] as? [Int], [320])
    let read = (report["frame_numbers"] as? [Any] ?? []).map { ($0 as? NSNumber)?.intValue }
    let numbers = read.compactMap { $0 }
    XCTAssertGreaterThanOrEqual(numbers.count, read.count * 9 / 10, "frame numbers readable")
    XCTAssertEqual(numbers, numbers.sorted(), "frame numbers increase")
    XCTAssertEqual(statistics(connection)?.videoCodec, "H264")
  }

  func testWeDecodeAiortcsH264() throws {
    try AiortcMediaPeer.skipUnlessInstalled()
    let loop = EventLoop(label: "aiortc-h264-play")
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
    let states = BackendTestBox<[MediaConnectionState]>([])
    let pictures = BackendTestBox<[UInt32?]>([])
    let renderer = VideoFrameCallbackRenderer { frame in
      pictures.mutate {
        $0.append(I420Image(frame).flatMap { VirtualCamera.decodeFrameNumber(from: $0) })
      }
    }
    let request = MediaConnectionRequest(
      direction: .play, audio: .init(), video: .init(), renderer: renderer)
    let player = try XCTUnwrap(
      try backend.makeConnection(request) { state in states.mutate { $0.append(state) } }
        as? NativeMediaConnection)
    let peer = try AiortcMediaPeer(mode: .send)
    defer {
      peer.close()
      player.close()
      loop.shutdown()
    }
    // aiortc sends its first answered codec: without VP8 in the offer (as `stripCodecs`
    // leaves it), that is H.264.
    var offered = try SDPParser.parse(try offer(of: player)).description
    offered.stripCodecs(["VP8"])
    let answer = try peer.answer(SDPWriter.write(offered))
    XCTAssertTrue(answer.contains("H264/90000"), answer)
    try apply(answer: answer, to: player)
    waitForBackend("play connection up", timeout: 20) { states.value.last == .connected }
    waitForBackend("H.264 pictures decoded", timeout: 30) { pictures.value.count >= 30 }
    let numbers = pictures.value.compactMap { $0 }
    XCTAssertGreaterThanOrEqual(numbers.count, pictures.value.count * 9 / 10, "band readable")
    XCTAssertEqual(numbers, numbers.sorted(), "aiortc's frame numbers increase")
    let decoded = try XCTUnwrap(statistics(player))
    XCTAssertEqual(decoded.videoCodec, "H264")
    XCTAssertGreaterThanOrEqual(decoded.framesDecoded, 30)
  }
}
