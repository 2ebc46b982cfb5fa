import Foundation
import TestSupport
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// A video call: the SDK (virtual camera and microphone) calls baresip with VP8 and its
/// fakevideo source; the gateway passes VP8 through both ways and relays key frame requests.
extension SIPCallEndToEndTests {
  func testVideoCallToBaresipCarriesVP8BothWays() async throws {
    let peer = try BaresipPeer.start(
      answer: true,
      modules: """
        module vp8.so
        module fakevideo.so
        video_source fakevideo,nil
        video_display fakevideo,nil
        video_size 320x240
        video_fps 15
        """)
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
}
