import Foundation
import TestSupport
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// baresip's VP8 with its fakevideo source at 320x240.
private let baresipVideo = """
  module vp8.so
  module fakevideo.so
  video_source fakevideo,nil
  video_display fakevideo,nil
  video_size 320x240
  video_fps 15
  """

/// Video calls: the SDK (virtual camera and microphone) calls baresip with VP8 and its
/// fakevideo source, or baresip calls the SDK; the gateway passes VP8 through both ways and
/// relays key frame requests.
extension SIPCallEndToEndTests {
  func testVideoCallToBaresipCarriesVP8BothWays() async throws {
    let peer = try BaresipPeer.start(answer: true, modules: baresipVideo)
    defer { peer.stop() }
    let server = try startServer()
    defer { server.stop() }
    let options = FPWCSApi2SessionOptions()
    options.urlServer = server.wsURL
    options.sipLogin = "1001"
    options.sipDomain = "127.0.0.1"
    let session = try FPWCSApi2.createSession(options)
    defer { session.disconnect() }
    try await session.connect()
    let callOptions = FPWCSApi2CallOptions()
    callOptions.callee = "sip:baresip@127.0.0.1:\(peer.port)"
    let constraints = virtualMicrophone()
    let camera = FPWCSApi2VideoConstraints()
    camera.deviceID = NativeMediaDevices.virtualCameraID
    camera.maxWidth = 320
    camera.maxHeight = 240
    constraints.video = camera
    callOptions.localConstraints = constraints
    let display = FrameCounter()
    callOptions.remoteDisplay = display
    let call = try session.createCall(callOptions)
    try await call.connect()
    try await waitFor("baresip's VP8 reaches the gateway", timeout: 10) {
      (server.sipLegStatistics().first?.videoPacketsReceived ?? 0) > 20
    }
    try await waitFor("the SDK decodes baresip's video", timeout: 15) { display.frames >= 10 }
    try await waitFor("the SDK's VP8 goes to baresip", timeout: 10) {
      (server.sipLegStatistics().first?.videoPacketsToSIP ?? 0) > 20
    }
    let leg = try XCTUnwrap(server.sipLegStatistics().first)
    XCTAssertGreaterThan(leg.videoPacketsToWebRTC, 20)
    call.hangup()
    try await waitFor("FINISH") { call.getStatus() == .fpwcsCallStatusFinish }
    // baresip's VP8 decoder got pictures of the SDK's camera (its size is the virtual one's).
    XCTAssertTrue(
      peer.output.contains("video: receiving with resolution 320 x 240"),
      String(peer.output.suffix(2000)))
  }

  /// baresip calls the session's login with audio and VP8; the SDK answers with its camera,
  /// so VP8 goes both ways through the gateway and each side decodes the other's pictures.
  func testBaresipsVideoCallAnsweredWithVideoCarriesVP8BothWays() async throws {
    let server = try startServer()
    defer { server.stop() }
    let (session, incoming) = try await answeringSession(server)
    defer { session.disconnect() }
    let sipPort = try XCTUnwrap(server.sipPort)
    let peer = try BaresipPeer.start(
      answer: true, dial: "sip:1001@127.0.0.1:\(sipPort)", modules: baresipVideo)
    defer { peer.stop() }
    try await waitFor("the incoming call", timeout: 15) { !incoming.value.isEmpty }
    let call = try XCTUnwrap(incoming.value.first)
    XCTAssertTrue(call.hasVideo(), "notifyIncomingCall says baresip offered VP8")
    XCTAssertNotNil(call.getRemoteConstraints()?.video)
    let constraints = virtualMicrophone()
    constraints.video = virtualCamera()
    call.setLocalConstraints(constraints)
    let display = FrameCounter()
    call.setRemoteDisplay(display)
    try await call.connect()
    XCTAssertEqual(call.getStatus(), .fpwcsCallStatusEstablished)
    try await waitFor("baresip's VP8 reaches the gateway", timeout: 10) {
      (server.sipLegStatistics().first?.videoPacketsReceived ?? 0) > 20
    }
    try await waitFor("the SDK decodes baresip's video", timeout: 15) { display.frames >= 10 }
    try await waitFor("the SDK's VP8 goes to baresip", timeout: 10) {
      (server.sipLegStatistics().first?.videoPacketsToSIP ?? 0) > 20
    }
    try await waitFor("baresip decodes the SDK's camera", timeout: 10) {
      peer.output.contains("video: receiving with resolution 320 x 240")
    }
    let leg = try XCTUnwrap(server.sipLegStatistics().first)
    XCTAssertGreaterThan(leg.videoPacketsToWebRTC, 20)
    XCTAssertGreaterThan(leg.packetsToSIP, 25, "audio goes along")
    XCTAssertGreaterThan(leg.packetsToWebRTC, 25)
    call.hangup()
    try await waitFor("FINISH") { call.getStatus() == .fpwcsCallStatusFinish }
    try await waitFor("no leg left") { server.sipLegStatistics().isEmpty }
  }

