import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// ICE-TCP (RFC 6544) from the SDK to the local server in passive-TCP mode
/// (`WCSServerConfiguration.iceTCPTransport`, `wcs-local-server --ice-tcp`), as a WCS set up
/// for media over TCP: `transport = .TCP` publishes and plays over TCP, the played pictures are
/// the virtual camera's (found by frame number, compared by PSNR); a UDP stream fails at once
/// with a reason that names the cure.
final class ICETCPEndToEndTests: XCTestCase {
  static let width = 320
  static let height = 240

  private func startServer() throws -> WCSLocalServer {
    try WCSLocalServer.startForTest("icetcp") { $0.signaling.iceTCPTransport = true }
  }

  private func connect(_ server: WCSLocalServer) async throws -> FPWCSApi2Session {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = server.wsURL
    options.appKey = "defaultApp"
    options.bandwidthSampleInterval = 0
    let session = try FPWCSApi2.createSession(options)
    try await session.connect()
    return session
  }

  private func publishOptions(_ name: String, transport: kFPWCSTransport)
    -> FPWCSApi2StreamOptions
  {
    let constraints = FPWCSApi2MediaConstraints.virtualDevices(
      width: Self.width, height: Self.height, frameRate: 15, audio: false)
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.constraints = constraints
    options.transport = transport
    return options
  }

  func testTCPTransportPublishesAndPlaysOverICETCPWithTheCameraPictures() async throws {
    let server = try startServer()
    defer { server.stop() }
    let session = try await connect(server)
    defer { session.disconnect() }
    let name = "icetcp-\(UUID().uuidString.prefix(6).lowercased())"
    let publisher = try session.createStream(publishOptions(name, transport: .fpwcsTransportTCP))
    try await publisher.publish()

    let pictures = Mutex<[I420Image]>([])
    let playOptions = FPWCSApi2StreamOptions()
    playOptions.name = name
    playOptions.transport = .fpwcsTransportTCP
    playOptions.display = VideoFrameCallbackRenderer { frame in
      guard let image = I420Image(frame) else { return }
      pictures.withLock { $0.append(image) }
    }
    let player = try session.createStream(playOptions)
    try await player.play()
    try await waitFor("ten pictures played over ICE-TCP") { pictures.withLock { $0.count } >= 10 }

    try assertCameraPictures(pictures.withLock { $0 }, width: Self.width, height: Self.height)

    for stream in [publisher, player] {
      let ice = try XCTUnwrap(stats(stream)?.ice)
      let local = try XCTUnwrap(ice.localCandidate)
      XCTAssertEqual(local.candidateType, "host")
      XCTAssertEqual(local.transportProtocol, "tcp")
      XCTAssertEqual(local.port, UInt16(9))
      let remote = try XCTUnwrap(ice.remoteCandidate)
      XCTAssertEqual(remote.transportProtocol, "tcp")
      XCTAssertEqual(remote.address, "127.0.0.1")
      XCTAssertNotEqual(remote.port, UInt16(9))
    }
  }

  func testUDPStreamAgainstTCPOnlyServerFailsWithTheNoPairReason() async throws {
    let server = try startServer()
    defer { server.stop() }
    let session = try await connect(server)
    defer { session.disconnect() }
    let publisher = try session.createStream(
      publishOptions("udp-only", transport: .fpwcsTransportUDP))
    do {
      try await publisher.publish()
    } catch {}
    try await waitFor("UDP publisher failed", timeout: 10) {
      publisher.getStatus() == .fpwcsStreamStatusFailed
    }
    let info = try XCTUnwrap(publisher.getInfo())
    XCTAssertTrue(
      info.hasPrefix("Failed by ICE timeout: no ICE candidate pair succeeded: local "), info)
    XCTAssertTrue(
      info.hasSuffix(
        "host udp; remote 1 host tcp; the server offers ICE-TCP only: publish/play with"
          + " transport TCP"), info)
  }
}
