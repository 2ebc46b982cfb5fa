import Foundation
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// A USB camera unplugged while publishing, end to end: the real media engine streams a scripted
/// V4L2 camera to the local server on 127.0.0.1; unplugging it fails the stream on the client
/// with the camera's reason, the server hears `unPublishStream` and drops the stream, and its
/// UNPUBLISHED answer does not reach the app.
final class LostCameraEndToEndTests: XCTestCase {
  func testUnpluggedCameraFailsThePublisherAndTheServerDropsTheStream() throws {
    let server = try WCSLocalServer.startForTest("lost-camera")
    defer { server.stop() }

    let camera = UnpluggableCameraIO()
    let backend = NativeMediaBackend(
      configuration: NativeMediaBackend.Configuration(
        systemDevices: NativeSystemDevices(videoIO: camera, listsMicrophones: false)))
    let options = FPWCSApi2SessionOptions()
    options.urlServer = server.wsURL
    options.mediaBackend = backend
    options.bandwidthSampleInterval = 0
    let session = try FPWCSApi2.createSession(options)
    defer { session.disconnect() }
    session.connect()
    wait("session established") { session.getStatus() == .fpwcsSessionStatusEstablished }

    let streamOptions = FPWCSApi2StreamOptions()
    streamOptions.name = "usb-camera"
    let video = FPWCSApi2VideoConstraints()
    video.deviceID = "v4l2:\(UnpluggableCameraIO.path)"
    video.maxWidth = 320
    video.maxHeight = 240
    let constraints = FPWCSApi2MediaConstraints()
    constraints.video = video
    streamOptions.constraints = constraints
    let stream = try session.createStream(streamOptions)
    let recorder = StatusRecorder(stream)
    try stream.publish()
    wait("publishing") { stream.getStatus() == .fpwcsStreamStatusPublishing }
    wait("the camera streams") { camera.dequeued >= 10 }
    XCTAssertEqual(server.streamCount, 1)

    camera.unplug()
    wait("failed") { stream.getStatus() == .fpwcsStreamStatusFailed }
    let reason = "camera \(UnpluggableCameraIO.path) was lost"
    XCTAssertEqual(stream.getInfo(), "Camera lost: \(reason)")
    XCTAssertEqual(stream.getConnectionState(), .failed(.captureDeviceLost(.video, reason)))
    wait("the server dropped the stream") { server.streamCount == 0 }
    // The server answers `unPublishStream` with UNPUBLISHED: skipped, the stream is gone.
    let answered = "status for unknown stream \(stream.getStreamID())"
    wait("the server's UNPUBLISHED arrived") { session.skippedInputs.contains(answered) }
    session.callbackQueue.sync {}
    // The local server, as WCS, sends no PENDING for a publisher (MockTransport tests cover one).
    XCTAssertEqual(
      recorder.all, [.fpwcsStreamStatusPublishing, .fpwcsStreamStatusFailed],
      "PUBLISHING then one FAILED: the server's end does not fire again")
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertTrue(session.getStreams().isEmpty)
    XCTAssertEqual(session.getStatus(), .fpwcsSessionStatusEstablished, "the session goes on")
  }
}
