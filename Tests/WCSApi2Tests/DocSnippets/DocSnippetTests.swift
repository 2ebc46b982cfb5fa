import Foundation
import WCSTransport
import XCTest

@testable import WCSApi2

/// Runs the documentation's code against the scripted server and the fake media engine, through
/// the default seams, so the articles' code keeps compiling and keeps doing what they say.
class DocSnippetTestCase: XCTestCase {
  var server = ScriptedServer()
  var backend = FakeMediaBackend()
  let serverURL = "ws://127.0.0.1:8080"

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
    for session in FPWCSApi2.getSessions() { session.disconnect() }
    server.settle()
    WCSApi2Environment.reset()
    super.tearDown()
  }

  /// A session connected to the scripted server.
  func establishedSession() throws -> FPWCSApi2Session {
    let options = FPWCSApi2SessionOptions()
    options.urlServer = serverURL
    let session = try FPWCSApi2.createSession(options)
    session.connect()
    server.settle()
    XCTAssertEqual(session.getStatus(), .fpwcsSessionStatusEstablished)
    return session
  }

  var sentNames: [String] { server.last?.sentMessages.map(\.name) ?? [] }

  func push(_ name: String, _ object: [String: JSONValue]) {
    server.last?.push(WCSMessage(name: name, data: [.object(object)]))
    server.settle()
  }
}

final class DocSnippetGettingStartedTests: DocSnippetTestCase {
  func testPublishAndPlayReachesPlaying() async throws {
    let (publisher, player) = try await publishAndPlay(serverURL: serverURL, name: "camera")
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusPlaying)
    XCTAssertEqual(sentNames, ["connection", "publishStream", "playStream"])
    XCTAssertEqual(server.last?.connectedURL, serverURL)
    XCTAssertEqual(backend.requests.map(\.direction), [.publish, .play])
    XCTAssertNotNil(backend.requests.last?.renderer)
    let session = try XCTUnwrap(FPWCSApi2.getSessions().first)
    try stopAndDisconnect(publisher: publisher, player: player, session: session)
    server.settle()
    XCTAssertEqual(Array(sentNames.suffix(2)), ["stopStream", "unPublishStream"])
    XCTAssertEqual(session.getStatus(), .fpwcsSessionStatusDisconnected)
  }

  func testMainConnectsToTheDefaultURL() async throws {
    let (publisher, player) = try await runMyStreamer()
    XCTAssertEqual(server.last?.connectedURL, "ws://127.0.0.1:8080")
    XCTAssertEqual(publisher.getName(), "camera")
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusPlaying)
  }

  func testManifestUsesThisPackagesProduct() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let ownManifest = try String(
      contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
    XCTAssertTrue(ownManifest.contains("name: \"WCSApi2\""))
    XCTAssertTrue(ownManifest.contains(".library(name: \"WCSApi2\""))
    XCTAssertTrue(
      gettingStartedManifest.contains(".product(name: \"WCSApi2\", package: \"WCSApi2\")"))
    XCTAssertTrue(gettingStartedManifest.hasPrefix("// swift-tools-version:6.0\n"))
    XCTAssertTrue(
      twoWayStreamingManifest.contains(".product(name: \"WCSApi2\", package: \"WCSApi2\")"))
    XCTAssertTrue(ownManifest.contains("platforms: [.macOS(.v13)]"))
  }
}

final class DocSnippetPublishingTests: DocSnippetTestCase {
  func testDeviceLinesListCamerasThenMicrophones() {
    XCTAssertEqual(
      mediaDeviceLines(),
      [
        "camera Test pattern camera: virtual:pattern", "camera USB camera: /dev/video0",
        "microphone Tone microphone: virtual:tone",
      ])
  }

