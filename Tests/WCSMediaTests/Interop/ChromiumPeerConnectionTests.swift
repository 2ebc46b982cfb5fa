import Foundation
import WCSMedia
import XCTest

/// Our `PeerConnection` against Chromium, sendrecv audio+video both ways: the browser sends its
/// fake camera and microphone, InteropPeer sends Opus (440 Hz tone) and VP8 (VirtualCamera,
/// 320x240) and decodes what arrives. Either the browser offers and InteropPeer answers (full
/// ICE or ICE-lite, Opus and VP8 only), or InteropPeer offers (`SDPOfferBuilder`) and the
/// browser answers.
final class ChromiumPeerConnectionTests: XCTestCase {
  func testChromiumOffersSwiftAnswersFullICE() throws {
    let run = try checkCall(scenario: "peer", ourDTLSRole: "client")
    XCTAssertEqual(run.page["answerHasIceLite"] as? Bool, false)
  }

  func testChromiumOffersSwiftAnswersICELite() throws {
    let run = try checkCall(scenario: "peer-lite", ourDTLSRole: "client")
    XCTAssertEqual(run.page["answerHasIceLite"] as? Bool, true)
  }

  /// Our offer is accepted by Chromium as is: its answer keeps Opus 111 and VP8 96, BUNDLE,
  /// and `a=setup:active` (we are the DTLS server).
  func testSwiftOffersChromiumAnswers() throws {
    let run = try checkCall(scenario: "peer-offer", ourDTLSRole: "server")
    XCTAssertEqual(run.string("page", "peer", "signalingRole"), "offerer")
    let answer = try SDPParser.parse(try XCTUnwrap(run.page["answerSdp"] as? String)).description
    XCTAssertEqual(answer.media.map(\.media), ["audio", "video"])
    XCTAssertEqual(answer.media.first?.payloadTypes(forCodec: "opus"), [111])
    XCTAssertEqual(answer.media.last?.payloadTypes(forCodec: "VP8"), [96])
    XCTAssertEqual(answer.bundleGroup?.mids, ["0", "1"])
    XCTAssertEqual(answer.media.map(\.direction), [.sendrecv, .sendrecv])
  }

