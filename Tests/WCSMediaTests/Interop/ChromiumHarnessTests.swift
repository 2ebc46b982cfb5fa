import Foundation
import WCSMedia
import XCTest

/// The Chromium harness itself: headless Chromium runs in a namespace with only `lo`, loads the
/// page from the peer's HTTP server, talks to the peer over the WebSocket, and gets media from
/// its fake camera and microphone.
final class ChromiumHarnessTests: XCTestCase {
  /// getUserMedia + one offer. The offer goes through our SDP parser: VP8 and Opus rtpmaps,
  /// BUNDLE, rtcp-mux, and only 127.0.0.1 host candidates (the namespace has nothing else).
  func testChromiumOfferFromFakeDevices() throws {
    let run = try ChromiumInterop.run(scenario: "offer")
    XCTAssertEqual(run.summary["outcome"] as? String, "result", run.text)
    XCTAssertEqual(run.page["ok"] as? Bool, true, run.text)
    XCTAssertEqual(run.page["tracks"] as? [String], ["audio", "video"])
    XCTAssertEqual(run.page["offerHasVP8"] as? Bool, true)
    XCTAssertEqual(run.page["offerHasOpus"] as? Bool, true)
    XCTAssertNotNil(
      (run.summary["hello"] as? [String: Any])?["userAgent"].flatMap { $0 as? String }?
        .range(of: "HeadlessChrome"))

    let sdp = try XCTUnwrap(run.page["sdp"] as? String)
    let offer = try SDPParser.parse(sdp).description
    XCTAssertEqual(offer.media.map(\.media), ["audio", "video"])
    let audio = offer.media[0]
    let video = offer.media[1]
    let opus = try XCTUnwrap(audio.payloadTypes(forCodec: "opus").first)
    XCTAssertEqual(audio.rtpMap(payloadType: opus)?.clockRate, 48000)
    XCTAssertEqual(audio.rtpMap(payloadType: opus)?.channels, 2)
    let vp8 = try XCTUnwrap(video.payloadTypes(forCodec: "VP8").first)
    XCTAssertEqual(video.rtpMap(payloadType: vp8)?.clockRate, 90000)
    XCTAssertEqual(offer.bundleGroup?.mids, ["0", "1"])
    XCTAssertTrue(audio.hasRTCPMux && video.hasRTCPMux)
    XCTAssertEqual(audio.direction, .sendrecv)
    let udp = offer.media.flatMap(\.candidates).filter { $0.transport.lowercased() == "udp" }
    XCTAssertFalse(udp.isEmpty, "no UDP candidates: loopback candidates not allowed?")
    XCTAssertEqual(Set(udp.map(\.address)), ["127.0.0.1"])
    print(
      "Chromium offer scenario: \(run.wallSeconds) s wall, \(run.summary["runSeconds"] ?? "?") s page"
    )
  }

  /// Two RTCPeerConnections inside the browser: VP8 frames decoded and Opus packets received
  /// over a 127.0.0.1 candidate pair with DTLS-SRTP — fake media and loopback ICE work here.
  func testChromiumLoopbackCallDecodesFakeCamera() throws {
    let run = try ChromiumInterop.run(scenario: "loopback")
    XCTAssertEqual(run.page["ok"] as? Bool, true, run.text)
    let receiver = try XCTUnwrap(run.page["receiver"] as? [String: Any], run.text)
    let inbound = try XCTUnwrap(receiver["inbound"] as? [String: [String: Any]])
    let video = try XCTUnwrap(inbound["video"])
    let audio = try XCTUnwrap(inbound["audio"])
    XCTAssertGreaterThanOrEqual(video["framesDecoded"] as? Int ?? 0, 10)
    XCTAssertEqual(video["codec"] as? String, "video/VP8")
    XCTAssertEqual(video["frameWidth"] as? Int, 320)
    XCTAssertEqual(video["frameHeight"] as? Int, 240)
    XCTAssertGreaterThan(audio["packetsReceived"] as? Int ?? 0, 0)
    XCTAssertEqual(audio["codec"] as? String, "audio/opus")
    XCTAssertEqual(receiver["dtlsState"] as? String, "connected")
    let pair = try XCTUnwrap(receiver["selectedPair"] as? [String: Any])
    XCTAssertTrue((pair["local"] as? String)?.hasPrefix("127.0.0.1:") ?? false, run.text)
    XCTAssertTrue((pair["remote"] as? String)?.hasPrefix("127.0.0.1:") ?? false, run.text)
    print(
      "Chromium loopback scenario: \(run.wallSeconds) s wall, \(run.summary["runSeconds"] ?? "?") s page"
    )
  }
}
