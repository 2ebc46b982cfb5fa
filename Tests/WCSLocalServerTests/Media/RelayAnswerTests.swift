import Foundation
import WCSMedia
import XCTest

@testable import WCSLocalServer

final class RelayAnswerTests: XCTestCase {
  static let answer = [
    "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1", "a=ice-lite",
    "m=audio 40000 UDP/TLS/RTP/SAVPF 111 0", "c=IN IP4 127.0.0.1", "a=mid:0", "a=sendonly",
    "a=rtpmap:111 opus/48000/2", "a=rtcp-fb:111 transport-cc", "a=rtpmap:0 PCMU/8000",
    "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
    "m=video 40000 UDP/TLS/RTP/SAVPF 96 97 98", "c=IN IP4 127.0.0.1", "a=mid:1", "a=sendonly",
    "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli",
    "a=rtcp-fb:96 transport-cc", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96",
    "a=rtpmap:98 H264/90000", "a=fmtp:98 profile-level-id=42e01f", "",
  ].joined(separator: "\r\n")

  func testOnlyOpusVP8AndH264WithoutTransportCCAndWithOurSSRCs() throws {
    let text = try RelayAnswer.restrict(
      Self.answer.replacingOccurrences(of: "H264/90000", with: "VP9/90000"),
      ssrcs: ["audio": 1111, "video": 2222], cname: "relay")
    let sdp = try SDPParser.parse(text).description
    XCTAssertEqual(sdp.media.map(\.payloadTypes), [[111], [96, 97]])
    let withH264 = try SDPParser.parse(RelayAnswer.restrict(Self.answer)).description
    XCTAssertEqual(withH264.media.map(\.payloadTypes), [[111], [96, 97, 98]])
    XCTAssertEqual(sdp.media[1].rtcpFeedback(payloadType: 96).map(\.type), ["nack", "nack"])
    XCTAssertTrue(sdp.media[0].rtcpFeedback(payloadType: 111).isEmpty)
    XCTAssertTrue(sdp.media[0].headerExtensions.isEmpty)
    XCTAssertEqual(sdp.media[0].ssrcAttributes.map(\.ssrc), [1111])
    XCTAssertEqual(sdp.media[1].ssrcAttributes.map(\.value), ["relay"])
    XCTAssertTrue(sdp.isICELite)
    XCTAssertFalse(text.contains("VP9"))
    XCTAssertTrue(text.contains("a=fmtp:97 apt=96"))
    XCTAssertFalse(text.contains("ssrc-group"), "no RTX SSRC given: none signalled")
  }

  /// RTX (RFC 4588) stays where its `apt` is a relayed format, with our RTX SSRC in an
  /// `a=ssrc-group:FID` after the media SSRC; RTX of a stripped codec goes with the codec.
  func testRTXIsKeptForVP8WithAnFIDGroupAndDroppedForStrippedCodecs() throws {
    let withH264RTX = Self.answer.replacingOccurrences(of: "H264/90000", with: "VP9/90000")
      .replacingOccurrences(of: "96 97 98", with: "96 97 98 99")
      .replacingOccurrences(
        of: "a=fmtp:98 profile-level-id=42e01f",
        with: "a=fmtp:98 profile-level-id=42e01f\r\na=rtpmap:99 rtx/90000\r\na=fmtp:99 apt=98")
    let text = try RelayAnswer.restrict(
      withH264RTX, ssrcs: ["audio": 1111, "video": 2222],
      retransmissionSSRCs: ["audio": 3333, "video": 4444], cname: "relay")
    let sdp = try SDPParser.parse(text).description
    XCTAssertEqual(sdp.media.map(\.payloadTypes), [[111], [96, 97]])
    XCTAssertFalse(text.contains("apt=98"))
    XCTAssertEqual(sdp.media[1].ssrcAttributes.map(\.ssrc), [2222, 4444])
    XCTAssertEqual(sdp.media[0].ssrcAttributes.map(\.ssrc), [1111], "audio offered no RTX")
    XCTAssertTrue(text.contains("a=ssrc-group:FID 2222 4444"))
    XCTAssertEqual(RelayCodecs.retransmissionPayloadTypes(in: sdp), [97: 96])
    XCTAssertEqual(RelayCodecs.retransmissionSSRCs(in: sdp), [4444: 2222])
    XCTAssertEqual(RelayCodecs.kindsWithNACK(in: sdp), [.video])
  }

  /// An RTX format whose `apt` is missing or names nothing is not answered.
  func testRTXWithoutAUsableAptIsDropped() throws {
    let broken = Self.answer.replacingOccurrences(of: "a=fmtp:97 apt=96", with: "a=fmtp:97 apt=55")
      .replacingOccurrences(of: "H264/90000", with: "VP9/90000")
    let text = try RelayAnswer.restrict(broken, ssrcs: ["video": 2222])
    XCTAssertEqual(try SDPParser.parse(text).description.media.map(\.payloadTypes), [[111], [96]])
    XCTAssertFalse(text.contains("rtx"))
  }

  func testAnOfferWithoutARelayedCodecHasNoCommonCodecs() {
    let vp9Only = [
      "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0",
      "m=video 40000 UDP/TLS/RTP/SAVPF 98", "c=IN IP4 127.0.0.1", "a=rtpmap:98 VP9/90000", "",
    ].joined(separator: "\r\n")
    XCTAssertThrowsError(try RelayAnswer.restrict(vp9Only)) {
      XCTAssertEqual($0 as? RelayAnswerError, .noCommonCodecs)
    }
    XCTAssertThrowsError(try RelayAnswer.offeredCodecs(vp9Only)) {
      XCTAssertEqual($0 as? RelayAnswerError, .noCommonCodecs)
    }
  }

  /// No `m=` line and all sections at port 0 are not codec problems.
  func testOffersWithoutAcceptedMediaAreNotCodecErrors() throws {
    let session = ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0"]
    let noMedia = (session + [""]).joined(separator: "\r\n")
    let allRejected =
      (session + [
        "m=audio 0 UDP/TLS/RTP/SAVPF 111", "a=rtpmap:111 opus/48000/2",
        "m=video 0 UDP/TLS/RTP/SAVPF 96", "a=rtpmap:96 VP8/90000", "",
      ]).joined(separator: "\r\n")
    XCTAssertThrowsError(try RelayAnswer.offeredCodecs(noMedia)) {
      XCTAssertEqual($0 as? RelayAnswerError, .offer(.noMediaSections))
    }
    XCTAssertThrowsError(try RelayAnswer.offeredCodecs(allRejected)) {
      XCTAssertEqual($0 as? RelayAnswerError, .offer(.allMediaSectionsRejected))
    }
    XCTAssertThrowsError(try RelayAnswer.restrict(allRejected)) {
      XCTAssertEqual($0 as? RelayAnswerError, .offer(.allMediaSectionsRejected))
    }
    XCTAssertEqual(RelayAnswerError.offer(.noMediaSections).info, "Offer has no media sections")
    XCTAssertEqual(
      RelayAnswerError.offer(.allMediaSectionsRejected).info,
      "Every media section is rejected (port 0)")
    XCTAssertEqual(RelayAnswerError.noCommonCodecs.info, "No common codecs")
    let opus = (session + ["m=audio 9 UDP/TLS/RTP/SAVPF 111", "a=rtpmap:111 opus/48000/2", ""])
      .joined(separator: "\r\n")
    XCTAssertEqual(
      try RelayAnswer.offeredCodecs(opus),
      [111: RelayCodec(kind: .audio, name: "opus", clockRate: 48000)])
  }
}
