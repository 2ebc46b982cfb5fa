import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// Every corpus SDP: parse → write → parse gives an equal model, plus real values per file.
final class SDPCorpusTests: XCTestCase {
  private struct Expected {
    var sections: [String]  // media kinds in m= order
    var firstCodec: String?  // encoding name of the first m= format of the first RTP section
    var candidates: Int
    var fingerprintPrefix: String?  // first three bytes of the first fingerprint found
    var iceLite: Bool = false
    var warnings: Int = 0
  }

  private let expected: [String: Expected] = [
    "aiortc-chrome-audio-offer.sdp": Expected(
      sections: ["audio"], firstCodec: "opus", candidates: 4, fingerprintPrefix: "6B:8B:5D"),
    "aiortc-chrome-derived-ice-lite-audio.sdp": Expected(
      sections: ["audio"], firstCodec: "PCMU", candidates: 2, fingerprintPrefix: "6B:8B:5D",
      iceLite: true),
    "aiortc-chrome-video-offer.sdp": Expected(
      sections: ["video"], firstCodec: "VP8", candidates: 2, fingerprintPrefix: "30:4A:BF"),
    "aiortc-firefox58-audio-offer.sdp": Expected(
      sections: ["audio"], firstCodec: "opus", candidates: 10, fingerprintPrefix: "EB:A9:3E"),
    "aiortc-firefox58-datachannel-offer.sdp": Expected(
      sections: ["application"], firstCodec: nil, candidates: 4, fingerprintPrefix: "39:4A:09"),
    "aiortc-firefox61-video-offer.sdp": Expected(
      sections: ["video"], firstCodec: "VP8", candidates: 4, fingerprintPrefix: "AF:9E:29"),
    "aiortc-freeswitch-audio-dtls.sdp": Expected(
      sections: ["audio"], firstCodec: "PCMA", candidates: 1, fingerprintPrefix: "35:5A:BC"),
    "aiortc-safari-audio-video-data-offer.sdp": Expected(
      sections: ["audio", "video", "application"], firstCodec: "opus", candidates: 9,
      fingerprintPrefix: "F2:68:A5"),
    "flashphoner-websdk-flash-default.sdp": Expected(
      sections: ["video", "audio"], firstCodec: "H264", candidates: 0, fingerprintPrefix: nil,
      warnings: 1),
    "flashphoner-websdk-wsplayer-playStream-offer.sdp": Expected(
      sections: ["video", "audio"], firstCodec: "MPV", candidates: 0, fingerprintPrefix: nil,
      warnings: 1),
    "pion-test-chrome-multicodec-datachannel-offer.sdp": Expected(
      sections: ["application", "video", "video"], firstCodec: "VP9", candidates: 0,
      fingerprintPrefix: nil),
    "pion-test-janus-videoroom-offer-trickle.sdp": Expected(
      sections: ["audio", "video"], firstCodec: "opus", candidates: 0,
      fingerprintPrefix: "61:BF:17"),
    "pion-test-janus-videoroom-rejected-mline-no-fingerprint.sdp": Expected(
      sections: ["video", "audio"], firstCodec: "PCMU", candidates: 1,
      fingerprintPrefix: "D2:B9:31"),
    "pion-test-libwebrtc-google-ice-offer.sdp": Expected(
      sections: ["video"], firstCodec: "VP8", candidates: 0, fingerprintPrefix: "75:74:5A"),
    "pion-test-offer-inactive.sdp": Expected(
      sections: ["video"], firstCodec: "H264", candidates: 0, fingerprintPrefix: "F7:BF:B4"),
    "pion-test-ssltcp-candidate-offer.sdp": Expected(
      sections: ["application"], firstCodec: nil, candidates: 1, fingerprintPrefix: "75:74:5A"),
    "sdp-transform-hacky.sdp": Expected(
      sections: ["audio", "video", "application"], firstCodec: "opus", candidates: 8,
      fingerprintPrefix: "F0:37:78"),
    "sdp-transform-icelite.sdp": Expected(
      sections: ["audio"], firstCodec: "PCMA", candidates: 2, fingerprintPrefix: "CE:17:02",
      iceLite: true),
    "sdp-transform-invalid.sdp": Expected(
      sections: ["audio"], firstCodec: "PCMU", candidates: 0, fingerprintPrefix: nil,
      warnings: 1),
    "sdp-transform-jsep.sdp": Expected(
      sections: ["audio", "video"], firstCodec: "opus", candidates: 2,
      fingerprintPrefix: "19:E2:1C"),
    "sdp-transform-jssip.sdp": Expected(
      sections: ["audio"], firstCodec: "opus", candidates: 6, fingerprintPrefix: "79:14:AB"),
    "sdp-transform-sctp-dtls-26.sdp": Expected(
      sections: ["application"], firstCodec: nil, candidates: 0, fingerprintPrefix: "10:8E:F5"),
    "sdp-transform-simulcast.sdp": Expected(
      sections: ["audio", "video"], firstCodec: "PCMU", candidates: 0, fingerprintPrefix: nil),
    "sdp-transform-ssrc.sdp": Expected(
      sections: ["audio", "video"], firstCodec: "opus", candidates: 0,
      fingerprintPrefix: "D2:FA:0E"),
  ]

