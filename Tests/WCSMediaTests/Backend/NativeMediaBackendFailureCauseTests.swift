import XCTest

@testable import WCSEngine
@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSMediaSeam

/// How a PeerConnection failure becomes the `MediaConnectionFailure` WCSApi2 sees, and the
/// state's helpers.
final class NativeMediaBackendFailureCauseTests: XCTestCase {
  func testPeerConnectionErrorsMapToCauses() throws {
    let loop = EventLoop(label: "FailureCause")
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(loop: loop, systemDevices: nil))
    let connection = try XCTUnwrap(
      try backend.makeConnection(
        MediaConnectionRequest(direction: .publish, audio: .init(), video: nil),
        onStateChange: { _ in }) as? NativeMediaConnection)
    defer { connection.close() }
    let before = loop.submit {
      [
        connection.failure(of: .iceFailed), connection.failure(of: .dtls(.missingPeerCertificate)),
        connection.failure(of: .incompatibleSetup(reason: "both passive")),
      ]
    }
    XCTAssertEqual(
      before,
      [
        .noCandidatePair(
          tried:
            "local none; remote none; UDP blocked? configure TURN over TCP (turn:host?transport=tcp or turns:)"
        ), .dtls("\(DTLSError.missingPeerCertificate)"),
        .transport("\(PeerConnectionError.incompatibleSetup(reason: "both passive"))"),
      ])
    let after = loop.submit {
      connection.mediaStarted = true
      return connection.failure(of: .iceFailed)
    }
    XCTAssertEqual(after, .consentExpired, "ICE failing once media flowed is lost consent")
  }

  func testStateHelpersAndDescriptions() {
    let lost = MediaConnectionState.failed(
      .captureDeviceLost(.video, "camera /dev/video0 was lost"))
    XCTAssertTrue(lost.isFailed)
    XCTAssertEqual(lost.failure, .captureDeviceLost(.video, "camera /dev/video0 was lost"))
    XCTAssertEqual(lost.description, "failed (camera lost: camera /dev/video0 was lost)")
    XCTAssertEqual(
      MediaConnectionState.failed(.captureDeviceLost(.audio, "server died")).description,
      "failed (microphone lost: server died)")
    XCTAssertEqual(
      MediaConnectionState.failed(.consentExpired).description, "failed (ICE consent expired)")
    XCTAssertNil(MediaConnectionState.connected.failure)
    XCTAssertFalse(MediaConnectionState.closed.isFailed)
    XCTAssertNotEqual(MediaConnectionState.failed(.ice), .failed(.consentExpired))
  }
}