  /// baresip offers VP8 but the SDK answers with audio only: the gateway's 200 OK refuses the
  /// video stream with port 0 (RFC 3264 §6), no video moves, and audio flows both ways.
  func testAudioOnlyAnswerToBaresipsVideoCallRefusesVideoWithPortZero() async throws {
    let server = try startServer()
    defer { server.stop() }
    let (session, incoming) = try await answeringSession(server)
    defer { session.disconnect() }
    let sipPort = try XCTUnwrap(server.sipPort)
    let peer = try BaresipPeer.start(
      answer: true, dial: "sip:1001@127.0.0.1:\(sipPort)", modules: baresipVideo,
      sipTrace: true)
    defer { peer.stop() }
    try await waitFor("the incoming call", timeout: 15) { !incoming.value.isEmpty }
    let call = try XCTUnwrap(incoming.value.first)
    XCTAssertTrue(call.hasVideo())
    call.setLocalConstraints(virtualMicrophone())
    try await call.connect()
    try await waitFor("audio is bridged both ways", timeout: 10) {
      guard let leg = server.sipLegStatistics().first else { return false }
      return leg.packetsToSIP > 25 && leg.packetsToWebRTC > 25
    }
    let samples = try XCTUnwrap(server.sipLegStatistics().first).recentSamples
    XCTAssertEqual(Tone.dominantFrequency(samples, rate: 8000), 880, accuracy: 20)
    let videoLines = peer.output.split(whereSeparator: \.isNewline).filter {
      $0.hasPrefix("m=video ")
    }
    XCTAssertTrue(videoLines.contains { !$0.hasPrefix("m=video 0 ") }, "baresip offered video")
    XCTAssertTrue(
      videoLines.contains { $0.hasPrefix("m=video 0 RTP/AVP ") }, String(peer.output.suffix(3000)))
    try await Task.sleep(for: .milliseconds(500))
    let leg = try XCTUnwrap(server.sipLegStatistics().first)
    XCTAssertEqual(leg.videoPacketsReceived, 0)
    XCTAssertEqual(leg.videoPacketsToSIP, 0)
    XCTAssertFalse(peer.output.contains("video: receiving"), "baresip got no video")
    call.hangup()
    try await waitFor("FINISH") { call.getStatus() == .fpwcsCallStatusFinish }
  }

  /// A connected session of login 1001 on the gateway's own SIP port, collecting its
  /// incoming calls.
  private func answeringSession(_ server: WCSLocalServer) async throws -> (
    FPWCSApi2Session, Locked<[FPWCSApi2Call]>
  ) {
    let session = try gatewaySession(server, login: "1001", sipPort: try XCTUnwrap(server.sipPort))
    let incoming = Locked<[FPWCSApi2Call]>([])
    session.onIncomingCallCallback { call in
      if let call { incoming.withLock { $0.append(call) } }
    }
    try await session.connect()
    return (session, incoming)
  }

  /// The virtual camera at 320x240.
  private func virtualCamera() -> FPWCSApi2VideoConstraints {
    let camera = FPWCSApi2VideoConstraints()
    camera.deviceID = NativeMediaDevices.virtualCameraID
    camera.maxWidth = 320
    camera.maxHeight = 240
    return camera
  }
}
