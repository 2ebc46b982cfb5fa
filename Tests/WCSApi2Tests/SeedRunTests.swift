import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// The seed examples (Seeds/*.swift) run against the scripted server and the fake media engine
/// through the default seams, as an app would use them.
final class SeedRunTests: XCTestCase {
  private var server = ScriptedServer()
  private var backend = FakeMediaBackend()

  override func setUp() {
    super.setUp()
    ScriptedServer.clearSessions()
    server = ScriptedServer()
    backend = FakeMediaBackend()
    let server = self.server
    let backend = self.backend
    WCSApi2Environment.transportFactory = { server.makeTransport() }
    WCSApi2Environment.mediaBackendFactory = { backend }
  }

  override func tearDown() {
    WCSApi2Environment.reset()
    super.tearDown()
  }

  func testMediaDevicesSeed() throws {
    let seed = MediaDevicesSeed()
    seed.viewDidLoad()
    XCTAssertEqual(seed.microphone.text, "Tone microphone")
    XCTAssertEqual(seed.camera.text, "Test pattern camera")
    seed.testPressed(0)
    XCTAssertEqual(backend.state.withLock { $0.localMediaOpened }, 1)
    seed.testPressed(0)
    XCTAssertEqual(backend.state.withLock { $0.released }, 1)
    seed.connectPressed(0)
    server.settle()
    XCTAssertEqual(seed.connectButton.title(for: .normal), "DISCONNECT")
    seed.publishPressed(0)
    server.settle()
    XCTAssertEqual(seed.publishButton.title(for: .normal), "STOP")
    let publishRequest = try XCTUnwrap(backend.requests.first)
    XCTAssertEqual(publishRequest.video?.deviceID, "virtual:pattern")
    XCTAssertEqual(publishRequest.video?.maxWidth, 640)
    XCTAssertEqual(publishRequest.video?.maxFrameRate, 30)
    XCTAssertEqual(publishRequest.audio?.useFEC, true)
    XCTAssertTrue(publishRequest.renderer === seed.localDisplay.videoView)
    seed.playPressed(0)
    server.settle()
    XCTAssertEqual(seed.playButton.title(for: .normal), "STOP")
    XCTAssertEqual(backend.requests.last?.direction, .play)
    seed.muteAudioChanged(true)
    seed.publishPressed(0)
    seed.playPressed(0)
    server.settle()
    let sent = try XCTUnwrap(server.last).sentMessages.map(\.name)
    XCTAssertEqual(
      sent,
      [
        "connection", "publishStream", "playStream", "sendStreamEvent", "unPublishStream",
        "stopStream",
      ])
    XCTAssertEqual(seed.publishStream?.getStatus(), .fpwcsStreamStatusUnpublished)
    XCTAssertEqual(seed.playStream?.getStatus(), .fpwcsStreamStatusStopped)
    seed.connectPressed(0)
    server.settle()
    XCTAssertEqual(seed.session?.getStatus(), .fpwcsSessionStatusDisconnected)
  }

  func testStreamRecordingSeedGetsTheRecordName() throws {
    let seed = StreamRecordingSeed()
    XCTAssertNotNil(seed.connect())
    server.settle()
    XCTAssertEqual(server.last?.connectedURL, "ws://127.0.0.1:8080")
    XCTAssertEqual(seed.publishedStreams().count, 1)
    let publish = try XCTUnwrap(
      server.last?.sentMessages.first { $0.name == "publishStream" }?.argument)
    XCTAssertEqual(publish["name"], "testStream")
    XCTAssertEqual(publish["record"], true)
    let id = try XCTUnwrap(publish["mediaSessionId"]?.stringValue)
    XCTAssertEqual(seed.publishedStreams().first.map { try? $0.stop() }.map { _ in true }, true)
    server.settle()
    XCTAssertEqual(seed.recordName, "stream-\(id)-.mp4")
    seed.startButtonStop()
    server.settle()
    XCTAssertEqual(seed.recordLink.text, "http://127.0.0.1:9091/client/records/stream-\(id)-.mp4")
  }

  func testTwoWayStreamingSeedPublishesThenPlays() throws {
    let seed = TwoWayStreamingSeed()
    XCTAssertNotNil(seed.connect())
    server.settle()
    XCTAssertEqual(seed.log, ["session ESTABLISHED", "publishing local", "playing remote"])
    seed.switchCameraButton()
    XCTAssertEqual(backend.connections.first?.state.withLock { $0.switchedCamera }, 1)
    seed.playButtonStop()
    seed.connectButtonDisconnect()
    server.settle()
    XCTAssertEqual(seed.log.last, "disconnected")
    XCTAssertEqual(
      server.last?.sentMessages.map(\.name),
      ["connection", "publishStream", "playStream", "stopStream"])
  }

  func testScreenCapturerSeedPublishesTheCapturer() throws {
    let defaults = UserDefaults(suiteName: "group.com.flashphoner.ScreenCapturerSwift")
    defaults?.set("ws://127.0.0.1:8080", forKey: "wcsUrl")
    defaults?.set("screen1", forKey: "streamName")
    defaults?.set(false, forKey: "useMic")
    let handler = ScreenCapturerSampleHandlerSeed()
    handler.broadcastStarted(withSetupInfo: nil)
    server.settle()
    XCTAssertEqual(handler.publishStream?.getStatus(), .fpwcsStreamStatusPublishing)
    let request = try XCTUnwrap(backend.requests.first)
    XCTAssertNil(request.audio)
    XCTAssertNotNil(request.video?.capturer)
    handler.processSampleBuffer(
      AudioFrame(sampleRate: 48000, channels: 2, samples: [0, 0]), with: .audioApp)
    handler.processSampleBuffer(
      AudioFrame(sampleRate: 48000, channels: 2, samples: [0, 0]), with: .audioMic)
    XCTAssertEqual(
      backend.state.withLock { $0.deliveredAudio.count }, 1, "app audio only when useMic is off")
    XCTAssertTrue(backend.state.withLock { $0.externalAudio })
    handler.broadcastPaused()
    server.settle()
    XCTAssertEqual(
      server.last?.sentMessages.filter { $0.name == "sendStreamEvent" }.compactMap {
        $0.argument?["type"]?.stringValue
      },
      ["audioMuted", "videoMuted"])
    handler.session?.disconnect()
  }
}
