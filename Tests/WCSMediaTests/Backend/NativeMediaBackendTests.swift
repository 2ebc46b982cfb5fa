import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam

final class NativeMediaBackendTests: XCTestCase {
  private static let width = 320
  private static let height = 240

  func testDevicesListVirtualDevicesAndFileSources() {
    // Without real devices, so the listing is the same on every machine.
    let backend = NativeMediaBackend(configuration: .init(systemDevices: nil))
    XCTAssertEqual(
      backend.devices(), [NativeMediaDevices.virtualCamera, NativeMediaDevices.virtualMicrophone])
    backend.addFileSource(path: "/tmp/clip.mp4")
    XCTAssertEqual(
      backend.devices().map(\.id),
      ["virtual:camera", "virtual:microphone", "file:/tmp/clip.mp4", "file:/tmp/clip.mp4"])
    XCTAssertEqual(NativeMediaDevices.filePath(fromID: "file:/tmp/clip.mp4"), "/tmp/clip.mp4")
    XCTAssertNil(NativeMediaDevices.filePath(fromID: "virtual:camera"))
    backend.removeFileSource(path: "/tmp/clip.mp4")
    XCTAssertEqual(backend.devices().count, 2)
  }

  func testEncodingParametersFollowConstraints() {
    let request = MediaConnectionRequest(
      direction: .publish, audio: .init(useFEC: true, useStereo: true, bitrate: 64_000),
      video: .init(
        minWidth: 320, maxWidth: 641, minHeight: 240, maxHeight: 360, maxFrameRate: 15,
        minBitrate: 200, maxBitrate: 800))
    let parameters = NativeEncodingParameters(request: request)
    XCTAssertEqual(parameters.width, 640)
    XCTAssertEqual(parameters.height, 360)
    XCTAssertEqual(parameters.frameRate, 15)
    XCTAssertEqual(parameters.minVideoBitrate, 200_000)
    XCTAssertEqual(parameters.maxVideoBitrate, 800_000)
    XCTAssertEqual(parameters.startVideoBitrate, 800_000)
    XCTAssertEqual(parameters.audioChannels, 2)
    XCTAssertEqual(parameters.audioBitrate, 64_000)
    XCTAssertTrue(parameters.audioFEC)
  }

  func testLocalPreviewRendersVirtualCameraUntilReleased() {
    let backend = NativeMediaBackend()
    let numbers = BackendTestBox<[UInt32]>([])
    let display = VideoFrameCallbackRenderer { frame in
      guard let image = I420Image(frame), let n = VirtualCamera.decodeFrameNumber(from: image)
      else { return }
      numbers.mutate { $0.append(n) }
    }
    XCTAssertNoThrow(
      try backend.openLocalMedia(
        MediaConnectionRequest(
          direction: .publish, audio: nil,
          video: .init(maxWidth: Self.width, maxHeight: Self.height)), display: display))
    waitForBackend("preview frames") { numbers.value.count >= 3 }
    XCTAssertEqual(Array(numbers.value.prefix(3)), [0, 1, 2])
    XCTAssertTrue(backend.releaseLocalMedia(display: display))
    XCTAssertFalse(backend.releaseLocalMedia(display: display))
    let count = numbers.value.count
    Thread.sleep(forTimeInterval: 0.15)
    XCTAssertEqual(numbers.value.count, count, "no frames after release")
    XCTAssertThrowsError(
      try backend.openLocalMedia(
        MediaConnectionRequest(direction: .publish, audio: nil, video: .init(deviceID: "nope")),
        display: display))
  }