  func testEveryCorpusFileRoundTripsAndHasItsValues() throws {
    let files = SDPCorpus.files()
    try XCTSkipIf(files.isEmpty, "../shared/corpus/sdp not present")
    for url in files {
      let name = url.lastPathComponent
      let text = try String(contentsOf: url, encoding: .utf8)
      let first = try SDPParser.parse(text)
      let written = SDPWriter.write(first.description)
      let second = try SDPParser.parse(written)
      XCTAssertEqual(second.description, first.description, "\(name) round trip")
      XCTAssertEqual(SDPWriter.write(second.description), written, "\(name) writer is stable")
      XCTAssertFalse(written.contains("\n\n"), name)
      XCTAssertTrue(SDPCorpus.isCRLFOnly(written), "\(name) CRLF")

      guard let e = expected[name] else {
        XCTFail("no expectations for corpus file \(name)")
        continue
      }
      let d = first.description
      XCTAssertEqual(first.warnings.count, e.warnings, "\(name): \(first.warnings)")
      XCTAssertEqual(d.media.map(\.media), e.sections, name)
      let firstRTP = d.media.first { !$0.payloadTypes.isEmpty }
      XCTAssertEqual(
        firstRTP.flatMap { m in m.payloadTypes.first.flatMap { m.rtpMap(payloadType: $0) } }?
          .encodingName, e.firstCodec, name)
      XCTAssertEqual(d.media.reduce(0) { $0 + $1.candidates.count }, e.candidates, name)
      XCTAssertEqual(d.isICELite, e.iceLite, name)
      let fingerprints = (d.attributes + d.media.flatMap(\.attributes)).compactMap {
        if case .fingerprint(let f) = $0 { return f } else { return nil }
      }
      XCTAssertEqual(
        fingerprints.first.map { String($0.hexString.prefix(8)) }, e.fingerprintPrefix, name)
      if let f = fingerprints.first {
        XCTAssertEqual(f.hashFunction, "sha-256", name)
        XCTAssertEqual(f.bytes.count, 32, name)
      }
    }
    XCTAssertEqual(files.count, expected.count, "every expected corpus file is present")
  }

