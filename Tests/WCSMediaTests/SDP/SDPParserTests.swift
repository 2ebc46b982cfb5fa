import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// A Chrome-style publish offer kept in the test so it means something without the corpus.
let chromeBrowserOffer = """
  v=0
  o=- 4611731400430051336 2 IN IP4 127.0.0.1
  s=-
  t=0 0
  a=group:BUNDLE 0 1
  a=extmap-allow-mixed
  a=msid-semantic: WMS stream1
  m=audio 9 UDP/TLS/RTP/SAVPF 111 0 8
  c=IN IP4 0.0.0.0
  a=rtcp:9 IN IP4 0.0.0.0
  a=ice-ufrag:Qx1b
  a=ice-pwd:5d1yRMd0HYzmtBJmB2qPsgW4
  a=ice-options:trickle
  a=fingerprint:sha-256 1D:E4:43:19:7B:6E:8F:31:A7:BF:B8:BF:73:14:4C:9A:E0:EA:76:3E:8D:05:1E:61:4F:0A:05:64:1C:27:0D:A6
  a=setup:actpass
  a=mid:0
  a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level
  a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
  a=sendonly
  a=msid:stream1 audio1
  a=rtcp-mux
  a=rtpmap:111 opus/48000/2
  a=rtcp-fb:111 transport-cc
  a=fmtp:111 minptime=10;useinbandfec=1
  a=ssrc:1001 cname:c1
  a=ssrc:1001 msid:stream1 audio1
  m=video 9 UDP/TLS/RTP/SAVPF 96 97
  c=IN IP4 0.0.0.0
  a=rtcp:9 IN IP4 0.0.0.0
  a=ice-ufrag:Qx1b
  a=ice-pwd:5d1yRMd0HYzmtBJmB2qPsgW4
  a=ice-options:trickle
  a=fingerprint:sha-256 1D:E4:43:19:7B:6E:8F:31:A7:BF:B8:BF:73:14:4C:9A:E0:EA:76:3E:8D:05:1E:61:4F:0A:05:64:1C:27:0D:A6
  a=setup:actpass
  a=mid:1
  a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
  a=sendonly
  a=msid:stream1 video1
  a=rtcp-mux
  a=rtcp-rsize
  a=rtpmap:96 VP8/90000
  a=rtcp-fb:96 nack
  a=rtcp-fb:96 nack pli
  a=rtpmap:97 rtx/90000
  a=fmtp:97 apt=96
  a=ssrc-group:FID 2001 2002
  a=ssrc:2001 cname:c1
  a=ssrc:2002 cname:c1
  a=candidate:1 1 udp 2122260223 192.168.1.10 50000 typ host generation 0 network-id 1
  a=candidate:2 1 udp 1686052607 203.0.113.7 61000 typ srflx raddr 192.168.1.10 rport 50000
  """

