import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class SDPMungingTests: XCTestCase {
  private func lines(_ m: MediaDescription) -> [String] {
    m.attributes.map { SDPWriter.line(for: $0) }
  }

  func testStripCodecsRemovesLinesPayloadTypesAndTheirRTX() throws {
    var d = try SessionDescription(parsing: chromeBrowserOffer)
    d.stripCodecs(["vp8", "PCMU"])
    let audio = d.media[0]
    XCTAssertEqual(audio.formats, ["111", "8"], "static PT 0 matched by its RFC 3551 name")
    let video = d.media[1]
    XCTAssertEqual(video.formats, [], "VP8 and its RTX (apt=96) are gone")
    let videoLines = lines(video)
    XCTAssertFalse(videoLines.contains { $0.hasPrefix("a=rtpmap:") || $0.hasPrefix("a=fmtp:") })
    XCTAssertFalse(videoLines.contains { $0.hasPrefix("a=rtcp-fb:") })
    XCTAssertTrue(videoLines.contains("a=ssrc-group:FID 2001 2002"), "other lines kept")
    XCTAssertTrue(d.sdpText.contains("\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111 8\r\n"))
    XCTAssertTrue(d.sdpText.contains("\r\nm=video 9 UDP/TLS/RTP/SAVPF\r\n"))
  }

  func testStripCodecsOnChromeVideoCorpusKeepsOtherCodecs() throws {
    guard let text = SDPCorpus.text("aiortc-chrome-video-offer.sdp") else {
      throw XCTSkip("corpus not present")
    }
    var d = try SessionDescription(parsing: text)
    d.stripCodecs(["Vp9"])
    XCTAssertEqual(d.media[0].formats, ["96", "97", "100", "101", "102"])
    let l = lines(d.media[0])
    XCTAssertFalse(l.contains { $0.contains(":98 ") || $0.contains(":99 ") })
    XCTAssertTrue(l.contains("a=fmtp:97 apt=96"))
    XCTAssertTrue(l.contains("a=fmtp:101 apt=100"))
    XCTAssertEqual(d.media[0].rtcpFeedback(payloadType: 96).count, 5)
  }

  func testOpusOptionsUpdateExistingFmtpKeepingUnknownParameters() throws {
    var d = try SessionDescription(parsing: chromeBrowserOffer)
    d.media[0].attributes = d.media[0].attributes.map {
      guard case .fmtp(var f) = $0, f.payloadType == 111 else { return $0 }
      f.parameters.insert(FormatParameter("x-custom", "7"), at: 0)
      return .fmtp(f)
    }
    d.setOpusOptions(OpusFormatOptions(maxAverageBitrate: 64000, stereo: true, useInbandFEC: false))
    XCTAssertTrue(
      lines(d.media[0]).contains(
        "a=fmtp:111 x-custom=7;minptime=10;useinbandfec=0;maxaveragebitrate=64000;stereo=1;sprop-stereo=1"
      ))
    XCTAssertEqual(lines(d.media[1]).filter { $0.hasPrefix("a=fmtp:") }, ["a=fmtp:97 apt=96"])
  }

  func testOpusOptionsCreateFmtpAfterRtpmapWhenMissing() throws {
    var d = try SessionDescription(
      parsing: """
        v=0
        o=Flashphoner 0 1 IN IP4 10.0.0.1
        s=Flashphoner/1.0
        t=0 0
        m=audio 31004 RTP/SAVPF 102 0
        a=rtpmap:102 OPUS/48000/2
        a=rtpmap:0 PCMU/8000
        """)
    d.setOpusOptions(OpusFormatOptions(stereo: true, useInbandFEC: true))
    XCTAssertEqual(
      lines(d.media[0]),
      [
        "a=rtpmap:102 OPUS/48000/2",
        "a=fmtp:102 stereo=1;sprop-stereo=1;useinbandfec=1",
        "a=rtpmap:0 PCMU/8000",
      ])
  }

  func testVideoBitrateBoundsOnVP8AndH264() throws {
    var d = try SessionDescription(
      parsing: """
        v=0
        o=Flashphoner 0 1 IN IP4 10.0.0.1
        s=Flashphoner/1.0
        t=0 0
        m=video 31006 RTP/SAVPF 102 96 97
        a=rtpmap:102 H264/90000
        a=fmtp:102 packetization-mode=1; profile-level-id=42e01f
        a=rtpmap:96 VP8/90000
        a=rtcp-fb:96 nack
        a=rtpmap:97 rtx/90000
        a=fmtp:97 apt=96
        """)
    d.setVideoBitrateBounds(minKbps: 300, maxKbps: 1500)
    XCTAssertEqual(
      lines(d.media[0]),
      [
        "a=rtpmap:102 H264/90000",
        "a=fmtp:102 packetization-mode=1;profile-level-id=42e01f;x-google-min-bitrate=300;x-google-max-bitrate=1500",
        "a=rtpmap:96 VP8/90000",
        "a=fmtp:96 x-google-min-bitrate=300;x-google-max-bitrate=1500",
        "a=rtcp-fb:96 nack",
        "a=rtpmap:97 rtx/90000",
        "a=fmtp:97 apt=96",
      ])
    // Applying again updates in place instead of appending.
    d.setVideoBitrateBounds(minKbps: nil, maxKbps: 2000)
    XCTAssertEqual(
      d.media[0].formatParameters(payloadType: 96)?.parameters,
      [
        FormatParameter("x-google-min-bitrate", "300"),
        FormatParameter("x-google-max-bitrate", "2000"),
      ])
  }
}
