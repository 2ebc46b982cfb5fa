import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSPeerConnection
@testable import WCSProtocols

/// The answerer's own `o=` line (RFC 3264 §5, §8; RFC 8829 §5.2.1).
final class SDPLocalOriginTests: XCTestCase {
  func testTheSessionIdIsKeptAndTheVersionGoesUpByOne() {
    var origin = SDPLocalOrigin(sessionId: 4_611_686_018_427_387_904, firstVersion: 1)
    XCTAssertNil(origin.lastVersion)
    let first = origin.next()
    let second = origin.next()
    XCTAssertEqual(first.sessionId, "4611686018427387904")
    XCTAssertEqual(first.sessionVersion, "1")
    XCTAssertEqual(second.sessionId, "4611686018427387904")
    XCTAssertEqual(second.sessionVersion, "2")
    XCTAssertEqual(origin.lastVersion, 2)
    XCTAssertEqual(
      SDPWriter.write(SessionDescription(origin: second)).split(separator: "\r\n")[1],
      "o=- 4611686018427387904 2 IN IP4 127.0.0.1")
  }

  func testRandomSessionIdsArePositiveAndFitIn62Bits() {
    var generator = SplitMix64(seed: 42)
    var ids = Set<UInt64>()
    for _ in 0..<1000 {
      let origin = SDPLocalOrigin(using: &generator)
      XCTAssertGreaterThanOrEqual(origin.sessionId, 1)
      XCTAssertLessThanOrEqual(origin.sessionId, 1 << 62)
      ids.insert(origin.sessionId)
    }
    XCTAssertEqual(ids.count, 1000)
  }

  func testTheAnswerBuilderWritesTheGivenOriginNotTheOffers() throws {
    let offer = try SDPParser.parse(chromeBrowserOffer).description
    XCTAssertEqual(offer.origin.sessionId, "4611731400430051336")
    let local = PeerConnectionTransportDescription(
      iceCredentials: ICECredentials(ufrag: "abcd", pwd: "abcdefghijklmnopqrstuvwx"),
      iceLite: true, candidates: [], endOfCandidates: true,
      fingerprint: try DTLSFingerprint(algorithm: .sha256, bytes: [UInt8](repeating: 7, count: 32)),
      setup: .active)
    let answer = PeerConnectionAnswerBuilder.answer(
      to: offer, origin: SDPOrigin(sessionId: "77", sessionVersion: "3"), local: local,
      candidates: [])
    XCTAssertEqual(answer.origin.sessionId, "77")
    XCTAssertEqual(answer.origin.sessionVersion, "3")
    XCTAssertTrue(SDPWriter.write(answer).contains("\r\no=- 77 3 IN IP4 127.0.0.1\r\n"))
  }
}