  /// Publisher (virtual camera + microphone) → loopback relay → player, over real ICE,
  /// DTLS-SRTP and UDP on 127.0.0.1.
  func testPublishAndPlayOverLoopback() throws {
    let loop = EventLoop(label: "NativeMediaBackendTests")
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
    let publishStates = BackendTestBox<[MediaConnectionState]>([])
    let playStates = BackendTestBox<[MediaConnectionState]>([])
    let received = BackendTestBox<[VideoFrame]>([])
    let audio = BackendTestBox<[AudioFrame]>([])

    let publisher = try XCTUnwrap(
      try backend.makeConnection(
        MediaConnectionRequest(
          direction: .publish, audio: .init(),
          video: .init(maxWidth: Self.width, maxHeight: Self.height, maxFrameRate: 30))
      ) { state in publishStates.mutate { $0.append(state) } } as? NativeMediaConnection)
    let renderer = VideoFrameCallbackRenderer { frame in received.mutate { $0.append(frame) } }
    let player = try XCTUnwrap(
      try backend.makeConnection(
        MediaConnectionRequest(direction: .play, audio: .init(), video: .init(), renderer: renderer)
      ) { state in playStates.mutate { $0.append(state) } } as? NativeMediaConnection)
    player.setPlayoutSink(PlayoutAudioCallbackSink { frame in audio.mutate { $0.append(frame) } })

    let relay = LoopbackRelay(loop: loop)
    let publishOffer = try offer(of: publisher)
    XCTAssertTrue(publishOffer.contains("a=sendonly"))
    XCTAssertTrue(publishOffer.contains("VP8/90000"))
    XCTAssertTrue(publishOffer.contains("opus/48000"))
    try apply(answer: try relay.answerPublisher(publishOffer), to: publisher)
    let playOffer = try offer(of: player)
    XCTAssertTrue(playOffer.contains("a=recvonly"))
    try apply(answer: try relay.answerPlayer(playOffer), to: player)

    waitForBackend("both connected") {
      publishStates.value.last == .connected && playStates.value.last == .connected
    }
    XCTAssertEqual(publishStates.value, [.connecting, .connected])
    waitForBackend("30 decoded frames") { received.value.count >= 30 }
    waitForBackend("1 s of audio") { audio.value.count >= 60 }

    // Pictures: increasing frame numbers, close to the source.
    let frames = received.value
    let numbers = frames.compactMap { frame in
      I420Image(frame).flatMap { VirtualCamera.decodeFrameNumber(from: $0) }
    }
    XCTAssertGreaterThanOrEqual(numbers.count, frames.count - 2, "frame numbers readable")
    XCTAssertEqual(numbers, numbers.sorted(), "frame numbers increase")
    XCTAssertGreaterThan(numbers.last ?? 0, numbers.first ?? 0)
    let camera = VirtualCamera(width: Self.width, height: Self.height, frameRate: 30)
    let last = try XCTUnwrap(frames.last.flatMap { I420Image($0) })
    XCTAssertEqual(last.width, Self.width)
    XCTAssertEqual(last.height, Self.height)
    let number = try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: last))
    let psnr = try XCTUnwrap(last.psnr(to: camera.frame(Int(number))))
    XCTAssertGreaterThanOrEqual(psnr, 30, "PSNR of frame \(number)")

    // Sound: the 440 Hz tone.
    let tail = audio.value.suffix(25).flatMap(\.samples)
    XCTAssertEqual(zeroCrossingFrequency(tail, sampleRate: 48_000), 440, accuracy: 15)
    XCTAssertGreaterThan(tail.map { abs(Int($0)) }.max() ?? 0, 3000)

    // Mute: black pictures and silence arrive instead.
    publisher.setTrackEnabled(.video, enabled: false)
    publisher.setTrackEnabled(.audio, enabled: false)
    let mutedFrom = received.value.count
    let mutedAudioFrom = audio.value.count
    waitForBackend("black frames") {
      received.value.dropFirst(mutedFrom).contains { frame in
        frame.dataY.allSatisfy { $0 <= 20 }
      }
    }
    waitForBackend("silence") {
      audio.value.dropFirst(mutedAudioFrom).suffix(5).count == 5
        && audio.value.dropFirst(mutedAudioFrom).suffix(5).allSatisfy { frame in
          frame.samples.allSatisfy { abs(Int($0)) < 200 }
        }
    }
    publisher.setTrackEnabled(.video, enabled: true)

    // Statistics.
    let publishStats = BackendTestBox<NativeMediaConnection.DetailedStatistics?>(nil)
    let playStats = BackendTestBox<NativeMediaConnection.DetailedStatistics?>(nil)
    waitForBackend("sender and receiver reports") {
      publisher.detailedStatistics { value in publishStats.mutate { $0 = value } }
      player.detailedStatistics { value in playStats.mutate { $0 = value } }
      return (publishStats.value?.senderReports ?? 0) > 0
        && (playStats.value?.receiverReports ?? 0) > 0
        && (publishStats.value?.roundTripTime != nil)
    }
    let sent = try XCTUnwrap(publishStats.value)
    let got = try XCTUnwrap(playStats.value)
    XCTAssertGreaterThan(sent.summary.packetsSent, 30)
    XCTAssertGreaterThan(sent.summary.bytesSent, 10_000)
    XCTAssertGreaterThan(sent.framesEncoded, 30)
    XCTAssertGreaterThan(sent.keyFramesEncoded, 0)
    XCTAssertGreaterThan(sent.audioFramesEncoded, 50)
    XCTAssertGreaterThan(sent.summary.currentVideoBitrate, 0)
    XCTAssertGreaterThan(got.summary.packetsReceived, 30)
    XCTAssertGreaterThan(got.summary.currentVideoBitrate, 50_000)
    XCTAssertGreaterThan(got.summary.bytesReceived, 10_000)
    XCTAssertGreaterThanOrEqual(got.framesDecoded, 30)
    XCTAssertGreaterThan(got.keyFramesDecoded, 0)
    XCTAssertLessThan(got.keyFramesDecoded, got.framesDecoded)
    XCTAssertGreaterThanOrEqual(sent.keyFrameRequestsReceived, sent.keyFrameRequests)
    XCTAssertGreaterThan(got.audioFramesDecoded, 50)
    // Codec CPU times: counted on every codec call, and never more than the whole process used.
    var processTime = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &processTime)
    let processSeconds = Double(processTime.tv_sec) + Double(processTime.tv_nsec) * 1e-9
    for (name, value) in [
      ("VP8 encode", sent.videoEncodeCPUTime), ("Opus encode", sent.audioEncodeCPUTime),
      ("virtual sources", sent.sourceCPUTime), ("VP8 decode", got.videoDecodeCPUTime),
      ("Opus decode", got.audioDecodeCPUTime),
    ] {
      XCTAssertGreaterThan(value, 0, name)
      XCTAssertLessThan(value, processSeconds, name)
    }
    XCTAssertEqual(got.videoEncodeCPUTime, 0, "a player encodes nothing")
    XCTAssertEqual(sent.videoDecodeCPUTime, 0, "a publisher decodes nothing")
    XCTAssertGreaterThan(relay.relayedRTCP.value, 0)
    // Transport-wide congestion control: the player reports arrivals, the publisher's
    // estimator takes them.
    XCTAssertGreaterThan(got.transportFeedbackSent, 0)
    XCTAssertGreaterThan(sent.transportFeedbackReceived, 0)
    XCTAssertTrue(publishOffer.contains("transport-wide-cc"))
    let summary = BackendTestBox<MediaConnectionStats?>(nil)
    player.stats { value in summary.mutate { $0 = value } }
    waitForBackend("stats") { summary.value != nil }
    XCTAssertGreaterThan(summary.value?.bytesReceived ?? 0, 0)

    // Close releases the sockets (their ports can be bound again) and stops rendering.
    let addresses = publisher.localAddresses + player.localAddresses
    XCTAssertFalse(addresses.isEmpty)
    publisher.close()
    player.close()
    publisher.close()
    XCTAssertTrue(publisher.isClosed)
    XCTAssertEqual(publishStates.value.last, .closed)
    XCTAssertEqual(playStates.value.last, .closed)
    relay.close()
    let countAfterClose = received.value.count
    Thread.sleep(forTimeInterval: 0.2)
    XCTAssertEqual(received.value.count, countAfterClose, "no frames after close")
    for address in addresses {
      let rebound: Bool = loop.submit {
        guard
          let socket = try? EventLoopUDPSocket(
            loop: loop, bindingTo: address, onDatagram: { _, _ in })
        else { return false }
        socket.close()
        return true
      }
      XCTAssertTrue(rebound, "port of \(address) released")
    }
    let failure = BackendTestBox<Result<String, MediaBackendError>?>(nil)
    publisher.createOffer { value in failure.mutate { $0 = value } }
    waitForBackend("offer after close") { failure.value != nil }
    if case .failure(let error) = failure.value {
      XCTAssertEqual(error, .closed)
    } else {
      XCTFail("offer after close must fail")
    }
  }
}