  func testCameraOptionsReachTheMediaEngine() throws {
    let session = try establishedSession()
    let stream = try session.createStream(cameraPublishOptions(name: "hd", cameraID: "/dev/video0"))
    try stream.publish()
    server.settle()
    XCTAssertEqual(stream.getStatus(), .fpwcsStreamStatusPublishing)
    let request = try XCTUnwrap(backend.requests.first)
    XCTAssertEqual(request.video?.deviceID, "/dev/video0")
    XCTAssertEqual(request.video?.minWidth, 1280)
    XCTAssertEqual(request.video?.maxHeight, 720)
    XCTAssertEqual(request.video?.maxFrameRate, 30)
    XCTAssertEqual(request.video?.minBitrate, 500)
    XCTAssertEqual(request.video?.maxBitrate, 2000)
    XCTAssertEqual(request.audio?.useFEC, true)
    XCTAssertEqual(request.audio?.useStereo, true)
    XCTAssertEqual(request.audio?.bitrate, 64_000)
  }

  func testCallbacksLogPublishingThenUnpublished() throws {
    let session = try establishedSession()
    let lines = Locked<[String]>([])
    let stream = try publishWithCallbacks(session: session, name: "cam") { line in
      lines.withLock { $0.append(line) }
    }
    server.settle()
    try stream.stop()
    server.settle()
    XCTAssertEqual(lines.value, ["publishing cam", "unpublished"])
  }

  func testPauseAudioSendsMuteThenData() throws {
    let session = try establishedSession()
    let stream = try publishWithCallbacks(session: session, name: "cam") { _ in }
    server.settle()
    pauseAudio(of: stream)
    server.settle()
    XCTAssertTrue(stream.isAudioMuted())
    let events = (server.last?.sentMessages ?? []).filter { $0.name == "sendStreamEvent" }
    XCTAssertEqual(events.map { $0.argument?["type"] }, ["audioMuted", "data"])
    XCTAssertEqual(events.last?.argument?["payload"], ["reason": "speaker paused"])
  }

  func testCapturerDeliversGreyPicturesAndReplacesTheCamera() throws {
    let capturer = GrayPictureCapturer()
    let frames = Locked<[VideoFrame]>([])
    capturer.setFrameHandler { frame in frames.withLock { $0.append(frame) } }
    capturer.deliverNextPicture()
    capturer.deliverNextPicture()
    XCTAssertEqual(frames.value.map(\.timestampNs), [33_333_333, 66_666_666])
    XCTAssertEqual(frames.value.first?.width, 320)
    XCTAssertEqual(frames.value.first?.dataY.first, 128)
    XCTAssertEqual(frames.value.first?.isValid, true)

    let session = try establishedSession()
    let stream = try session.createStream(capturerPublishOptions(name: "grey", capturer: capturer))
    try stream.publish()
    server.settle()
    let request = try XCTUnwrap(backend.requests.first)
    XCTAssertTrue(request.video?.capturer === capturer)
    XCTAssertNil(request.audio)
  }
}

final class DocSnippetPlayingTests: DocSnippetTestCase {
  func testFrameCounterCounts() {
    let counter = FrameCounter()
    for _ in 0..<3 { counter.render(VideoFrame(width: 16, height: 8)) }
    XCTAssertEqual(counter.frames, 3)
  }

  func testStatsAndBandwidthAreReported() throws {
    let session = WCSSession(session: try establishedSession())
    let lines = Locked<[String]>([])
    let player = try playWithStats(session: session, name: "cam", renderer: FrameCounter()) {
      line in lines.withLock { $0.append(line) }
    }
    server.settle()
    XCTAssertEqual(player.getStatus(), .fpwcsStreamStatusPlaying)
    push(
      "notifyStreamStatusEvent",
      [
        "mediaSessionId": .string(player.stream.getStreamID()), "name": "cam",
        "status": "NOT_ENOUGH_BANDWIDTH", "info": "1500000/900000",
      ])
    XCTAssertEqual(
      lines.value,
      ["receiving 812344 bit/s, lost 0", "bandwidth 900000 bit/s < 1500000 bit/s"])
  }

  func testStatusNamesFollowTheStreamToItsEnd() async throws {
    let session = WCSSession(session: try establishedSession())
    let options = FPWCSApi2StreamOptions()
    options.name = "cam"
    let player = try session.createStream(options)
    let updates = player.statusUpdates
    try await player.play()
    try player.stop()
    let names = await statusNames(of: updates)
    XCTAssertEqual(names, ["PENDING", "PLAYING", "STOPPED"])
  }

