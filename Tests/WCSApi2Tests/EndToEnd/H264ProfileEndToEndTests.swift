import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// `FPWCSApi2StreamOptions.h264Profile`: a stream published in main profile (`4d001f`) through
/// the local server's relay (no transcoding) reaches a player that offers main too, which
/// decodes the camera's pictures; the server's recording of it is main profile.
final class H264ProfileEndToEndTests: XCTestCase {
  static let width = 320
  static let height = 240

  func testMainProfilePublishedThroughTheRelayIsDecodedByAPlayer() async throws {
    let records = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-h264main-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: records) }
    let server = try WCSLocalServer.startForTest("h264-main") {
      $0.recordsDirectory = records.path
    }
    defer { server.stop() }
    let session = try await FPWCSApi2.connectedSession(to: server)
    defer { session.disconnect() }
    let name = "h264main-\(UUID().uuidString.prefix(6).lowercased())"

    let constraints = FPWCSApi2MediaConstraints.virtualDevices(
      width: Self.width, height: Self.height, frameRate: 15, audio: false)
    let publishOptions = FPWCSApi2StreamOptions()
    publishOptions.name = name
    publishOptions.constraints = constraints
    publishOptions.record = true
    publishOptions.preferredVideoCodec = "H264"
    publishOptions.stripCodecs = ["VP8"]
    publishOptions.h264Profile = .main
    let publisher = try session.createStream(publishOptions)
    try await publisher.publish()

    let pictures = Mutex<[I420Image]>([])
    let playOptions = FPWCSApi2StreamOptions()
    playOptions.name = name
    playOptions.h264Profile = .main
    playOptions.display = VideoFrameCallbackRenderer { frame in
      guard let image = I420Image(frame) else { return }
      pictures.withLock { $0.append(image) }
    }
    let player = try session.createStream(playOptions)
    try await player.play()
    try await waitFor("ten main-profile pictures played") { pictures.withLock { $0.count } >= 10 }
    try assertCameraPictures(pictures.withLock { $0 }, width: Self.width, height: Self.height)
    XCTAssertEqual(stats(publisher)?.detailed?.videoCodec, "H264")

    try player.stop()
    try publisher.stop()
    try await waitFor("UNPUBLISHED with a record name") {
      publisher.getStatus() == .fpwcsStreamStatusUnpublished && publisher.getRecordName() != nil
    }
    let path = records.appendingPathComponent(try XCTUnwrap(publisher.getRecordName())).path
    try await waitFor("the record file") { FileManager.default.fileExists(atPath: path) }
    XCTAssertEqual(try Self.videoProfile(path), "Main")
  }

  /// ffprobe's name of the H.264 profile in the file's SPS.
  private static func videoProfile(_ path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
    process.arguments = [
      "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=profile", "-of",
      "default=noprint_wrappers=1:nokey=1", path,
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0)
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }
}
