import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// H.264 (RFC 6184) from the SDK through the local server's relay (no transcoding) to the SDK:
/// the played pictures are the virtual camera's, found by frame number and compared by PSNR;
/// a player that strips H.264 gets the WCS failure for a stream it cannot take.
final class H264EndToEndTests: XCTestCase {
  static let width = 320
  static let height = 240

  private func startServer() throws -> WCSLocalServer {
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-h264-\(UUID().uuidString.prefix(8))").path
    configuration.logSink = { _ in }
    return try WCSLocalServer.start(configuration)
  }

  private func connect(_ server: WCSLocalServer) async throws -> FPWCSApi2Session {
    try await FPWCSApi2.connectedSession(to: server)
  }

  func testH264PublishedThroughTheRelayIsPlayedAsTheCameraPictures() async throws {
    let server = try startServer()
    defer { server.stop() }
    let session = try await connect(server)
    defer { session.disconnect() }
    let name = "h264-\(UUID().uuidString.prefix(6).lowercased())"

    let constraints = FPWCSApi2MediaConstraints.virtualDevices(
      width: Self.width, height: Self.height, frameRate: 15, audio: false)
    let publishOptions = FPWCSApi2StreamOptions()
    publishOptions.name = name
    publishOptions.constraints = constraints
    publishOptions.preferredVideoCodec = "H264"
    // Only H.264 goes to the server: what it relays can only be H.264.
    publishOptions.stripCodecs = ["VP8"]
    let publisher = try session.createStream(publishOptions)
    try await publisher.publish()

    let pictures = Mutex<[I420Image]>([])
    let playOptions = FPWCSApi2StreamOptions()
    playOptions.name = name
    playOptions.display = VideoFrameCallbackRenderer { frame in
      guard let image = I420Image(frame) else { return }
      pictures.withLock { $0.append(image) }
    }
    let player = try session.createStream(playOptions)
    try await player.play()
    try await waitFor("ten H.264 pictures played") { pictures.withLock { $0.count } >= 10 }

    try assertCameraPictures(pictures.withLock { $0 }, width: Self.width, height: Self.height)

    let vp8Only = FPWCSApi2StreamOptions()
    vp8Only.name = name
    vp8Only.stripCodecs = ["H264"]
    let refused = try session.createStream(vp8Only)
    do {
      try await refused.play()
    } catch {}
    try await waitFor("VP8-only player failed") {
      refused.getStatus() == .fpwcsStreamStatusFailed
    }
    XCTAssertEqual(refused.getInfo(), "Transcoding required, but disabled")
  }
}
