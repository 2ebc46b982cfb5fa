import Foundation
import XCTest

@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// A media file that opens but never yields a sample (a truncated download, a header alone):
/// the publishing connection fails with `captureDeviceLost` and the file's reason, instead of
/// staying connected and sending nothing for as long as the app waits.
final class EmptyMediaFileSourceTests: XCTestCase {
  func testATruncatedFileFailsThePublisherWithItsReason() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "truncated-file-\(UUID().uuidString).y4m")
    defer { try? FileManager.default.removeItem(at: url) }
    let camera = VirtualCamera(width: 320, height: 240, frameRate: 30)
    let writer = try Y4MWriter(url: url, width: 320, height: 240, frameRate: 30)
    try writer.write(camera.frame(1))
    try writer.close()
    // The header and half the first frame: FFmpeg opens it, then finds no whole picture.
    let whole = try Data(contentsOf: url)
    let header = try XCTUnwrap(whole.firstIndex(of: 0x0A)) + 1
    try whole.prefix(header + 6 + 320 * 240 / 2).write(to: url)

    let request = MediaConnectionRequest(
      direction: .publish, audio: nil,
      video: .init(
        deviceID: NativeMediaDevices.filePrefix + url.path, maxWidth: 320, maxHeight: 240,
        maxFrameRate: 30))
    let call = try LoopbackCall(publish: request)
    defer { call.close() }
    try call.connectPublisher(self)
    waitForBackend("the publisher fails") {
      if case .failed = call.publishStates.value.last { return true }
      return false
    }
    guard case .failed(.captureDeviceLost(let kind, let reason)) = call.publishStates.value.last
    else { return XCTFail("\(call.publishStates.value)") }
    XCTAssertEqual(kind, .video)
    XCTAssertEqual(reason, "file \(url.path): no picture could be decoded")
    XCTAssertEqual(call.publisher.failureReason, reason)
  }
}