/// Answers the connection must refuse or narrow.
final class NativeMediaBackendAnswerTests: XCTestCase {
  /// An answer whose sections carry none of our codecs is rejected with a reason; garbage too.
  func testAnswerWithoutCommonCodecIsRejected() throws {
    let loop = EventLoop(label: "NativeMediaBackendAnswerTests")
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: loop, peerConnection: .loopback))
    let relay = LoopbackRelay(loop: loop)
    defer { relay.close() }
    let publisher = try backend.makeConnection(
      MediaConnectionRequest(
        direction: .publish, audio: .init(), video: .init(maxWidth: 320, maxHeight: 240))
    ) { _ in }
    defer { publisher.close() }
    let answer = try relay.answerPublisher(try offer(of: publisher))
    // The same answer with Opus and VP8 renamed to codecs we do not have.
    let foreign = answer.replacingOccurrences(of: "opus/48000", with: "ISAC/16000")
      .replacingOccurrences(of: "VP8/90000", with: "VP9/90000")
      .replacingOccurrences(of: "H264/90000", with: "VP9/90000")
    XCTAssertThrowsError(try apply(answer: foreign, to: publisher)) { error in
      guard case .answerRejected(let reason) = error as? MediaBackendError else {
        return XCTFail("\(error)")
      }
      XCTAssertTrue(reason.contains("no common codec"), reason)
    }

    let other = try backend.makeConnection(
      MediaConnectionRequest(direction: .play, audio: .init(), video: nil)
    ) { _ in }
    defer { other.close() }
    _ = try offer(of: other)
    XCTAssertThrowsError(try apply(answer: "v=0\r\nthis is not SDP", to: other)) { error in
      guard case .answerRejected = error as? MediaBackendError else {
        return XCTFail("\(error)")
      }
    }
  }
}