  @discardableResult
  private func checkCall(scenario: String, ourDTLSRole: String) throws -> ChromiumInterop.Run {
    let run = try ChromiumInterop.run(scenario: scenario)
    XCTAssertEqual(run.summary["outcome"] as? String, "result", run.text)
    XCTAssertEqual(run.page["ok"] as? Bool, true, run.text)
    XCTAssertEqual(run.page["remoteTracks"] as? [String], ["audio", "video"])
    XCTAssertEqual(run.peer["errors"] as? [String], [], run.text)

    // The browser side: our packets arrived under our SSRCs and our VP8 decoded at our size.
    XCTAssertEqual(run.string("page", "browser", "dtlsState"), "connected")
    XCTAssertEqual(run.string("page", "browser", "inbound", "video", "codec"), "video/VP8")
    XCTAssertEqual(run.string("page", "browser", "inbound", "audio", "codec"), "audio/opus")
    XCTAssertGreaterThanOrEqual(
      run.int("page", "browser", "inbound", "video", "framesDecoded") ?? 0, 10, run.text)
    XCTAssertEqual(run.int("page", "browser", "inbound", "video", "frameWidth"), 320)
    XCTAssertEqual(run.int("page", "browser", "inbound", "video", "frameHeight"), 240)
    XCTAssertGreaterThanOrEqual(
      run.int("page", "browser", "inbound", "audio", "packetsReceived") ?? 0, 25, run.text)
    let sentVideoSSRC = try XCTUnwrap(run.int("page", "peer", "sent", "videoSSRC"), run.text)
    let sentAudioSSRC = try XCTUnwrap(run.int("page", "peer", "sent", "audioSSRC"))
    XCTAssertEqual(run.int("page", "browser", "inbound", "video", "ssrc"), sentVideoSSRC)
    XCTAssertEqual(run.int("page", "browser", "inbound", "audio", "ssrc"), sentAudioSSRC)
    // The pixels Chromium renders are our pictures: the frame numbers VirtualCamera stamps into
    // the top rows read back in order, advancing, and below the count we encoded.
    let frameNumbers = (run.page["frameNumbers"] as? [Any] ?? []).compactMap { $0 as? Int }
    XCTAssertGreaterThanOrEqual(frameNumbers.count, 5, run.text)
    XCTAssertEqual(frameNumbers, frameNumbers.sorted(), run.text)
    XCTAssertGreaterThan(frameNumbers.last ?? 0, frameNumbers.first ?? 0, run.text)
    let encoded = try XCTUnwrap(run.int("peer", "sent", "videoFramesEncoded"))
    XCTAssertLessThan(frameNumbers.last ?? .max, encoded)
    let browserPair = try XCTUnwrap(
      (run.page["browser"] as? [String: Any])?["selectedPair"] as? [String: Any], run.text)
    XCTAssertTrue((browserPair["local"] as? String)?.hasPrefix("127.0.0.1:") ?? false)
    XCTAssertTrue((browserPair["remote"] as? String)?.hasPrefix("127.0.0.1:") ?? false)

    // Our side: the DTLS role the setup attributes give, the browser's SRTP cipher, and only the payload
    // types our answer kept, decoded without errors.
    XCTAssertEqual(run.string("page", "peer", "transport", "dtlsRole"), ourDTLSRole)
    XCTAssertEqual(
      run.string("page", "peer", "transport", "protectionProfile"),
      run.string("page", "browser", "srtpCipher"))
    XCTAssertEqual(run.int("page", "peer", "transport", "srtpDrops"), 0)
    XCTAssertEqual(
      Array(((run.page["peer"] as? [String: Any])?["states"] as? [String] ?? []).prefix(2)),
      ["connecting", "connected"])
    let opus = try XCTUnwrap(run.int("page", "peer", "received", "opusPayloadType"), run.text)
    let vp8 = try XCTUnwrap(run.int("page", "peer", "received", "vp8PayloadType"))
    let byPayloadType = try XCTUnwrap(
      ((run.page["peer"] as? [String: Any])?["received"] as? [String: Any])?[
        "packetsByPayloadType"] as? [String: Any])
    XCTAssertEqual(Set(byPayloadType.keys), ["\(opus)", "\(vp8)"], run.text)
    XCTAssertGreaterThanOrEqual(run.int("page", "peer", "received", "opusFramesDecoded") ?? 0, 25)
    XCTAssertEqual(run.int("page", "peer", "received", "opusDecodeErrors"), 0)
    XCTAssertGreaterThan(run.int("page", "peer", "received", "opusPeak") ?? 0, 1000)
    XCTAssertGreaterThanOrEqual(run.int("page", "peer", "received", "vp8FramesDecoded") ?? 0, 10)
    XCTAssertGreaterThanOrEqual(run.int("page", "peer", "received", "vp8KeyFrames") ?? 0, 1)
    XCTAssertEqual(run.int("page", "peer", "received", "vp8DecodeErrors"), 0)
    XCTAssertEqual(run.int("page", "peer", "received", "malformedPackets"), 0)
    // Chrome's padding-only probes are set aside; every other VP8 payload must parse.
    XCTAssertEqual(run.int("page", "peer", "received", "vp8AssemblerDroppedPackets"), 0)
    XCTAssertEqual(run.int("page", "peer", "received", "videoWidth"), 320)
    XCTAssertEqual(run.int("page", "peer", "received", "videoHeight"), 240)
    print(
      "Chromium \(scenario): \(run.wallSeconds) s wall, \(run.summary["runSeconds"] ?? "?") s "
        + "page, connected in \(run.peer["secondsToConnect"] ?? "?") s after the answer")
    return run
  }
}
