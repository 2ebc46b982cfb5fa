import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// Hostile SDP answers given to `PeerConnection.setRemoteDescription(answer:)`: candidates the
/// agent must not (or cannot) send to, oversized ICE credentials, answers out of turn. Each
/// must be a typed error or a skipped input, and the connection must still carry media.
final class HostileAnswerTests: XCTestCase {
  static let audio = SDPOfferParameters.Audio(
    direction: .sendrecv, ssrc: 0x0A0B_0C0D, trackId: "audio0")

  /// The answer with `lines` inserted before its first `a=candidate` line.
  static func inserting(_ lines: [String], into answer: String) -> String {
    guard let range = answer.range(of: "a=candidate:") else { return answer }
    return answer.replacingCharacters(
      in: range, with: lines.map { $0 + "\r\n" }.joined() + "a=candidate:")
  }

  /// Offer from `peers.offerer`, answer from `peers.answerer`, the answer text changed by
  /// `tamper` before the offerer applies it.
  static func negotiate(_ peers: LoopbackPeers, tamper: (String) -> String) throws -> String {
    try peers.loop.submit {
      let offer = try peers.offerer.createOffer(audio: Self.audio, video: nil)
      try peers.answerer.setRemoteDescription(offer: offer)
      let answer = tamper(try peers.answerer.createAnswer())
      try peers.offerer.setRemoteDescription(answer: answer)
      return answer
    }
  }

  static func assertMediaFlows(_ peers: LoopbackPeers, seed: UInt8, line: UInt = #line) throws {
    // A fresh SSRC each time: SRTP's replay window refuses a sequence number seen before.
    let media = TestMedia.packets(ssrc: 0x7777_0000 + UInt32(seed), count: 5, seed: seed)
    let before = peers.answererRecorder.rtp.value.count
    try peers.send(media, from: peers.offerer)
    XCTAssertTrue(
      eventually { peers.answererRecorder.rtp.value.count == before + media.count }, line: line)
    XCTAssertEqual(
      peers.answererRecorder.rtp.value.suffix(media.count).map(\.packet), media, line: line)
  }

  /// Candidates a server could send by mistake or malice, all with a higher priority than the
  /// real one so the (controlling) offerer checks them first: broadcast, multicast, the
  /// unspecified address, port 0, a port nobody listens on, IPv6 addresses for an IPv4-only
  /// socket, a host name (mDNS style), and out-of-range numbers. Sending to them fails
  /// (`EACCES`, `EINVAL`, `EAFNOSUPPORT`) or goes unanswered; the lite answerer's real
  /// candidate must still be found and carry media.
  func testHostileCandidatesInTheAnswerAreSkippedAndTheRealOneConnects() throws {
    let peers = LoopbackPeers(answererLite: true)
    defer { peers.shutdown() }
    let hostile = [
      "a=candidate:h1 1 udp 4294967295 255.255.255.255 5000 typ host",
      "a=candidate:h2 1 udp 4294967294 224.0.0.251 5353 typ host",
      "a=candidate:h3 1 udp 4294967293 0.0.0.0 5000 typ host",
      "a=candidate:h4 1 udp 4294967292 127.0.0.1 0 typ host",
      "a=candidate:h5 1 udp 4294967291 127.0.0.1 1 typ host",
      "a=candidate:h6 1 udp 4294967290 ::1 5000 typ host",
      "a=candidate:h7 1 udp 4294967289 ::ffff:127.0.0.1 5000 typ host",
      "a=candidate:h8 1 udp 4294967288 0123abcd-hostile.local 5000 typ host",
      "a=candidate:h9 1 udp 4294967287 127.0.0.1 70000 typ host",
      "a=candidate:h10 1 udp 4294967286 127.0.0.1 5001 typ relay raddr 127.0.0.1 rport 99999",
      "a=candidate:h11 1 udp 4294967285 127.0.0.1 5002 typ nonsense",
      "a=candidate:h12 1 udp 4294967284 999.1.1.1 5003 typ host",
    ]
    let answer = try Self.negotiate(peers) { Self.inserting(hostile, into: $0) }
    XCTAssertTrue(answer.contains("255.255.255.255"), "the hostile lines went in")
    XCTAssertTrue(
      peers.waitForBoth({ $0 == .connected }, timeout: 20),
      "\(peers.offererRecorder.states) \(peers.answererRecorder.states)")
    try Self.assertMediaFlows(peers, seed: 3)
  }

