import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam
@testable import WCSProtocols

/// Loss, late joiners, bandwidth feedback and source switching over the loopback relay.
final class NativeMediaBackendRecoveryTests: XCTestCase {
  private static let videoOnly = MediaConnectionRequest(
    direction: .publish, audio: nil, video: .init(maxWidth: 320, maxHeight: 240, maxFrameRate: 30))

  /// Every 7th video packet is lost on the way to the player: the player NACKs, the publisher
  /// retransmits over RTX, and the pictures keep arriving in order and intact.
  func testLostPacketsAreRetransmittedAfterNACK() throws {
    let call = try LoopbackCall(publish: Self.videoOnly)
    defer { call.close() }
    let seen = BackendTestBox<Set<UInt16>>([])
    call.relay.dropFilter = { payloadType, sequenceNumber in
      // Only first transmissions of VP8 (PT 96) are dropped, never their RTX copies.
      guard payloadType == 96, sequenceNumber % 7 == 3 else { return false }
      return seen.mutate { $0.insert(sequenceNumber).inserted }
    }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("40 frames despite loss") { call.frames.value.count >= 40 }
    XCTAssertGreaterThan(call.relay.dropped.value, 0)
    let numbers = call.frameNumbers
    XCTAssertEqual(numbers, numbers.sorted())
    XCTAssertGreaterThanOrEqual(numbers.count, call.frames.value.count - 2)
    let camera = VirtualCamera(width: 320, height: 240, frameRate: 30)
    let last = try XCTUnwrap(call.frames.value.last.flatMap { I420Image($0) })
    let number = try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: last))
    XCTAssertGreaterThanOrEqual(try XCTUnwrap(last.psnr(to: camera.frame(Int(number)))), 30)
    let sent = try XCTUnwrap(call.statistics(of: call.publisher, self))
    let got = try XCTUnwrap(call.statistics(of: call.player, self))
    XCTAssertGreaterThan(got.nacksSent, 0)
    XCTAssertGreaterThan(sent.retransmissions, 0)
  }

  /// A player that joins after the key frame asks for one (PLI) and gets it.
  func testLateJoinerGetsAKeyFrameAfterPLI() throws {
    let call = try LoopbackCall(publish: Self.videoOnly)
    defer { call.close() }
    try call.connectPublisher(self)
    waitForBackend("publisher connected") { call.publishStates.value.last == .connected }
    waitForBackend("publisher past its first key frame") {
      (call.statistics(of: call.publisher, self)?.framesEncoded ?? 0) > 15
    }
    try call.connectPlayer(self)
    waitForBackend("frames after PLI") { call.frames.value.count >= 5 }
    let sent = try XCTUnwrap(call.statistics(of: call.publisher, self))
    let got = try XCTUnwrap(call.statistics(of: call.player, self))
    XCTAssertGreaterThan(got.plisSent, 0)
    XCTAssertGreaterThan(sent.keyFrameRequests, 0)
    XCTAssertGreaterThanOrEqual(sent.keyFramesEncoded, 2)
    XCTAssertGreaterThan(call.frameNumbers.first ?? 0, 15, "the picture starts where it was")
  }

  /// A REMB from the receiving side lowers the encoder bitrate, never below the constraints'
  /// minimum.
  func testREMBLowersTheEncoderBitrateWithinBounds() throws {
    var request = Self.videoOnly
    request.video?.minBitrate = 200
    request.video?.maxBitrate = 1500
    let call = try LoopbackCall(publish: request)
    defer { call.close() }
    try call.connectPublisher(self)
    waitForBackend("publisher connected") { call.publishStates.value.last == .connected }
    waitForBackend("video flowing") { call.relay.ssrcsByPayloadType.value[96] != nil }
    XCTAssertEqual(call.statistics(of: call.publisher, self)?.videoEncoderBitrate, 1_000_000)
    let ssrc = try XCTUnwrap(call.relay.ssrcsByPayloadType.value[96])
    try call.relay.sendToPublisher([
      .receiverEstimatedMaxBitrate(
        RTCPReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 400_000, ssrcs: [ssrc]))
    ])
    waitForBackend("encoder at the REMB") {
      call.statistics(of: call.publisher, self)?.videoEncoderBitrate == 400_000
    }
    try call.relay.sendToPublisher([
      .receiverEstimatedMaxBitrate(
        RTCPReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 50_000, ssrcs: [ssrc]))
    ])
    waitForBackend("encoder at the minimum") {
      call.statistics(of: call.publisher, self)?.videoEncoderBitrate == 200_000
    }
  }

  /// `switchCamera` moves the published video from the virtual camera to a file source
  /// (a Y4M clip of the virtual camera's frames 1000...) and back; with one camera it throws.
  func testSwitchCameraCyclesToAFileSourceAndBack() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "native-backend-\(UUID().uuidString).y4m")
    defer { try? FileManager.default.removeItem(at: url) }
    let camera = VirtualCamera(width: 320, height: 240, frameRate: 30)
    let writer = try Y4MWriter(url: url, width: 320, height: 240, frameRate: 30)
    for index in 1000..<1030 { try writer.write(camera.frame(index)) }
    try writer.close()

    let call = try LoopbackCall(publish: Self.videoOnly)
    defer { call.close() }
    XCTAssertThrowsError(try call.publisher.switchCamera()) { error in
      XCTAssertEqual(error as? MediaBackendError, .deviceUnavailable("no published video track"))
    }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("virtual camera frames") { call.frameNumbers.count >= 5 }
    XCTAssertThrowsError(try call.publisher.switchCamera()) { error in
      XCTAssertEqual(error as? MediaBackendError, .deviceUnavailable("no other camera"))
    }
    XCTAssertLessThan(call.frameNumbers.last ?? .max, 1000)

    call.backend.addFileSource(path: url.path)
    try call.publisher.switchCamera()
    waitForBackend("file frames") { (call.frameNumbers.last ?? 0) >= 1000 }
    let fromFile = try XCTUnwrap(call.frames.value.last.flatMap { I420Image($0) })
    let number = try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: fromFile))
    XCTAssertGreaterThanOrEqual(try XCTUnwrap(fromFile.psnr(to: camera.frame(Int(number)))), 30)

    try call.publisher.switchCamera()
    waitForBackend("virtual camera again") { (call.frameNumbers.last ?? .max) < 1000 }
  }
}