  func testChromeVideoOfferDetails() throws {
    guard let text = SDPCorpus.text("aiortc-chrome-video-offer.sdp") else {
      throw XCTSkip("corpus not present")
    }
    let d = try SessionDescription(parsing: text)
    XCTAssertEqual(d.origin.sessionId, "5195484278799753993")
    XCTAssertEqual(d.bundleGroup, SDPGroup(semantics: "BUNDLE", mids: ["video"]))
    let m = try XCTUnwrap(d.media.first)
    XCTAssertEqual(m.port, 34955)
    XCTAssertEqual(m.proto, "UDP/TLS/RTP/SAVPF")
    XCTAssertEqual(m.payloadTypes, [96, 97, 98, 99, 100, 101, 102])
    XCTAssertEqual(m.formatParameters(payloadType: 97)?.associatedPayloadType, 96)
    XCTAssertEqual(
      m.rtcpFeedback(payloadType: 96).map { $0.type + ($0.parameter.map { " " + $0 } ?? "") },
      ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"])
    XCTAssertEqual(
      m.headerExtensions.first(where: { $0.id == 5 })?.uri,
      "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01")
    XCTAssertTrue(
      m.attributes.contains(
        .ssrcGroup(SSRCGroup(semantics: "FID", ssrcs: [1845476211, 3305256354]))))
    XCTAssertTrue(m.attributes.contains(.iceUfrag("9KhP")))
    XCTAssertTrue(m.attributes.contains(.setup(.actpass)))
    XCTAssertTrue(m.hasRTCPMux)
    XCTAssertTrue(m.attributes.contains(.rtcpReducedSize))
    XCTAssertTrue(m.attributes.contains(.other(name: "rtcp", value: "9 IN IP4 0.0.0.0")))
    let tcp = try XCTUnwrap(m.candidates.last)
    XCTAssertEqual(tcp.foundation, "1754264922")
    XCTAssertEqual(tcp.priority, 1_518_280_447)
    XCTAssertEqual(tcp.port, 9)
    XCTAssertEqual(tcp.tcpType, "active")
    XCTAssertEqual(tcp.generation, 0)
    XCTAssertEqual(
      tcp.extensions, [FormatParameter("network-id", "2"), FormatParameter("network-cost", "10")])
    let msid = m.ssrcAttributes.first { $0.ssrc == 1845476211 && $0.attribute == "msid" }
    XCTAssertEqual(
      msid?.value,
      "bbgewhUzS6hvFDlSlrhQ6zYlwW7ttRrK8QeQ 420c6f28-439d-4ead-b93c-94e14c0a16b4")
  }

  func testInvalidFileKeepsWhatItCan() throws {
    guard let text = SDPCorpus.text("sdp-transform-invalid.sdp") else {
      throw XCTSkip("corpus not present")
    }
    let r = try SDPParser.parse(text)
    XCTAssertEqual(
      r.warnings,
      [SDPWarning(line: 10, reason: "unknown or misplaced line type in m-section, kept verbatim")])
    let m = try XCTUnwrap(r.description.media.first)
    XCTAssertEqual(m.unknownLines, ["f=invalid:yes"])
    XCTAssertEqual(m.rtpMap(payloadType: 0)?.encodingName, "PCMU")
    XCTAssertEqual(m.connections, [SDPConnection(address: "0.0.0.0")])
    XCTAssertEqual(
      m.attributes,
      [
        .other(name: "rtcp", value: "1 IN IP7 X"),
        .rtpmap(RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000)),
        .other(name: "goo", value: "hithere"),
      ])
  }

  func testHackyCandidatesAndFlashFmtpSpacing() throws {
    if let hacky = SDPCorpus.text("sdp-transform-hacky.sdp") {
      let d = try SessionDescription(parsing: hacky)
      let c = d.media[0].candidates
      XCTAssertEqual(
        c.map(\.tcpType), [nil, "active", "active", "passive", "so", "active", "passive", "so"])
      XCTAssertEqual(c[5].type, .serverReflexive)
      XCTAssertEqual(c[5].relatedAddress, "10.0.1.1")
      XCTAssertEqual(c[5].relatedPort, 9)
      XCTAssertEqual(c[6].generation, 5)
      XCTAssertEqual(d.media[2].proto, "DTLS/SCTP")
      XCTAssertTrue(d.media[0].attributes.contains(.other(name: "ptime", value: "0.125")))
    }
    if let flash = SDPCorpus.text("flashphoner-websdk-flash-default.sdp") {
      let d = try SessionDescription(parsing: flash)
      XCTAssertEqual(
        d.media[0].formatParameters(payloadType: 112)?.parameters,
        [FormatParameter("packetization-mode", "1"), FormatParameter("profile-level-id", "420020")])
      XCTAssertTrue(d.media[0].attributes.contains(.other(name: "VIDEO_STATE", value: nil)))
      XCTAssertEqual(d.sessionName, "-")
    }
  }
}