  /// A second answer once connected (a server resending `setRemoteSDP`), and garbage after
  /// it: typed errors, and the connection keeps carrying media.
  func testAnswersAfterTheFirstAreTypedErrorsAndTheConnectionCarriesOn() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    let answer = try Self.negotiate(peers) { $0 }
    XCTAssertTrue(peers.waitForBoth { $0 == .connected })
    try Self.assertMediaFlows(peers, seed: 4)
    let errors: [PeerConnectionError?] = peers.loop.submit {
      [answer, "", "v=0\r\n", "garbage\u{0}\u{FFFD}", String(repeating: "a=x\r\n", count: 10_000)]
        .map { text -> PeerConnectionError? in
          do {
            try peers.offerer.setRemoteDescription(answer: text)
            return nil
          } catch { return error as? PeerConnectionError }
        }
    }
    XCTAssertEqual(errors.count, 5)
    for (index, error) in errors.enumerated() {
      XCTAssertNotNil(error, "answer \(index) was taken")
    }
    XCTAssertEqual(peers.offererRecorder.lastState, .connected)
    try Self.assertMediaFlows(peers, seed: 5)
  }

  /// An answer before any offer is a typed error, not a crash, and leaves the connection
  /// usable for a proper offer/answer afterwards.
  func testAnAnswerBeforeTheOfferIsATypedError() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    let early = try peers.loop.submit {
      let offer = try peers.offerer.createOffer(audio: Self.audio, video: nil)
      try peers.answerer.setRemoteDescription(offer: offer)
      return try peers.answerer.createAnswer()
    }
    let fresh = PeerConnection(configuration: .loopback, loop: peers.loop)
    let error: PeerConnectionError? = peers.loop.submit { () -> PeerConnectionError? in
      defer { fresh.close() }
      do {
        try fresh.setRemoteDescription(answer: early)
        return nil
      } catch { return error as? PeerConnectionError }
    }
    XCTAssertNotNil(error, "an answer without our offer must be refused")
  }

  /// ICE credentials far beyond RFC 8839's 256 characters: a USERNAME that does not fit
  /// STUN's 16-bit attribute length (RFC 8489 §14). The answer is refused with a typed
  /// error; nothing is sent.
  func testOversizedICECredentialsAreRefusedOrFailCleanly() throws {
    let peers = LoopbackPeers(answererLite: true)
    defer { peers.shutdown() }
    let huge = String(repeating: "u", count: 70_000)
    var thrown: (any Error)?
    do {
      _ = try Self.negotiate(peers) { answer in
        answer.replacingOccurrences(
          of: #"a=ice-ufrag:([^\r]*)"#, with: "a=ice-ufrag:" + huge,
          options: .regularExpression)
      }
    } catch { thrown = error }
    // Refused when the answer is read (SDPAnswerError.invalidICECredentials), before any check.
    XCTAssertTrue(
      String(describing: thrown).contains("over 256 (RFC 8839"), "\(String(describing: thrown))")
    XCTAssertNotEqual(peers.offererRecorder.lastState, .connected)
  }
}

/// Datagrams from a stranger (and junk from the peer's own address) while ICE and DTLS are
/// still running: STUN Binding requests with the right USERNAME, USE-CANDIDATE and a
/// MESSAGE-INTEGRITY that does not verify (RFC 8489 §9.2.4: drop or 401, never a pair), and
/// random bytes in each RFC 7983 range. The real pair must be the one selected.
final class ConnectingHijackTests: XCTestCase {
  static func ufrag(in sdp: String) -> String? {
    sdp.split(separator: "\r\n").first { $0.hasPrefix("a=ice-ufrag:") }.map {
      String($0.dropFirst("a=ice-ufrag:".count))
    }
  }