/// Garbage on the wire never takes the player down.
final class NativeMediaBackendMalformedInputTests: XCTestCase {
  /// Packets of unknown payload types, junk VP8/Opus payloads under strange SSRCs and
  /// truncated RTCP reach the player between real media: they are counted and dropped, the
  /// real stream keeps rendering in order.
  func testGarbagePacketsAreDroppedWithoutDisturbingTheStream() throws {
    let call = try LoopbackCall(
      publish: MediaConnectionRequest(
        direction: .publish, audio: .init(),
        video: .init(maxWidth: 320, maxHeight: 240, maxFrameRate: 30)))
    defer { call.close() }
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    waitForBackend("first frames") { call.frames.value.count >= 5 }
    var generator = SystemRandomNumberGenerator()
    var garbage: [[UInt8]] = []
    for index in 0..<60 {
      let payloadType: UInt8 = [96, 111, 35, 96][index % 4]
      var packet: [UInt8] = [0x80, payloadType, UInt8(index), 0, 0, 0, 0, UInt8(index)]
      packet += [0xDE, 0xAD, UInt8(index), 0x01]  // SSRC no real source uses
      packet += (0..<(index % 30)).map { _ in UInt8.random(in: 0...255, using: &generator) }
      garbage.append(packet)
    }
    try call.relay.sendToPlayer(
      rtp: garbage,
      rtcp: [[0x81, 0xCD, 0x00, 0x09, 0, 0, 0, 1], [0x80, 0xC9, 0x00, 0x07, 1, 2, 3, 4]])
    let before = call.frames.value.count
    waitForBackend("frames after the garbage") { call.frames.value.count >= before + 20 }
    let numbers = call.frameNumbers
    XCTAssertEqual(numbers, numbers.sorted())
    let got = try XCTUnwrap(call.statistics(of: call.player, self))
    XCTAssertGreaterThanOrEqual(got.malformedPackets, 60)
    XCTAssertEqual(call.playStates.value.last, .connected)
  }
}
