import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// Offer/answer in SDP text between two PeerConnections on 127.0.0.1.
final class PeerConnectionSDPTests: XCTestCase {
  static let audio = SDPOfferParameters.Audio(
    direction: .sendrecv, ssrc: 0x0A0B_0C0D, trackId: "audio0")

  func testSDPOfferAnswerConnectsAndTheAnswerMirrorsTheOffer() throws {
    for lite in [false, true] {
      let peers = LoopbackPeers(answererLite: lite)
      defer { peers.shutdown() }
      let (offer, answer) = try peers.loop.submit {
        let offer = try peers.offerer.createOffer(audio: Self.audio, video: nil)
        try peers.answerer.setRemoteDescription(offer: offer)
        let answer = try peers.answerer.createAnswer()
        try peers.offerer.setRemoteDescription(answer: answer)
        return (offer, answer)
      }
      XCTAssertTrue(offer.contains("a=setup:actpass\r\n"))
      XCTAssertTrue(offer.contains("a=group:BUNDLE 0"))
      XCTAssertTrue(offer.contains(" typ host"))
      XCTAssertTrue(answer.contains("a=setup:active\r\n"), answer)
      XCTAssertTrue(answer.contains("a=group:BUNDLE 0"), answer)
      XCTAssertTrue(answer.contains("a=rtpmap:111 opus/48000/2"), answer)
      XCTAssertEqual(answer.contains("a=ice-lite"), lite)
      let parsed = try SDPParser.parse(answer).description
      XCTAssertEqual(parsed.media.first?.direction, .sendrecv)
      XCTAssertTrue(peers.waitForBoth { $0 == .connected }, "lite \(lite)")
      let negotiated = peers.loop.submit { peers.offerer.remoteAnswer?.media.first?.payloadTypes }
      XCTAssertEqual(negotiated?.first, 111)

      let media = TestMedia.packets(ssrc: Self.audio.ssrc, count: 10, seed: 9)
      try peers.send(media, from: peers.offerer)
      XCTAssertTrue(eventually { peers.answererRecorder.rtp.value.count == media.count })
      XCTAssertEqual(peers.answererRecorder.rtp.value.map(\.packet), media)
    }
  }

  /// The answer's `o=` line is the answerer's own (RFC 3264 §5): a different random session id
  /// in 1...2^62; a later answer from the same connection keeps it and bumps the version (§8).
  func testTheAnswerHasItsOwnOriginKeptAcrossAnswers() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    let (offer, first, second) = try peers.loop.submit {
      let offer = try peers.offerer.createOffer(audio: Self.audio, video: nil)
      try peers.answerer.setRemoteDescription(offer: offer)
      let first = try peers.answerer.createAnswer()
      let second = try peers.answerer.createAnswer()
      return (
        try SDPParser.parse(offer).description.origin,
        try SDPParser.parse(first).description.origin,
        try SDPParser.parse(second).description.origin
      )
    }
    XCTAssertNotEqual(first.sessionId, offer.sessionId)
    let id = try XCTUnwrap(UInt64(first.sessionId), first.sessionId)
    XCTAssertTrue((1...(UInt64(1) << 62)).contains(id), "\(id)")
    XCTAssertEqual(first.sessionVersion, "1")
    XCTAssertEqual(second.sessionId, first.sessionId)
    XCTAssertEqual(second.sessionVersion, "2")
    XCTAssertEqual(peers.loop.submit { peers.answerer.answerOrigin?.sessionId }, id)
  }

  /// As WCS clients do: an offer without candidates; the ICE-lite answerer learns our address
  /// from our checks (peer-reflexive, RFC 8445 §7.3.1.3).
  func testOfferWithoutCandidatesConnectsToALiteAnswerer() throws {
    let peers = LoopbackPeers(answererLite: true)
    defer { peers.shutdown() }
    let offer = try peers.loop.submit {
      let offer = try peers.offerer.createOffer(
        audio: Self.audio, video: nil, mode: .publish, includeCandidates: false)
      try peers.answerer.setRemoteDescription(offer: offer)
      try peers.offerer.setRemoteDescription(answer: try peers.answerer.createAnswer())
      return offer
    }
    XCTAssertFalse(offer.contains("a=candidate"))
    XCTAssertTrue(offer.contains("a=sendonly"))
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    let pair = try XCTUnwrap(peers.loop.submit { peers.answerer.stats.selectedPair })
    XCTAssertEqual(pair.remote.type, .peerReflexive)
  }

  func testTamperedFingerprintInTheSDPAnswerFails() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    try peers.loop.submit {
      let offer = try peers.offerer.createOffer(audio: Self.audio, video: nil)
      try peers.answerer.setRemoteDescription(offer: offer)
      let answer = try peers.answerer.createAnswer()
      try peers.offerer.setRemoteDescription(answer: SDPTampering.flipFingerprints(answer))
    }
    XCTAssertTrue(
      eventually {
        if case .failed(.dtls(.fingerprintMismatch)) = peers.offererRecorder.lastState {
          return true
        }
        return false
      }, "\(peers.offererRecorder.states)")
    XCTAssertFalse(peers.answererRecorder.states.contains(.connected))
  }

  func testMalformedSDPIsATypedError() throws {
    let loop = EventLoop(label: "sdp-errors")
    defer { loop.shutdown() }
    let connection = PeerConnection(configuration: .loopback, loop: loop)
    try loop.submit {
      XCTAssertThrowsError(try connection.setRemoteDescription(offer: "")) {
        guard case .sdp = $0 as? PeerConnectionError else { return XCTFail("\($0)") }
      }
      XCTAssertThrowsError(
        try connection.setRemoteDescription(
          offer:
            "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n")
      ) {
        guard case .sdp = $0 as? PeerConnectionError else { return XCTFail("\($0)") }
      }
      let session = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
      XCTAssertThrowsError(try connection.setRemoteDescription(offer: session)) {
        XCTAssertEqual($0 as? PeerConnectionError, .unanswerableOffer(.noMediaSections))
      }
      XCTAssertThrowsError(
        try connection.setRemoteDescription(
          offer: session + "m=audio 0 UDP/TLS/RTP/SAVPF 111\r\nm=video 0 UDP/TLS/RTP/SAVPF 96\r\n")
      ) {
        XCTAssertEqual($0 as? PeerConnectionError, .unanswerableOffer(.allMediaSectionsRejected))
      }
      XCTAssertThrowsError(try connection.createAnswer())
      connection.close()
    }
  }
}

enum SDPTampering {
  /// Flips the low bit of the first digest byte of every `a=fingerprint` line.
  static func flipFingerprints(_ sdp: String) -> String {
    sdp.components(separatedBy: "\r\n").map { line -> String in
      guard line.hasPrefix("a=fingerprint:"), let space = line.firstIndex(of: " ") else {
        return line
      }
      let hexStart = line.index(after: space)
      guard let byte = UInt8(line[hexStart..<line.index(hexStart, offsetBy: 2)], radix: 16) else {
        return line
      }
      let flipped = String(format: "%02X", byte ^ 0x01)
      return String(line[..<hexStart]) + flipped
        + String(line[line.index(hexStart, offsetBy: 2)...])
    }.joined(separator: "\r\n")
  }
}
