import Foundation
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

extension XCTestCase {
  /// Polls `condition` every 20 ms for up to `timeout` seconds (real sockets: no virtual clock);
  /// a failure names `message` at the caller's line.
  func wait(
    _ message: String, timeout: Double = 20, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () -> Bool
  ) {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
      guard Date() < deadline else {
        return XCTFail("timed out: \(message)", file: file, line: line)
      }
      Thread.sleep(forTimeInterval: 0.02)
    }
  }

  /// Checks played pictures against the virtual camera: each `width` × `height`, carrying a
  /// frame number, within 28 dB PSNR of that camera frame, and in camera order.
  func assertCameraPictures(
    _ pictures: [I420Image], width: Int, height: Int, file: StaticString = #filePath,
    line: UInt = #line
  ) throws {
    var numbers: [UInt32] = []
    for picture in pictures {
      XCTAssertEqual([picture.width, picture.height], [width, height], file: file, line: line)
      let number = try XCTUnwrap(
        VirtualCamera.decodeFrameNumber(from: picture), file: file, line: line)
      let source = VirtualCamera(width: width, height: height).frame(Int(number))
      XCTAssertGreaterThan(
        try XCTUnwrap(picture.psnr(to: source)), 28, "frame \(number)", file: file, line: line)
      numbers.append(number)
    }
    XCTAssertEqual(numbers, numbers.sorted(), "pictures in camera order", file: file, line: line)
  }

  /// The stream's `getStats` result, waited for up to 5 s; `nil` when none came.
  func stats(_ stream: FPWCSApi2Stream) -> FPWCSApi2StreamStats? {
    let result = Locked<FPWCSApi2StreamStats?>(nil)
    let done = DispatchSemaphore(value: 0)
    stream.getStats { stats in
      result.withLock { $0 = stats }
      done.signal()
    }
    _ = done.wait(timeout: .now() + 5)
    return result.value
  }
}

extension WCSLocalServer {
  /// The local server on free WebSocket and HTTP ports of 127.0.0.1, quiet, recording into a
  /// fresh temporary directory named after `label`.
  static func startForTest(
    _ label: String, configure: (inout WCSLocalServer.Configuration) -> Void = { _ in }
  ) throws -> WCSLocalServer {
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-\(label)-\(UUID().uuidString.prefix(8))").path
    configuration.logSink = { _ in }
    configure(&configuration)
    return try WCSLocalServer.start(configuration)
  }
}

extension FPWCSApi2 {
  /// A session connected to `server` with the Web SDK's default app key.
  static func connectedSession(to server: WCSLocalServer) async throws -> FPWCSApi2Session {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = server.wsURL
    options.appKey = "defaultApp"
    let session = try FPWCSApi2.createSession(options)
    try await session.connect()
    return session
  }
}

extension FPWCSApi2MediaConstraints {
  /// The virtual camera at exactly `width` × `height` and up to `frameRate` fps, with the
  /// virtual microphone (a 440 Hz tone) unless `audio` is false.
  static func virtualDevices(width: Int, height: Int, frameRate: Int, audio: Bool = true)
    -> FPWCSApi2MediaConstraints
  {
    let video = FPWCSApi2VideoConstraints()
    video.deviceID = "virtual:camera"
    video.minWidth = width
    video.maxWidth = width
    video.minHeight = height
    video.maxHeight = height
    video.maxFrameRate = frameRate
    let constraints = FPWCSApi2MediaConstraints()
    constraints.video = video
    if audio {
      let microphone = FPWCSApi2AudioConstraints()
      microphone.deviceID = "virtual:microphone"
      constraints.audio = microphone
    }
    return constraints
  }
}
