import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// Local devices seen from the API: a lost camera or microphone fails a publishing stream
/// locally (the server is told and cannot fail it twice); other media failures stay the
/// server's call; the loudspeaker switch and `audioOutput` reach the play connection.
final class DeviceTests: XCTestCase {
  private func publishing(_ h: Harness) throws -> (
    FPWCSApi2Stream, StatusRecorder, FakeMediaConnection
  ) {
    h.establish()
    let (stream, recorder) = try h.makeStream("cam")
    try stream.publish()
    h.settle()
    h.streamStatus(stream, "PENDING")
    h.answer(stream)
    h.streamStatus(stream, "PUBLISHING")
    let connection = try XCTUnwrap(h.backend.connections.first)
    XCTAssertEqual(stream.getConnectionState(), .connected)
    return (stream, recorder, connection)
  }

  func testLostCameraFailsThePublisherLocallyOnce() throws {
    let h = try Harness()
    let (stream, recorder, connection) = try publishing(h)
    let reason = "camera /dev/video0 was lost: noDevice"

    connection.fail(.captureDeviceLost(.video, reason))
    h.settle()
    XCTAssertEqual(
      recorder.all,
      [.fpwcsStreamStatusPending, .fpwcsStreamStatusPublishing, .fpwcsStreamStatusFailed])
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(stream.getInfo(), "Camera lost: \(reason)")
    XCTAssertEqual(stream.getConnectionState(), .failed(.captureDeviceLost(.video, reason)))
    let unpublish = try XCTUnwrap(h.sent("unPublishStream").first)
    XCTAssertEqual(h.sent("unPublishStream").count, 1)
    XCTAssertEqual(unpublish["mediaSessionId"]?.stringValue, stream.getStreamID())
    XCTAssertEqual(unpublish["status"], "PUBLISHING", "sent before the local FAILED")
    XCTAssertTrue(connection.isClosed, "the media connection is closed")
    XCTAssertTrue(h.session.getStreams().isEmpty, "a failed stream leaves the session")

    // The server's own end of the stream (and a repeated failure) change nothing: FAILED is final.
    h.streamStatus(stream, "UNPUBLISHED", info: "Stopped by user")
    h.streamStatus(stream, "FAILED", info: "Failed by ICE timeout")
    connection.fail(.captureDeviceLost(.video, reason))
    h.settle()
    XCTAssertEqual(
      recorder.all,
      [.fpwcsStreamStatusPending, .fpwcsStreamStatusPublishing, .fpwcsStreamStatusFailed])
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusFailed)
    XCTAssertEqual(stream.getInfo(), "Camera lost: \(reason)")
    XCTAssertEqual(h.sent("unPublishStream").count, 1)
  }

  func testLostMicrophoneSaysMicrophoneAndWakesTheAsyncPublisher() async throws {
    let h = try Harness()
    h.establish()
    let (stream, recorder) = try h.makeStream("mic")
    async let published: Void = stream.publish()
    while h.sent("publishStream").isEmpty { try await Task.sleep(nanoseconds: 1_000_000) }
    h.answer(stream)
    try XCTUnwrap(h.backend.connections.first).fail(
      .captureDeviceLost(.audio, "PulseAudio: Connection terminated"))
    h.settle()
    do {
      try await published
      XCTFail("publish must throw")
    } catch let error as WCSError {
      XCTAssertEqual(
        error,
        .streamFailed(
          statusInfo: .fpwcsStreamStatusInfoUnknown,
          info: "Microphone lost: PulseAudio: Connection terminated"))
    }
    XCTAssertEqual(recorder.all, [.fpwcsStreamStatusFailed], "still PENDING for the server")
    XCTAssertEqual(h.sent("unPublishStream").first?["status"], "PENDING")
  }

  func testTransportFailuresAreLeftToTheServer() throws {
    let h = try Harness()
    let (stream, recorder, connection) = try publishing(h)
    // Lost consent restarts ICE instead (ICERestartTests).
    for failure: MediaConnectionFailure in [.ice, .dtls("handshake timeout")] {
      connection.fail(failure)
      h.settle()
      XCTAssertEqual(stream.getConnectionState(), .failed(failure))
    }
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusPublishing)
    XCTAssertEqual(h.sent("unPublishStream").count, 0)
    XCTAssertFalse(connection.isClosed)
    h.streamStatus(stream, "FAILED", info: "Failed by ICE timeout")
    XCTAssertEqual(
      recorder.all,
      [.fpwcsStreamStatusPending, .fpwcsStreamStatusPublishing, .fpwcsStreamStatusFailed])
    XCTAssertEqual(stream.getStatusInfo(), .fpwcsStreamStatusInfoFailedByIceTimeout)
  }

  func testLoudspeakerIsRememberedBeforePlayAndAppliedWhilePlaying() throws {
    let h = try Harness()
    h.establish()
    let (player, _) = try h.makeStream("cam")
    XCTAssertEqual(player.getAudioOutput(), .none)
    try player.setLoudspeakerStatus(true)
    XCTAssertEqual(player.getAudioOutput(), .defaultDevice)
    try player.play()
    h.settle()
    XCTAssertEqual(h.backend.requests.first?.audio?.output, .defaultDevice, "asked at creation")
    h.answer(player)
    h.streamStatus(player, "PLAYING")
    let connection = try XCTUnwrap(h.backend.connections.first)

    try player.setLoudspeakerStatus(false)
    try WCSStream(player).setAudioOutput(.device("alsa_output.usb"))
    XCTAssertEqual(connection.audioOutputs, [.none, .device("alsa_output.usb")])
    XCTAssertEqual(player.getAudioOutput(), .device("alsa_output.usb"))

    connection.state.withLock {
      $0.audioOutputError = .audioOutputUnavailable("noSoundServer(reason: \"no PulseAudio\")")
    }
    XCTAssertThrowsError(try player.setLoudspeakerStatus(true)) { error in
      XCTAssertEqual(
        error as? WCSError,
        .media(.audioOutputUnavailable("noSoundServer(reason: \"no PulseAudio\")")))
    }
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusPlaying, "the stream goes on")
    XCTAssertFalse(connection.isClosed)

    try player.stop()
    // Stopping, the server's STOPPED not yet in: the connection is gone, so nothing would open.
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusPlaying)
    XCTAssertThrowsError(try player.setLoudspeakerStatus(true)) { error in
      XCTAssertEqual(
        error as? WCSError,
        .invalidStreamState(
          .fpwcsStreamStatusPlaying,
          operation: "play audio on a sound output (the stream is stopping)"))
    }
    h.streamStatus(player, "STOPPED")
    XCTAssertThrowsError(try player.setLoudspeakerStatus(true)) { error in
      XCTAssertEqual(
        error as? WCSError,
        .invalidStreamState(.fpwcsStreamStatusStopped, operation: "play audio on a sound output"))
    }
    XCTAssertNoThrow(try player.setLoudspeakerStatus(false), "turning it off always works")
  }

  /// Two threads choose the output at once while the first device is slow to open: the calls
  /// take turns, so the output remembered by the stream is the one the connection got last.
  func testConcurrentOutputChoicesEndConsistent() throws {
    let h = try Harness()
    h.establish()
    let (player, _) = try h.makeStream("cam")
    try player.play()
    h.settle()
    h.answer(player)
    h.streamStatus(player, "PLAYING")
    let connection = try XCTUnwrap(h.backend.connections.first)
    let gate = AudioOutputGate(.defaultDevice)
    connection.state.withLock { $0.audioOutputGate = gate }
    let done = DispatchGroup()
    DispatchQueue.global().async(group: done) { try? player.setLoudspeakerStatus(true) }
    gate.entered.wait()
    let second = DispatchSemaphore(value: 0)
    DispatchQueue.global().async(group: done) {
      try? player.setLoudspeakerStatus(false)
      second.signal()
    }
    // The second call must wait for the first (it may not finish while the first is held).
    XCTAssertEqual(second.wait(timeout: .now() + 0.2), .timedOut)
    gate.release.signal()
    XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    XCTAssertEqual(connection.audioOutputs, [.defaultDevice, .none])
    XCTAssertEqual(player.getAudioOutput(), .none)
  }

  func testOptionsAskForAnOutputAndPublishersRefuseIt() throws {
    let h = try Harness()
    h.establish()
    let options = FPWCSApi2StreamOptions()
    options.name = "cam"
    options.audioOutput = .device("hw:1,0")
    let player = try h.session.createStream(options)
    try player.play()
    let publisher = try h.session.createStream(options)
    try publisher.publish()
    h.settle()
    XCTAssertEqual(
      h.backend.requests.map(\.audio?.output),
      [.device("hw:1,0"), MediaConnectionRequest.AudioOutput.none])
    XCTAssertThrowsError(try publisher.setLoudspeakerStatus(true)) { error in
      guard case .invalidStreamState(_, let operation) = error as? WCSError else {
        return XCTFail("\(error)")
      }
      XCTAssertTrue(operation.contains("published"), operation)
    }
    XCTAssertEqual(h.backend.connections[1].audioOutputs, [])
  }
}