  func testQualityReportsFollowServerRates() throws {
    let session = WCSSession(session: try establishedSession())
    let options = FPWCSApi2StreamOptions()
    options.name = "cam"
    let publisher = try session.createStream(options)
    let lines = Locked<[String]>([])
    watchQuality(of: publisher) { line in lines.withLock { $0.append(line) } }
    try publisher.publish()
    server.settle()
    push(
      "inboundVideoRate",
      ["mediaSessionId": .string(publisher.stream.getStreamID()), "videoRate": 812344])
    XCTAssertEqual(lines.value, ["quality 0: client 812344, server 812344"])
  }
}

final class DocSnippetRecordingTests: DocSnippetTestCase {
  func testRecordedStreamGivesTheDownloadURL() throws {
    let session = try establishedSession()
    let urls = Locked<[String]>([])
    let stream = try publishRecorded(
      session: session, name: "rec", recordsBaseURL: "http://127.0.0.1:8081"
    ) { url in urls.withLock { $0.append(url) } }
    server.settle()
    let publish = try XCTUnwrap(server.last?.sentMessages.first { $0.name == "publishStream" })
    XCTAssertEqual(publish.argument?["record"], true)
    try stream.stop()
    server.settle()
    XCTAssertEqual(
      urls.value, ["http://127.0.0.1:8081/client/records/stream-\(stream.getStreamID())-.mp4"])
  }

  func testRecordsBaseURLUsesTheDefaultPorts() {
    XCTAssertEqual(recordsBaseURL(forServer: "ws://10.0.0.5:8080"), "http://10.0.0.5:8081")
    XCTAssertEqual(recordsBaseURL(forServer: "wss://wcs.example:8443/"), "https://wcs.example:8444")
    XCTAssertNil(recordsBaseURL(forServer: "not a url"))
  }
}

final class DocSnippetDevicesTests: DocSnippetTestCase {
  func testCameraChosenByLabel() {
    XCTAssertEqual(videoConstraints(cameraLabelPrefix: "USB").deviceID, "/dev/video0")
    XCTAssertNil(videoConstraints(cameraLabelPrefix: "Elgato").deviceID)
    XCTAssertEqual(captureSizes(), ["640x480", "1280x720"])
  }

  func testAppAudioGoesToTheAudioModule() {
    deliverAppAudio([Int16](repeating: 1000, count: 960))
    let state = backend.state.withLock { ($0.externalAudio, $0.deliveredAudio) }
    XCTAssertTrue(state.0)
    XCTAssertEqual(state.1.map(\.frameCount), [960])
    XCTAssertEqual(state.1.first?.sampleRate, 48_000)
  }

  func testLocalMediaTestOpensAndReleases() throws {
    let display = FrameCounter()
    try testLocalMedia(display: display)
    XCTAssertEqual(backend.state.withLock { $0.localMediaOpened }, 1)
    XCTAssertTrue(WCSApi2.releaseLocalMedia(display: display))
  }
}

final class DocSnippetPortingTests: DocSnippetTestCase {
  func testPortedPublishKeepsTheIPadConstraintsAndReleasesOnUnpublish() throws {
    let session = try establishedSession()
    let display = FrameCounter()
    let stream = try portedPublish(
      session: session, streamName: "local", localDisplay: display, isPad: true)
    server.settle()
    let request = try XCTUnwrap(backend.requests.first)
    XCTAssertEqual(request.video?.maxWidth, 640)
    XCTAssertEqual(request.video?.maxFrameRate, 15)
    XCTAssertTrue(request.renderer === display)
    try stream.stop()
    server.settle()
    XCTAssertEqual(backend.state.withLock { $0.released }, 1)
  }

  func testMainQueueOptionsAndLoudspeaker() throws {
    // Linux Dispatch hands out a new wrapper object for the main queue; compare labels.
    XCTAssertEqual(
      mainQueueSessionOptions(serverURL: serverURL).callbackQueue?.label,
      DispatchQueue.main.label)
    let session = WCSSession(session: try establishedSession())
    let options = FPWCSApi2StreamOptions()
    options.name = "cam"
    let player = try session.createStream(options)
    XCTAssertNil(tryLoudspeaker(player), "remembered until play() creates the connection")
    XCTAssertEqual(player.stream.getAudioOutput(), .defaultDevice)
    try player.play()
    server.settle()
    XCTAssertEqual(backend.requests.first?.audio?.output, .defaultDevice)
    let publisher = try session.createStream(options)
    try publisher.publish()
    server.settle()
    XCTAssertEqual(
      tryLoudspeaker(publisher),
      "cannot play audio on a sound output (the stream is published, not played): stream is PUBLISHING"
    )
  }
}