final class SDPParserTests: XCTestCase {
  func testBrowserOfferParsesToTypedValues() throws {
    let r = try SDPParser.parse(chromeBrowserOffer)
    XCTAssertEqual(r.warnings, [])
    let d = r.description
    XCTAssertEqual(
      d.origin,
      SDPOrigin(sessionId: "4611731400430051336", sessionVersion: "2", address: "127.0.0.1"))
    XCTAssertEqual(d.timing, [SDPTiming(start: 0, stop: 0)])
    XCTAssertEqual(d.bundleGroup?.mids, ["0", "1"])
    XCTAssertEqual(
      d.attributes[2], .other(name: "msid-semantic", value: " WMS stream1"))
    XCTAssertEqual(d.media.map(\.mid), ["0", "1"])
    XCTAssertEqual(d.media.map(\.direction), [.sendonly, .sendonly])
    let audio = d.media[0]
    XCTAssertEqual(audio.payloadTypes, [111, 0, 8])
    XCTAssertEqual(
      audio.rtpMap(payloadType: 111),
      RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48000, channels: 2))
    XCTAssertEqual(audio.rtpMap(payloadType: 0)?.encodingName, "PCMU")
    XCTAssertEqual(audio.payloadTypes(forCodec: "OPUS"), [111])
    XCTAssertEqual(audio.formatParameters(payloadType: 111)?["useinbandfec"], "1")
    XCTAssertTrue(
      audio.attributes.contains(.msid(MediaStreamID(streamId: "stream1", trackId: "audio1"))))
    XCTAssertTrue(
      audio.attributes.contains(
        .extmap(HeaderExtensionMap(id: 4, uri: "urn:ietf:params:rtp-hdrext:sdes:mid"))))
    XCTAssertTrue(audio.attributes.contains(.iceOptions(["trickle"])))
    let video = d.media[1]
    XCTAssertEqual(video.candidates.count, 2)
    XCTAssertEqual(video.candidates[1].type, .serverReflexive)
    XCTAssertEqual(video.candidates[1].relatedPort, 50000)
    XCTAssertEqual(video.candidates[0].extensions, [FormatParameter("network-id", "1")])
    XCTAssertEqual(
      SDPWriter.line(for: .candidate(video.candidates[1])),
      "a=candidate:2 1 udp 1686052607 203.0.113.7 61000 typ srflx raddr 192.168.1.10 rport 50000")
    guard
      case .fingerprint(let f)? = video.attributes.first(where: {
        if case .fingerprint = $0 { return true } else { return false }
      })
    else { return XCTFail("no fingerprint") }
    XCTAssertEqual(Array(f.bytes.prefix(3)), [0x1D, 0xE4, 0x43])
    XCTAssertEqual(f.bytes.last, 0xA6)
  }

  func testLFAndCRLFGiveTheSameModelAndWriterIsCRLF() throws {
    let lf = try SessionDescription(parsing: chromeBrowserOffer)
    let crlf = try SessionDescription(
      parsing: chromeBrowserOffer.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n")
    XCTAssertEqual(lf, crlf)
    let text = lf.sdpText
    XCTAssertTrue(SDPCorpus.isCRLFOnly(text))
    XCTAssertEqual(try SessionDescription(parsing: text), lf)
    XCTAssertTrue(
      text.hasPrefix("v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"))
    XCTAssertTrue(text.contains("\r\na=fmtp:111 minptime=10;useinbandfec=1\r\n"))
  }

  func testOddLinesBecomeWarningsNotFailures() throws {
    let text = """
      v=0
      o=- 1 1 IN IP4 10.0.0.1
      s=test
      garbage line
      t=0 0
      c=IN IP4
      m=audio 5000 RTP/AVP 0 101
      a=rtpmap:101 telephone-event
      a=fmtp:101 0-15
      a=fmtp:0 a=1; b ;c=x=y;
      a=candidate:1 1 udp notanumber 10.0.0.1 5000 typ host
      a=setup:sideways
      a=extmap:0 urn:bad
      b=AS:abc
      a=rtcp-fb:* nack
      """
    let r = try SDPParser.parse(text)
    XCTAssertEqual(
      r.warnings,
      [
        SDPWarning(line: 4, reason: "not a <type>=<value> line, kept verbatim"),
        SDPWarning(line: 6, reason: "malformed c= line, kept verbatim"),
        SDPWarning(line: 8, reason: "malformed a=rtpmap, kept verbatim"),
        SDPWarning(line: 11, reason: "malformed a=candidate, kept verbatim"),
        SDPWarning(line: 12, reason: "malformed a=setup, kept verbatim"),
        SDPWarning(line: 13, reason: "malformed a=extmap, kept verbatim"),
        SDPWarning(line: 14, reason: "malformed b= line, kept verbatim"),
      ])
    let d = r.description
    XCTAssertEqual(d.unknownLines, ["garbage line", "c=IN IP4"])
    let m = d.media[0]
    XCTAssertEqual(m.unknownLines, ["b=AS:abc"])
    XCTAssertEqual(m.attributes[0], .other(name: "rtpmap", value: "101 telephone-event"))
    XCTAssertEqual(m.formatParameters(payloadType: 101)?.parameters, [FormatParameter("0-15", nil)])
    XCTAssertEqual(
      m.formatParameters(payloadType: 0)?.parameters,
      [FormatParameter("a", "1"), FormatParameter("b", nil), FormatParameter("c", "x=y")])
    XCTAssertEqual(m.rtcpFeedback(payloadType: 0), [RTCPFeedback(payloadType: nil, type: "nack")])
    XCTAssertEqual(try SessionDescription(parsing: d.sdpText), d)
  }

  func testMissingSessionLinesAreDefaultedWithWarnings() throws {
    let r = try SDPParser.parse("v=0\nm=audio 0 RTP/AVP 0\n")
    XCTAssertEqual(r.description.origin, .placeholder)
    XCTAssertEqual(r.description.sessionName, "-")
    XCTAssertEqual(r.description.timing, [SDPTiming()])
    XCTAssertEqual(r.warnings.map(\.reason).count, 3)
    XCTAssertEqual(r.description.media.first?.isRejected, true)
  }

  func testUnusableSDPThrowsTypedErrors() {
    func error(_ text: String) -> SDPParseError? {
      do {
        _ = try SDPParser.parse(text)
        return nil
      } catch { return error }
    }
    XCTAssertEqual(error(""), .empty)
    XCTAssertEqual(error("\r\n  \n"), .empty)
    XCTAssertEqual(error("o=- 1 1 IN IP4 1.2.3.4\nv=0\n"), .missingVersion(line: 1))
    XCTAssertEqual(error("\nv=x\n"), .missingVersion(line: 2))
    XCTAssertEqual(error("v=0\ns=-\nt=0 0\n"), .noSessionOrMedia)
    XCTAssertEqual(
      error("v=0\no=- 1 1 IN IP4 1.2.3.4\ns=-\nt=0 0\nm=audio x RTP/AVP 0\n"),
      .malformedMediaLine(line: 5, text: "m=audio x RTP/AVP 0"))
    XCTAssertEqual(
      error("v=0\no=- 1 1 IN IP4 1.2.3.4\ns=-\nt=0 0\nm=audio 9\n"),
      .malformedMediaLine(line: 5, text: "m=audio 9"))
  }

  func testCandidateParsingRFC8839() throws {
    let c = try XCTUnwrap(
      ICECandidateAttribute(
        attributeValue:
          "candidate:842163049 1 UDP 1677729535 198.51.100.5 3478 typ relay raddr 0.0.0.0 rport 0 generation 2 ufrag EsAw network-cost 50"
      ))
    XCTAssertEqual(c.foundation, "842163049")
    XCTAssertEqual(c.component, 1)
    XCTAssertTrue(c.isUDP)
    XCTAssertEqual(c.type, .relayed)
    XCTAssertEqual(c.relatedAddress, "0.0.0.0")
    XCTAssertEqual(c.generation, 2)
    XCTAssertEqual(
      c.extensions, [FormatParameter("ufrag", "EsAw"), FormatParameter("network-cost", "50")])
    XCTAssertEqual(
      c.attributeValue,
      "842163049 1 UDP 1677729535 198.51.100.5 3478 typ relay raddr 0.0.0.0 rport 0 generation 2 ufrag EsAw network-cost 50"
    )
    XCTAssertNil(ICECandidateAttribute(attributeValue: "1 1 udp 10 1.2.3.4 99999 typ host"))
    XCTAssertNil(ICECandidateAttribute(attributeValue: "1 1 udp 10 1.2.3.4 5000 type host"))
    XCTAssertNil(ICECandidateAttribute(attributeValue: "1 0 udp 10 1.2.3.4 5000 typ host"))
  }

  func testLessCommonTypedFormsRoundTrip() throws {
    let text = """
      v=0
      o=- 1 1 IN IP6 ::1
      s=-
      i=session info
      u=http://example.com/sdp
      e=a@example.com
      p=+1 555 0100
      b=AS:2000
      t=3034423619 3042462419
      r=7d 1h 0 25h
      z=2882844526 -1h
      a=ice-lite
      a=ice-options:trickle ice2
      m=video 49170/2 RTP/AVPF 96
      i=camera
      c=IN IP6 ff15::101/3
      b=TIAS:1500000
      a=extmap:5/sendonly urn:example:ext some attrs
      a=rtcp-fb:* trr-int 100
      a=ssrc:4294967295 cname:max
      a=ssrc-group:SIM 1 2 3
      a=msid:- track
      a=sctp-port:5000
      a=fingerprint:sha-1 AB:CD
      a=setup:holdconn
      """
    let r = try SDPParser.parse(text)
    XCTAssertEqual(r.warnings, [])
    let d = r.description
    XCTAssertEqual(d.origin.addressType, "IP6")
    XCTAssertEqual(d.information, "session info")
    XCTAssertEqual(d.bandwidths, [SDPBandwidth(type: "AS", value: 2000)])
    XCTAssertEqual(
      d.timing, [SDPTiming(start: 3_034_423_619, stop: 3_042_462_419, repeats: ["7d 1h 0 25h"])])
    XCTAssertEqual(d.timeZones, "2882844526 -1h")
    XCTAssertTrue(d.isICELite)
    XCTAssertTrue(d.attributes.contains(.iceOptions(["trickle", "ice2"])))
    let m = d.media[0]
    XCTAssertEqual(m.portCount, 2)
    XCTAssertEqual(m.connections, [SDPConnection(addressType: "IP6", address: "ff15::101/3")])
    XCTAssertEqual(
      m.attributes,
      [
        .extmap(
          HeaderExtensionMap(
            id: 5, direction: .sendonly, uri: "urn:example:ext", extensionAttributes: "some attrs")),
        .rtcpFeedback(RTCPFeedback(payloadType: nil, type: "trr-int", parameter: "100")),
        .ssrc(SSRCAttribute(ssrc: 4_294_967_295, attribute: "cname", value: "max")),
        .ssrcGroup(SSRCGroup(semantics: "SIM", ssrcs: [1, 2, 3])),
        .msid(MediaStreamID(streamId: "-", trackId: "track")),
        .sctpPort(5000),
        .fingerprint(CertificateFingerprint(hashFunction: "sha-1", bytes: [0xAB, 0xCD])),
        .setup(.holdconn),
      ])
    let written = d.sdpText
    XCTAssertEqual(try SessionDescription(parsing: written), d)
    XCTAssertTrue(
      written.contains(
        "\r\nm=video 49170/2 RTP/AVPF 96\r\ni=camera\r\nc=IN IP6 ff15::101/3\r\nb=TIAS:1500000\r\n")
    )
    XCTAssertTrue(written.contains("\r\na=extmap:5/sendonly urn:example:ext some attrs\r\n"))
  }

  func testOutOfRangeNumbersAreMalformedNotCrashes() throws {
    let text = """
      v=0
      o=- 1 1 IN IP4 1.1.1.1
      s=-
      t=0 0
      m=audio 9 RTP/AVP 0
      a=ssrc:4294967296 cname:x
      a=candidate:1 1 udp 99999999999999999999999 1.1.1.1 1 typ host
      a=rtpmap:128 foo/8000
      a=extmap:256 urn:x
      a=fingerprint:sha-256 A:BC
      a=sctp-port:70000
      a=fmtp:abc x=1
      """
    let r = try SDPParser.parse(text)
    XCTAssertEqual(r.warnings.map(\.line), [6, 7, 8, 9, 10, 11, 12])
    XCTAssertEqual(
      r.description.media[0].attributes.first, .other(name: "ssrc", value: "4294967296 cname:x"))
    XCTAssertThrowsError(try SDPParser.parse("v=0\nm=audio 70000 RTP/AVP 0\n"))
  }
}
