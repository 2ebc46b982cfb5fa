import Foundation
import Synchronization
import TestSupport
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// A file source whose H.264 the answer accepts is published as it is (issue 28): no decode,
/// no encode, the file's access units through the local server's relay to a player that
/// decodes the very pictures the file holds. A file the negotiated profile does not cover is
/// decoded and encoded as before.
final class H264FilePassThroughEndToEndTests: XCTestCase {
  static let width = 320
  static let height = 240
  static let frameRate = 15
  /// Two seconds, an IDR every ten pictures: the player joins within the first loops.
  static let frames = 30

  private var directory: URL!

  override func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-h264-pass-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDown() {
    try? FileManager.default.removeItem(at: directory)
  }

  private func makeFile(profile: String) throws -> String {
    let url = directory.appendingPathComponent("\(profile).mp4")
    let camera = VirtualCamera(width: Self.width, height: Self.height)
    try NumberedH264File.make(
      at: url, width: Self.width, height: Self.height, frameRate: Self.frameRate,
      frames: Self.frames, profile: profile, keyFrameInterval: 10
    ) { index in
      let image = camera.frame(index).packed()
      return image.y + image.u + image.v
    }
    return url.path
  }

  /// The file's pictures as FFmpeg decodes them, by index.
  private func decodedPictures(_ path: String) throws -> [I420Image] {
    let reader = try MediaFileReader(path: path, decodeAudio: false)
    var pictures: [I420Image] = []
    while let sample = try reader.nextSample() {
      guard case .video(let frame) = sample else { continue }
      pictures.append(
        try XCTUnwrap(
          I420Image(
            width: frame.width, height: frame.height, y: frame.y, strideY: frame.yStride,
            u: frame.u, strideU: frame.uStride, v: frame.v, strideV: frame.vStride)))
    }
    return pictures
  }

  private struct Played {
    var pictures: [I420Image] = []
    var timestamps: [Int64] = []
  }

  /// Publishes `path` as video only with H.264 preferred and plays it back.
  private func publishAndPlay(
    _ path: String, session: FPWCSApi2Session, pictures count: Int,
    constrain: (FPWCSApi2VideoConstraints) -> Void = { _ in }
  ) async throws -> (publisher: FPWCSApi2Stream, played: Played) {
    let name = "file-\(UUID().uuidString.prefix(6).lowercased())"
    let video = FPWCSApi2VideoConstraints()
    video.deviceID = "file:\(path)"
    constrain(video)
    let constraints = FPWCSApi2MediaConstraints()
    constraints.video = video
    let publishOptions = FPWCSApi2StreamOptions()
    publishOptions.name = name
    publishOptions.constraints = constraints
    publishOptions.preferredVideoCodec = "H264"
    publishOptions.stripCodecs = ["VP8"]
    let publisher = try session.createStream(publishOptions)
    try await publisher.publish()

    let played = Mutex(Played())
    let playOptions = FPWCSApi2StreamOptions()
    playOptions.name = name
    playOptions.display = VideoFrameCallbackRenderer { frame in
      guard let image = I420Image(frame) else { return }
      played.withLock {
        $0.pictures.append(image)
        $0.timestamps.append(frame.timestampNs)
      }
    }
    let player = try session.createStream(playOptions)
    try await player.play()
    try await waitFor("\(count) pictures played", timeout: 20) {
      played.withLock { $0.pictures.count } >= count
    }
    try player.stop()
    return (publisher, played.withLock { $0 })
  }

