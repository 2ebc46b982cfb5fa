import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class SDPOfferBuilderTests: XCTestCase {
  static let fingerprint = CertificateFingerprint(
    hashFunction: "SHA-256", bytes: (0..<32).map { UInt8($0 * 7 & 0xFF) })

  static func parameters(candidates: [ICECandidateAttribute] = []) -> SDPOfferParameters {
    SDPOfferParameters(
      audio: .init(ssrc: 11_111_111, trackId: "audio-track"),
      video: .init(ssrc: 22_222_222, trackId: "video-track", rtx: .init(ssrc: 33_333_333)),
      sessionId: 4_611_731_400_430_051_336, cname: "cnameABC", streamId: "stream-1",
      iceUfrag: "ufr4", icePwd: "pwd0123456789012345678x", fingerprint: fingerprint,
      candidates: candidates, endOfCandidates: !candidates.isEmpty)
  }

  static let fingerprintHex =
    "00:07:0E:15:1C:23:2A:31:38:3F:46:4D:54:5B:62:69:70:77:7E:85:8C:93:9A:A1:A8:AF:B6:BD:C4:CB:D2:D9"

  func testPublishOfferText() throws {
    let text = SDPOfferBuilder.publishOffer(Self.parameters()).sdpText
    let expected = """
      v=0
      o=- 4611731400430051336 2 IN IP4 127.0.0.1
      s=-
      t=0 0
      a=group:BUNDLE 0 1
      a=msid-semantic: WMS stream-1
      m=audio 9 UDP/TLS/RTP/SAVPF 111 0 8
      c=IN IP4 0.0.0.0
      a=rtcp:9 IN IP4 0.0.0.0
      a=ice-ufrag:ufr4
      a=ice-pwd:pwd0123456789012345678x
      a=fingerprint:sha-256 \(Self.fingerprintHex)
      a=setup:actpass
      a=mid:0
      a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level
      a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
      a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
      a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
      a=sendonly
      a=msid:stream-1 audio-track
      a=rtcp-mux
      a=rtcp-rsize
      a=rtpmap:111 opus/48000/2
      a=rtcp-fb:111 transport-cc
      a=fmtp:111 minptime=10;useinbandfec=1
      a=rtpmap:0 PCMU/8000
      a=rtpmap:8 PCMA/8000
      a=ssrc:11111111 cname:cnameABC
      a=ssrc:11111111 msid:stream-1 audio-track
      m=video 9 UDP/TLS/RTP/SAVPF 96 97
      c=IN IP4 0.0.0.0
      a=rtcp:9 IN IP4 0.0.0.0
      a=ice-ufrag:ufr4
      a=ice-pwd:pwd0123456789012345678x
      a=fingerprint:sha-256 \(Self.fingerprintHex)
      a=setup:actpass
      a=mid:1
      a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
      a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
      a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
      a=sendonly
      a=msid:stream-1 video-track
      a=rtcp-mux
      a=rtcp-rsize
      a=rtpmap:96 VP8/90000
      a=rtcp-fb:96 goog-remb
      a=rtcp-fb:96 transport-cc
      a=rtcp-fb:96 ccm fir
      a=rtcp-fb:96 nack
      a=rtcp-fb:96 nack pli
      a=rtpmap:97 rtx/90000
      a=fmtp:97 apt=96
      a=ssrc-group:FID 22222222 33333333
      a=ssrc:22222222 cname:cnameABC
      a=ssrc:22222222 msid:stream-1 video-track
      a=ssrc:33333333 cname:cnameABC
      a=ssrc:33333333 msid:stream-1 video-track

      """
    XCTAssertEqual(text, expected.replacingOccurrences(of: "\n", with: "\r\n"))
    let reparsed = try SDPParser.parse(text)
    XCTAssertEqual(reparsed.warnings, [])
    XCTAssertEqual(reparsed.description, SDPOfferBuilder.publishOffer(Self.parameters()))
  }

  /// What Chromium checks in a remote offer it answers (BUNDLE mids exist, same extmap id per
  /// URI, one ICE/DTLS identity per bundle, rtcp-mux, RTX apt points to an offered PT).
  func testChromiumStyleConsumerExpectations() throws {
    let d = try SessionDescription(parsing: SDPOfferBuilder.publishOffer(Self.parameters()).sdpText)
    XCTAssertEqual(d.media.map(\.media), ["audio", "video"])
    XCTAssertEqual(d.media.map(\.mid), ["0", "1"])
    XCTAssertEqual(d.bundleGroup?.mids, d.media.compactMap(\.mid))
    var idByURI: [String: Int] = [:]
    for m in d.media {
      XCTAssertTrue(m.hasRTCPMux)
      XCTAssertTrue(m.attributes.contains(.iceUfrag("ufr4")))
      XCTAssertTrue(m.attributes.contains(.fingerprint(Self.fingerprint)))
      XCTAssertTrue(m.attributes.contains(.setup(.actpass)))
      XCTAssertEqual(m.proto, "UDP/TLS/RTP/SAVPF")
      for e in m.headerExtensions {
        XCTAssertEqual(idByURI[e.uri, default: e.id], e.id, e.uri)
        idByURI[e.uri] = e.id
      }
      for pt in m.payloadTypes { XCTAssertNotNil(m.rtpMap(payloadType: pt), "PT \(pt)") }
    }
    let video = d.media[1]
    let apt = try XCTUnwrap(video.formatParameters(payloadType: 97)?.associatedPayloadType)
    XCTAssertEqual(video.rtpMap(payloadType: apt)?.encodingName, "VP8")
  }

  func testPlayOfferIsReceiveOnlyWithoutSourceLines() {
    let d = SDPOfferBuilder.playOffer(Self.parameters())
    XCTAssertEqual(d.media.map(\.direction), [.recvonly, .recvonly])
    XCTAssertEqual(d.media.map(\.mid), ["0", "1"])
    XCTAssertEqual(d.bundleGroup?.mids, ["0", "1"])
    XCTAssertEqual(d.media.flatMap(\.ssrcAttributes), [])
    XCTAssertFalse(d.sdpText.contains("msid"))
    XCTAssertTrue(d.sdpText.contains("\r\na=recvonly\r\n"))
    XCTAssertEqual(d.media[1].payloadTypes, [96, 97])
  }

  func testAudioOnlyPublishWithCandidates() throws {
    var p = Self.parameters(candidates: [
      ICECandidateAttribute(
        foundation: "1", component: 1, transport: "udp", priority: 2_122_260_223,
        address: "192.168.1.20", port: 50_000, type: .host, generation: 0)
    ])
    p.video = nil
    p.audio?.includeG711 = false
    let d = SDPOfferBuilder.publishOffer(p)
    let text = d.sdpText
    XCTAssertEqual(d.media.count, 1)
    XCTAssertEqual(d.bundleGroup?.mids, ["0"])
    XCTAssertTrue(
      text.contains("\r\nm=audio 50000 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 192.168.1.20\r\n"))
    XCTAssertTrue(
      text.contains(
        "\r\na=candidate:1 1 udp 2122260223 192.168.1.20 50000 typ host generation 0\r\na=end-of-candidates\r\n"
      ))
    XCTAssertFalse(text.contains("PCMU"))
    XCTAssertEqual(try SessionDescription(parsing: text), d)
  }
}