  /// A Binding request (RFC 8489 §5): USERNAME, ICE-CONTROLLING, USE-CANDIDATE, PRIORITY and a
  /// MESSAGE-INTEGRITY of zeros (wrong for any password).
  static func forgedBindingRequest(username: String) -> [UInt8] {
    func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
      let padded = value + [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
      return [
        UInt8(type >> 8), UInt8(type & 0xFF), UInt8(value.count >> 8), UInt8(value.count & 0xFF),
      ]
        + padded
    }
    let body =
      attribute(0x0006, Array(username.utf8)) + attribute(0x0024, [0x6E, 0x00, 0x01, 0xFF])
      + attribute(0x802A, [1, 2, 3, 4, 5, 6, 7, 8]) + attribute(0x0025, [])
      + attribute(0x0008, [UInt8](repeating: 0, count: 20))
    let length = UInt16(body.count)
    return [0x00, 0x01, UInt8(length >> 8), UInt8(length & 0xFF), 0x21, 0x12, 0xA4, 0x42]
      + (0..<12).map { UInt8($0 * 7 + 1) } + body
  }

  func testForgedChecksAndJunkDuringConnectingDoNotHijackTheConnection() throws {
    let peers = LoopbackPeers()
    defer { peers.shutdown() }
    let stranger = try peers.loop.submit {
      try EventLoopUDPSocket(
        loop: peers.loop, bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)
      ) { _, _ in }
    }
    defer { peers.loop.submit { stranger.close() } }
    var generator = SystemRandomNumberGenerator()
    var junk: [[UInt8]] = [[], [0x00], [0x16, 0xFE, 0xFD]]
    for first: UInt8 in [0x00, 0x01, 0x14, 0x15, 0x16, 0x17, 0x40, 0x80, 0xC8] {
      for length in [4, 20, 60, 300] {
        junk.append(
          [first] + (1..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
      }
    }
    try peers.loop.submit {
      let offer = try peers.offerer.createOffer(
        audio: HostileAnswerTests.audio, video: nil)
      try peers.answerer.setRemoteDescription(offer: offer)
      let answer = try peers.answerer.createAnswer()
      try peers.offerer.setRemoteDescription(answer: answer)
      let offerUfrag = try XCTUnwrap(Self.ufrag(in: offer))
      let answerUfrag = try XCTUnwrap(Self.ufrag(in: answer))
      let toAnswerer = Self.forgedBindingRequest(username: answerUfrag + ":" + offerUfrag)
      let toOfferer = Self.forgedBindingRequest(username: offerUfrag + ":" + answerUfrag)
      // Well-formed STUN with the right USERNAME: only the integrity check can refuse it.
      let forged = try STUNMessage.decode(toAnswerer)
      XCTAssertEqual(
        forged.first { if case .username(let name) = $0 { name } else { nil } },
        answerUfrag + ":" + offerUfrag)
      XCTAssertNotNil(forged.first { if case .useCandidate = $0 { true } else { nil } })
      let answerPwd = try XCTUnwrap(
        answer.split(separator: "\r\n").first { $0.hasPrefix("a=ice-pwd:") }?.dropFirst(10))
      XCTAssertThrowsError(
        try forged.verifyIntegrity(key: STUNIntegrityKey(shortTermPassword: String(answerPwd))))
      for round in 0..<3 {
        for target in peers.answerer.localAddresses {
          try stranger.send(toAnswerer, to: target)
          for datagram in junk where round == 0 { try stranger.send(datagram, to: target) }
        }
        for target in peers.offerer.localAddresses {
          try stranger.send(toOfferer, to: target)
          for datagram in junk where round == 0 { try stranger.send(datagram, to: target) }
        }
      }
    }
    XCTAssertTrue(
      peers.waitForBoth { $0 == .connected },
      "\(peers.offererRecorder.states) \(peers.answererRecorder.states)")
    let strangerAddress = peers.loop.submit { stranger.localAddress }
    let pairs = peers.loop.submit {
      (peers.offerer.stats.selectedPair, peers.answerer.stats.selectedPair)
    }
    let offererPair = try XCTUnwrap(pairs.0)
    let answererPair = try XCTUnwrap(pairs.1)
    XCTAssertNotEqual(offererPair.remote.address, strangerAddress)
    XCTAssertNotEqual(answererPair.remote.address, strangerAddress)
    XCTAssertTrue(
      peers.loop.submit { peers.answerer.localAddresses }.contains(offererPair.remote.address))
    try HostileAnswerTests.assertMediaFlows(peers, seed: 9)
  }
}
