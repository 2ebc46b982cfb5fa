import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class SDPAnswerReaderTests: XCTestCase {
  /// A WCS publish answer in the shape of wcs-protocol.md §4.3 (TCP excerpt): Flashphoner
  /// origin, one port per m-line, no BUNDLE, no a=mid, no a=setup, component 1 and 2 candidates
  /// on the same port, a repeated candidate, upper-case codec names.
  static let wcsAnswer = """
    v=0
    o=Flashphoner 0 1702900000123 IN IP4 192.168.10.5
    s=Flashphoner/1.0
    c=IN IP4 192.168.10.5
    t=0 0
    a=ice-ufrag:sessionUfrag
    a=ice-pwd:sessionPwdSessionPwd1234
    a=fingerprint:sha-256 9A:07:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E
    m=audio 31004 RTP/SAVPF 111 0
    c=IN IP4 192.168.10.5
    a=ice-ufrag:d41f8a2c
    a=ice-pwd:4b2e9d0c77a1f3e5b6c8d9e0
    a=candidate:1 1 tcp 2130706431 192.168.10.5 31004 typ host tcptype passive
    a=candidate:1 2 tcp 2130706431 192.168.10.5 31004 typ host tcptype passive
    a=candidate:1 1 tcp 2130706431 192.168.10.5 31004 typ host tcptype passive
    a=end-of-candidates
    a=rtcp-mux
    a=rtcp:31004 IN IP4 192.168.10.5
    a=recvonly
    a=rtpmap:111 OPUS/48000/2
    a=fmtp:111 minptime=10; useinbandfec=1
    a=ssrc:1234567 cname:rtp/audio/0f8b6a10-9c3e-11ee-8a51-4f0d1c2b7e01
    m=video 31006 RTP/SAVPF 100 96
    c=IN IP4 192.168.10.5
    a=candidate:2 1 tcp 2130706431 192.168.10.5 31006 typ host tcptype passive
    a=candidate:2 2 tcp 2130706431 192.168.10.5 31006 typ host tcptype passive
    a=end-of-candidates
    a=rtcp-mux
    a=rtcp:31006 IN IP4 192.168.10.5
    a=recvonly
    a=rtpmap:100 H264/90000
    a=rtpmap:96 vp8/90000
    a=rtcp-fb:96 nack pli
    a=ssrc:7654321 cname:rtp/video/0f8b6a10-9c3e-11ee-8a51-4f0d1c2b7e01
    """

  func testWCSAnswerTransportAndCodecs() throws {
    let offer = SDPOfferBuilder.publishOffer(SDPOfferBuilderTests.parameters())
    let answer = try SessionDescription(parsing: Self.wcsAnswer)
    XCTAssertEqual(answer.origin.username, "Flashphoner")
    XCTAssertEqual(answer.sessionName, "Flashphoner/1.0")
    let a = try SDPAnswerReader.analyze(answer: answer, offer: offer)

    XCTAssertEqual(a.bundledMids, [])
    XCTAssertEqual(a.transport.iceUfrag, "d41f8a2c", "media level wins over session level")
    XCTAssertEqual(a.transport.icePwd, "4b2e9d0c77a1f3e5b6c8d9e0")
    XCTAssertFalse(a.transport.iceLite)
    XCTAssertTrue(a.transport.endOfCandidates)
    XCTAssertEqual(a.transport.candidates.map(\.component), [1, 2], "duplicate removed")
    XCTAssertEqual(a.transport.candidates.first?.port, 31004)
    XCTAssertEqual(a.transport.candidates.first?.tcpType, "passive")
    XCTAssertEqual(a.transport.fingerprint.hashFunction, "sha-256")
    XCTAssertEqual(Array(a.transport.fingerprint.bytes.prefix(2)), [0x9A, 0x07])
    XCTAssertEqual(a.transport.fingerprint.bytes.count, 32)
    XCTAssertEqual(a.transport.setup, .active)
    XCTAssertTrue(a.transport.setupDefaulted)
    XCTAssertEqual(
      a.notes,
      [
        "m-section 0: a=setup missing, using the WCS default active",
        "m-section 1: a=setup missing, using the WCS default active",
      ])

    XCTAssertEqual(a.media.map(\.mid), [nil, nil])
    XCTAssertEqual(a.media.map(\.offerIndex), [0, 1], "matched by index without a=mid")
    XCTAssertEqual(a.media.map(\.direction), [.recvonly, .recvonly])
    XCTAssertEqual(a.media[0].payloadTypes, [111, 0], "OPUS matches offered opus")
    XCTAssertEqual(a.media[0].codecs[0].offeredPayloadType, 111)
    XCTAssertEqual(
      a.media[0].codecs[0].formatParameters?.parameters,
      [FormatParameter("minptime", "10"), FormatParameter("useinbandfec", "1")])
    XCTAssertEqual(a.media[0].codecs[1].rtpMap.encodingName, "PCMU")
    XCTAssertEqual(a.media[1].payloadTypes, [96], "H264 was not offered")
    XCTAssertEqual(
      a.media[1].codecs[0].rtcpFeedback,
      [RTCPFeedback(payloadType: 96, type: "nack", parameter: "pli")])

    // Not bundled: the video section has its own port but the session-level credentials.
    let video = try XCTUnwrap(a.media[1].transport)
    XCTAssertEqual(video.iceUfrag, "sessionUfrag")
    XCTAssertEqual(video.candidates.map(\.port), [31006, 31006])
  }

  func testBundledAnswerMergesCandidatesAndUsesSessionFingerprint() throws {
    let text = """
      v=0
      o=Flashphoner 0 1702900003001 IN IP4 192.168.10.5
      s=Flashphoner/1.0
      t=0 0
      a=group:BUNDLE 0 1
      a=fingerprint:SHA-256 01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E:0F:10:11:12:13:14:15:16:17:18:19:1A:1B:1C:1D:1E:1F:20
      m=audio 31006 UDP/TLS/RTP/SAVPF 111
      a=mid:0
      a=ice-ufrag:abcd
      a=ice-pwd:abcdefghijklmnopqrstuv
      a=setup:passive
      a=candidate:1 1 udp 2130706431 192.168.10.5 31006 typ host
      a=end-of-candidates
      a=sendonly
      a=rtpmap:111 opus/48000/2
      m=video 31006 UDP/TLS/RTP/SAVPF 96
      a=mid:1
      a=ice-ufrag:abcd
      a=ice-pwd:abcdefghijklmnopqrstuv
      a=candidate:1 1 udp 2130706431 192.168.10.5 31006 typ host
      a=candidate:2 1 udp 2130706431 10.0.0.5 31006 typ host
      a=end-of-candidates
      a=sendonly
      a=rtpmap:96 VP8/90000
      """
    let offer = SDPOfferBuilder.playOffer(SDPOfferBuilderTests.parameters())
    let a = try SDPAnswerReader.analyze(answer: try SessionDescription(parsing: text), offer: offer)
    XCTAssertEqual(a.bundledMids, ["0", "1"])
    XCTAssertEqual(a.transport.setup, .passive)
    XCTAssertFalse(a.transport.setupDefaulted)
    XCTAssertEqual(a.transport.fingerprint.hashFunction, "sha-256")
    XCTAssertEqual(a.transport.fingerprint.bytes.first, 1)
    XCTAssertEqual(a.transport.candidates.map(\.address), ["192.168.10.5", "10.0.0.5"])
    XCTAssertEqual(a.media[1].transport, a.transport)
    XCTAssertEqual(a.media.map(\.offerIndex), [0, 1])
    XCTAssertEqual(a.notes, [])
  }

  func testMidMatchingWhenOrderDiffers() throws {
    guard let text = SDPCorpus.text("pion-test-janus-videoroom-rejected-mline-no-fingerprint.sdp")
    else { throw XCTSkip("corpus not present") }
    let answer = try SessionDescription(parsing: text)
    // The offer lists audio first; the answer lists video (rejected) first.
    let offer = SDPOfferBuilder.playOffer(SDPOfferBuilderTests.parameters())
    var renamed = offer
    renamed.media[0].attributes = renamed.media[0].attributes.map {
      if case .mid = $0 { return .mid("audio") } else { return $0 }
    }
    renamed.media[1].attributes = renamed.media[1].attributes.map {
      if case .mid = $0 { return .mid("video") } else { return $0 }
    }
    let a = try SDPAnswerReader.analyze(answer: answer, offer: renamed)
    XCTAssertEqual(a.media.map(\.offerIndex), [1, 0])
    XCTAssertTrue(a.media[0].isRejected)
    XCTAssertNil(a.media[0].transport)
    XCTAssertEqual(a.media[0].codecs, [])
    XCTAssertEqual(a.media[1].payloadTypes, [111])
    XCTAssertEqual(a.transport.iceUfrag, "AS/w")
    XCTAssertEqual(a.transport.icePwd, "9NOgoAOMALYu/LOpA1iqg/")
    XCTAssertEqual(a.transport.setup, .active)
    XCTAssertFalse(a.transport.setupDefaulted)
    XCTAssertEqual(a.transport.candidates.map(\.port), [46492])
    XCTAssertTrue(a.transport.endOfCandidates)
    XCTAssertEqual(a.transport.fingerprint.bytes.prefix(3), [0xD2, 0xB9, 0x31])
  }

  func testCorpusICELiteAnswer() throws {
    guard let text = SDPCorpus.text("sdp-transform-icelite.sdp") else {
      throw XCTSkip("corpus not present")
    }
    let a = try SDPAnswerReader.analyze(answer: try SessionDescription(parsing: text))
    XCTAssertTrue(a.transport.iceLite)
    XCTAssertEqual(a.transport.iceUfrag, "nXET")
    XCTAssertEqual(a.transport.candidates.map(\.component), [1, 2])
    XCTAssertEqual(a.transport.candidates.map(\.port), [10018, 10019])
    XCTAssertFalse(a.transport.endOfCandidates)
    // The file says actpass, which an answer must not: treated like a missing a=setup.
    XCTAssertEqual(a.transport.setup, .active)
    XCTAssertTrue(a.transport.setupDefaulted)
    XCTAssertEqual(a.media[0].payloadTypes, [8, 0, 101])
    XCTAssertNil(a.media[0].offerIndex)
    if let lite = SDPCorpus.text("aiortc-chrome-derived-ice-lite-audio.sdp") {
      let b = try SDPAnswerReader.analyze(answer: try SessionDescription(parsing: lite))
      XCTAssertTrue(b.transport.iceLite)
    }
  }

  func testUnsupportedCandidateTransportIsDropped() throws {
    guard let text = SDPCorpus.text("pion-test-ssltcp-candidate-offer.sdp") else {
      throw XCTSkip("corpus not present")
    }
    let a = try SDPAnswerReader.analyze(answer: try SessionDescription(parsing: text))
    XCTAssertEqual(a.transport.candidates, [])
    XCTAssertTrue(a.notes.contains("m-section 0: candidate with transport ssltcp ignored"))
  }

  func testUnusableAnswersThrow() throws {
    let rejected = try SessionDescription(
      parsing: "v=0\no=- 1 1 IN IP4 1.1.1.1\ns=-\nt=0 0\nm=audio 0 RTP/SAVPF 0\n")
    XCTAssertThrowsError(try SDPAnswerReader.analyze(answer: rejected)) {
      XCTAssertEqual($0 as? SDPAnswerError, .allMediaSectionsRejected)
      XCTAssertEqual("\($0)", "every media section is rejected (port 0)")
    }
    let noMedia = try SessionDescription(parsing: "v=0\no=- 1 1 IN IP4 1.1.1.1\ns=-\nt=0 0\n")
    XCTAssertThrowsError(try SDPAnswerReader.analyze(answer: noMedia)) {
      XCTAssertEqual($0 as? SDPAnswerError, .noMediaSections)
      XCTAssertEqual("\($0)", "no media sections")
    }
    let noICE = try SessionDescription(
      parsing: "v=0\no=- 1 1 IN IP4 1.1.1.1\ns=-\nt=0 0\nm=audio 9 RTP/SAVPF 0\n")
    XCTAssertThrowsError(try SDPAnswerReader.analyze(answer: noICE)) {
      XCTAssertEqual($0 as? SDPAnswerError, .missingICECredentials(mediaIndex: 0))
    }
    let noFingerprint = try SessionDescription(
      parsing:
        "v=0\no=- 1 1 IN IP4 1.1.1.1\ns=-\nt=0 0\nm=audio 9 RTP/SAVPF 0\na=ice-ufrag:abcd\na=ice-pwd:abcdefghijklmnopqrstuv\na=fingerprint:sha-256 ZZ:01\n"
    )
    XCTAssertThrowsError(try SDPAnswerReader.analyze(answer: noFingerprint)) {
      XCTAssertEqual($0 as? SDPAnswerError, .missingFingerprint(mediaIndex: 0))
    }
  }

  func testICECredentialsOverRFC8839sLengthAreRefused() throws {
    func answer(ufrag: String, pwd: String) throws -> SessionDescription {
      try SessionDescription(
        parsing:
          "v=0\no=- 1 1 IN IP4 1.1.1.1\ns=-\nt=0 0\nm=audio 9 RTP/SAVPF 0\na=ice-ufrag:\(ufrag)\na=ice-pwd:\(pwd)\na=fingerprint:sha-256 \(Array(repeating: "AB", count: 32).joined(separator: ":"))\n"
      )
    }
    let pwd = "abcdefghijklmnopqrstuv"
    // 256 is the largest RFC 8839 allows; a three-character ufrag (below its minimum of 4) is
    // taken, as deployed peers send them.
    XCTAssertEqual(
      try SDPAnswerReader.analyze(
        answer: answer(ufrag: String(repeating: "u", count: 256), pwd: pwd)
      )
      .transport.iceUfrag.count, 256)
    XCTAssertEqual(
      try SDPAnswerReader.analyze(answer: answer(ufrag: "abc", pwd: pwd)).transport.iceUfrag,
      "abc")
    XCTAssertThrowsError(
      try SDPAnswerReader.analyze(
        answer: answer(ufrag: String(repeating: "u", count: 257), pwd: pwd))
    ) {
      XCTAssertEqual(
        $0 as? SDPAnswerError,
        .invalidICECredentials(mediaIndex: 0, ufragLength: 257, pwdLength: 22))
    }
    XCTAssertThrowsError(
      try SDPAnswerReader.analyze(
        answer: answer(ufrag: "abcd", pwd: String(repeating: "p", count: 300)))
    ) {
      XCTAssertEqual(
        $0 as? SDPAnswerError,
        .invalidICECredentials(mediaIndex: 0, ufragLength: 4, pwdLength: 300))
    }
  }
}