final class DocSnippetArchitectureTests: DocSnippetTestCase {
  func testSeamsAndPerSessionTransport() throws {
    let transport = MockTransport()
    installSeams(transport: transport, backend: backend)
    let session = try FPWCSApi2.createSession(
      sessionOptions(serverURL: serverURL, transport: transport))
    session.connect()
    // The open event hops from the transport's queue to the session's; flush both, twice.
    for _ in 0..<2 {
      transport.drain()
      session.work.sync {}
    }
    XCTAssertEqual(transport.connectedURL, serverURL)
    XCTAssertEqual(transport.sentMessages.first?.name, "connection")
  }
}

final class DocSnippetTroubleshootingTests: DocSnippetTestCase {
  func testExplanations() {
    XCTAssertEqual(
      explain(
        WCSError.streamFailed(
          statusInfo: .fpwcsStreamStatusInfoFailedByIceTimeout, info: "Failed by ICE timeout")),
      "ICE failed, no UDP path to the server's media ports: Failed by ICE timeout")
    XCTAssertEqual(
      explain(WCSError.connectionRefused(reason: "Unauthorized")),
      "the server app refused the connection: Unauthorized")
    XCTAssertEqual(
      explain(WCSError.media(.unavailable("no engine"))),
      "local media engine: media engine unavailable: no engine")
    XCTAssertEqual(explain(WCSError.disconnected), "session disconnected")
  }

  func testSelfSignedOptionsReachTheTransport() throws {
    let options = selfSignedServerOptions(serverURL: "wss://127.0.0.1:8443", caFile: "/tmp/ca.pem")
    let session = try FPWCSApi2.createSession(options)
    session.connect()
    server.settle()
    XCTAssertEqual(server.last?.connectOptions?.caFile, "/tmp/ca.pem")
    XCTAssertEqual(server.last?.connectOptions?.connectTimeout, 5)
    XCTAssertEqual(server.last?.connectOptions?.verifyCertificates, true)
  }
}

final class DocSnippetTutorialTests: DocSnippetTestCase {
  func testTwoWayStreamingRunsStepByStep() throws {
    let lines = Locked<[String]>([])
    let app = TwoWayStreamingApp(serverURL: serverURL, localName: "local", remoteName: "remote") {
      line in lines.withLock { $0.append(line) }
    }
    app.start()
    app.queue.sync {}
    server.settle()
    XCTAssertEqual(lines.value, ["session ESTABLISHED", "publishing local", "playing remote"])
    XCTAssertEqual(sentNames, ["connection", "publishStream", "playStream"])
    let publishRequest = try XCTUnwrap(backend.requests.first)
    XCTAssertEqual(publishRequest.video?.maxWidth, 640)
    XCTAssertTrue(publishRequest.renderer === app.localDisplay)
    // A played stream's display is reached through the keeper of its last frame (snapshots).
    let played = backend.requests.last?.renderer as? LastFrameRenderer
    XCTAssertTrue(played?.wrapped === app.remoteDisplay)

    app.queue.sync { app.switchCamera() }
    XCTAssertEqual(backend.connections.first?.state.withLock { $0.switchedCamera }, 1)

    let playerID = try XCTUnwrap(app.queue.sync { app.player?.stream.getStreamID() })
    push(
      "notifyStreamStatusEvent",
      [
        "mediaSessionId": .string(playerID), "name": "remote", "status": "FAILED",
        "info": "Stopped by publisher stop",
      ])
    XCTAssertEqual(
      lines.value.last, "play failed: the publisher stopped its stream or lost its connection")

    app.queue.sync { app.disconnect() }
    server.settle()
    XCTAssertEqual(Array(sentNames.suffix(1)), ["unPublishStream"])
    XCTAssertEqual(lines.value.last, "session DISCONNECTED")
  }
}
