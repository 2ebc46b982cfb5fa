import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// Snapshots of a virtual camera stream through the local server (`snapshot` →
/// `snapshotCompleted`, wcs-protocol.md §3, §4.6) and from the SDK's own last played frame:
/// the file's picture is the camera's, found by its frame number and compared by PSNR.
final class SnapshotEndToEndTests: XCTestCase {
  static let width = 320
  static let height = 240

  private func startServer(snapshots: Bool = true) throws -> WCSLocalServer {
    var configuration = WCSLocalServer.Configuration()
    configuration.snapshots = snapshots
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-snapshots-\(UUID().uuidString.prefix(8))").path
    configuration.logSink = { _ in }
    return try WCSLocalServer.start(configuration)
  }

  private func connect(_ server: WCSLocalServer) async throws -> FPWCSApi2Session {
    try await FPWCSApi2.connectedSession(to: server)
  }

  private func publish(_ name: String, on session: FPWCSApi2Session, h264: Bool = false)
    async throws -> FPWCSApi2Stream
  {
    let video = FPWCSApi2VideoConstraints()
    video.deviceID = "virtual:camera"
    video.minWidth = Self.width
    video.maxWidth = Self.width
    video.minHeight = Self.height
    video.maxHeight = Self.height
    video.maxFrameRate = 15
    let constraints = FPWCSApi2MediaConstraints()
    constraints.video = video
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.constraints = constraints
    if h264 {
      options.preferredVideoCodec = "H264"
      options.stripCodecs = ["VP8"]
    }
    let stream = try session.createStream(options)
    try await stream.publish()
    return stream
  }

  /// The camera picture `image` shows (its stamped frame number) and the PSNR between them.
  private func compareWithCamera(_ image: I420Image, _ label: String) throws -> Double {
    XCTAssertEqual([image.width, image.height], [Self.width, Self.height], label)
    let number = try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: image), "\(label) number")
    let source = VirtualCamera(width: Self.width, height: Self.height).frame(Int(number))
    let psnr = try XCTUnwrap(image.psnr(to: source))
    XCTAssertGreaterThan(psnr, 28, "\(label): PSNR \(psnr) dB against camera frame \(number)")
    return psnr
  }

  func testServerSnapshotOfAnH264StreamIsAPNGOfThePublishedPicture() async throws {
    let server = try startServer()
    defer { server.stop() }
    let session = try await connect(server)
    defer { session.disconnect() }
    let name = "snap-h264-\(UUID().uuidString.prefix(6).lowercased())"
    _ = try await publish(name, on: session, h264: true)
    let options = FPWCSApi2StreamOptions()
    options.name = name
    let png = try await session.createStream(options).snapshot(timeout: 10)
    XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    _ = try compareWithCamera(try PictureFile.decodePNG([UInt8](png)), "H.264 snapshot")
  }

  func testServerSnapshotIsAPNGOfThePublishedPicture() async throws {
    let server = try startServer()
    defer { server.stop() }
    let session = try await connect(server)
    defer { session.disconnect() }
    let name = "snap-\(UUID().uuidString.prefix(6).lowercased())"
    _ = try await publish(name, on: session)

    // A NEW stream object with the name: the Web SDK's usual way.
    let options = FPWCSApi2StreamOptions()
    options.name = name
    let asker = try session.createStream(options)
    let events = Mutex<[String]>([])
    asker.onStreamEvent { event in events.withLock { $0.append(event?.type ?? "nil") } }
    let png = try await asker.snapshot(timeout: 10)
    XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    _ = try compareWithCamera(try PictureFile.decodePNG([UInt8](png)), "server snapshot")
    XCTAssertEqual(asker.getStatus(), .fpwcsStreamStatusNew, "a snapshot-only stream stays NEW")
    try await waitFor("the event reached onStreamEvent too") {
      events.withLock { $0 } == ["snapshotCompleted"]
    }

    // A later snapshot shows a later picture.
    let first = try XCTUnwrap(
      VirtualCamera.decodeFrameNumber(from: PictureFile.decodePNG([UInt8](png))))
    try await Task.sleep(nanoseconds: 500_000_000)
    let again = try PictureFile.decodePNG([UInt8](try await asker.snapshot(timeout: 10)))
    XCTAssertGreaterThan(try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: again)), first)
  }

  func testServerSnapshotOfAnUnknownStreamFails() async throws {
    let server = try startServer()
    defer { server.stop() }
    let session = try await connect(server)
    defer { session.disconnect() }
    let options = FPWCSApi2StreamOptions()
    options.name = "nobody-publishes-this"
    let asker = try session.createStream(options)
    do {
      _ = try await asker.snapshot(timeout: 10)
      XCTFail("a snapshot of nothing succeeded")
    } catch let error as FPWCSApi2SnapshotError {
      XCTAssertEqual(error, .failed(info: "Stream not found"))
    }
  }

  /// `--no-snapshots`: a published stream's snapshot is refused with the server's reason.
  func testServerWithSnapshotsOffRefusesWithItsReason() async throws {
    let server = try startServer(snapshots: false)
    defer { server.stop() }
    let session = try await connect(server)
    defer { session.disconnect() }
    let name = "snap-off-\(UUID().uuidString.prefix(6).lowercased())"
    _ = try await publish(name, on: session)
    let options = FPWCSApi2StreamOptions()
    options.name = name
    let asker = try session.createStream(options)
    do {
      _ = try await asker.snapshot(timeout: 10)
      XCTFail("a snapshot succeeded with snapshots off")
    } catch let error as FPWCSApi2SnapshotError {
      XCTAssertEqual(error, .failed(info: LocalServerRelayEngine.snapshotsOffReason))
    }
  }

  func testLocalSnapshotOfAPlayedStreamIsItsLastFrameAsPNGAndJPEG() async throws {
    let server = try startServer()
    defer { server.stop() }
    let session = try await connect(server)
    defer { session.disconnect() }
    let name = "local-\(UUID().uuidString.prefix(6).lowercased())"
    _ = try await publish(name, on: session)
    let frames = Mutex(0)
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.display = VideoFrameCallbackRenderer { _ in frames.withLock { $0 += 1 } }
    let player = try session.createStream(options)
    XCTAssertThrowsError(try player.localSnapshot()) { error in
      XCTAssertEqual(error as? FPWCSApi2SnapshotError, .noPicture)
    }
    try await player.play()
    try await waitFor("ten frames played") { frames.withLock { $0 } >= 10 }

    let png = try player.localSnapshot(format: .png)
    let pngPicture = try PictureFile.decodePNG([UInt8](png))
    _ = try compareWithCamera(pngPicture, "local PNG")
    // The picture is the newest one: at most the frame played since.
    let last = try XCTUnwrap(player.lastPlayedPicture)
    XCTAssertLessThanOrEqual(
      try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: pngPicture)),
      try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: last)))

    let jpeg = try player.localSnapshot(format: .jpeg(quality: 90))
    XCTAssertEqual(Array(jpeg.prefix(2)), [0xFF, 0xD8])
    let jpegPicture = try MJPEGDecoder().decode([UInt8](jpeg))
    _ = try compareWithCamera(jpegPicture, "local JPEG")
  }
}