  func testABaselineFileIsSentAsItIsAndPlayedAsTheFilesPictures() async throws {
    let path = try makeFile(profile: "baseline")
    let filePictures = try decodedPictures(path)
    XCTAssertEqual(filePictures.count, Self.frames)
    let server = try WCSLocalServer.startForTest("h264-pass")
    defer { server.stop() }
    let session = try await FPWCSApi2.connectedSession(to: server)
    defer { session.disconnect() }

    // Over a loop of the file: its timestamps go on across the loop.
    let (publisher, played) = try await publishAndPlay(
      path, session: session, pictures: Self.frames + 10)
    var numbers: [Int] = []
    for picture in played.pictures {
      let number = Int(try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: picture)))
      XCTAssertLessThan(number, Self.frames)
      // The very picture the file decodes to: the bitstream was not touched.
      let psnr = try XCTUnwrap(picture.psnr(to: filePictures[number]))
      XCTAssertGreaterThan(psnr, 60, "picture \(number)")
      numbers.append(number)
    }
    // Consecutive pictures are consecutive file pictures (modulo the loop), 1/15 s apart in
    // RTP time, across the loop too.
    var loops = 0
    for index in 1..<numbers.count {
      let step = (numbers[index] - numbers[index - 1] + Self.frames) % Self.frames
      if numbers[index] < numbers[index - 1] { loops += 1 }
      let gap = Double(played.timestamps[index] - played.timestamps[index - 1]) / 1e9
      XCTAssertEqual(gap, Double(step) / 15, accuracy: 0.002, "after picture \(numbers[index - 1])")
    }
    XCTAssertGreaterThanOrEqual(loops, 1, "\(numbers)")

    let detailed = try XCTUnwrap(stats(publisher)?.detailed)
    XCTAssertEqual(detailed.videoCodec, "H264")
    XCTAssertEqual(detailed.encoderImplementation, "passthrough")
    XCTAssertNil(detailed.passThroughRefusal)
    XCTAssertEqual(detailed.framesEncoded, 0, "the encoder never ran")
    XCTAssertEqual(detailed.videoEncodeCPUTime, 0)
    XCTAssertGreaterThanOrEqual(detailed.framesPassedThrough, Self.frames + 10)
    XCTAssertGreaterThanOrEqual(detailed.keyFramesPassedThrough, 4)
    // The relay asked for a key frame when the player joined: the file's next IDR served it.
    XCTAssertGreaterThanOrEqual(detailed.keyFrameRequestsAwaitingIDR, 1)
  }

  func testSwitchingFromAPassedThroughFileToTheCameraEncodesAgain() async throws {
    let path = try makeFile(profile: "baseline")
    let backend = try XCTUnwrap(WCSApi2Environment.sharedMediaBackend as? NativeMediaBackend)
    // Listed as a camera, so the switch cycles between it and the virtual camera.
    backend.addFileSource(path: path)
    defer { backend.removeFileSource(path: path) }
    let server = try WCSLocalServer.startForTest("h264-switch")
    defer { server.stop() }
    let session = try await FPWCSApi2.connectedSession(to: server)
    defer { session.disconnect() }

    let (publisher, _) = try await publishAndPlay(path, session: session, pictures: 5)
    XCTAssertEqual(stats(publisher)?.detailed?.encoderImplementation, "passthrough")
    publisher.switchCamera()
    try await waitFor("the camera's pictures encoded") {
      (self.stats(publisher)?.detailed?.framesEncoded ?? 0) >= 10
    }
    let detailed = try XCTUnwrap(stats(publisher)?.detailed)
    XCTAssertEqual(detailed.encoderImplementation, "OpenH264")
    XCTAssertGreaterThanOrEqual(detailed.keyFramesEncoded, 1, "the switch asked the encoder")
    let passed = detailed.framesPassedThrough
    XCTAssertGreaterThanOrEqual(passed, 5)
    try await Task.sleep(for: .milliseconds(300))
    XCTAssertEqual(stats(publisher)?.detailed?.framesPassedThrough, passed, "the file stopped")
  }

  func testAHighProfileFileIsTranscodedUnderTheBaselineOffer() async throws {
    let path = try makeFile(profile: "high")
    let server = try WCSLocalServer.startForTest("h264-high")
    defer { server.stop() }
    let session = try await FPWCSApi2.connectedSession(to: server)
    defer { session.disconnect() }

    let (publisher, played) = try await publishAndPlay(
      path, session: session, pictures: 10
    ) {
      $0.minWidth = Self.width
      $0.maxWidth = Self.width
      $0.minHeight = Self.height
      $0.maxHeight = Self.height
      $0.maxFrameRate = Self.frameRate
    }
    for picture in played.pictures {
      let number = Int(try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: picture)))
      let source = VirtualCamera(width: Self.width, height: Self.height).frame(number)
      XCTAssertGreaterThan(try XCTUnwrap(picture.psnr(to: source)), 28, "picture \(number)")
    }
    let detailed = try XCTUnwrap(stats(publisher)?.detailed)
    XCTAssertEqual(detailed.encoderImplementation, "OpenH264")
    XCTAssertEqual(
      detailed.passThroughRefusal?.hasPrefix("the file's profile-level-id 64"), true,
      detailed.passThroughRefusal ?? "no refusal")
    XCTAssertGreaterThanOrEqual(detailed.framesEncoded, 10)
    XCTAssertEqual(detailed.framesPassedThrough, 0)
  }
}
