import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class DTLSRoleTests: XCTestCase {
  /// RFC 5763 §5 / RFC 8842 §5 and wcs-protocol.md §4.3, row by row.
  func testRoleTable() throws {
    let rows: [(DTLSSetup, DTLSSetup?, DTLSRole)] = [
      (.actpass, .active, .server),
      (.actpass, .passive, .client),
      (.actpass, nil, .server),
      (.actpass, .actpass, .server),
      (.active, .passive, .client),
      (.active, .actpass, .client),
      (.active, nil, .client),
      (.passive, .active, .server),
      (.passive, .actpass, .server),
      (.passive, nil, .server),
    ]
    for (local, remote, role) in rows {
      XCTAssertEqual(
        try DTLSRole.from(localSetup: local, remoteSetup: remote), role,
        "\(local) / \(String(describing: remote))")
    }
  }

  func testConflictingSetupsThrow() {
    let conflicts: [(DTLSSetup, DTLSSetup?)] = [
      (.active, .active), (.passive, .passive), (.holdconn, .active), (.actpass, .holdconn),
      (.holdconn, nil),
    ]
    for (local, remote) in conflicts {
      XCTAssertThrowsError(try DTLSRole.from(localSetup: local, remoteSetup: remote)) { error in
        XCTAssertEqual(error as? DTLSError, .incompatibleSetup(local: local, remote: remote))
      }
    }
  }

  func testAnswererChoosesActiveForAnActpassOffer() throws {
    XCTAssertEqual(DTLSSetup.answer(toOffer: .actpass), .active)
    XCTAssertEqual(DTLSSetup.answer(toOffer: .passive), .active)
    XCTAssertEqual(DTLSSetup.answer(toOffer: .active), .passive)
    XCTAssertEqual(DTLSSetup.answer(toOffer: nil), .passive)
    XCTAssertEqual(DTLSSetup.answer(toOffer: .holdconn), .holdconn)
    // Whatever the answerer picks, the two sides end up with opposite roles.
    for offer in [DTLSSetup.actpass, .active, .passive] {
      let answer = DTLSSetup.answer(toOffer: offer)
      let offerer = try DTLSRole.from(localSetup: offer, remoteSetup: answer)
      let answerer = try DTLSRole.from(localSetup: answer, remoteSetup: offer)
      XCTAssertNotEqual(offerer, answerer, "\(offer) -> \(answer)")
    }
  }

  func testGuessedRoleOnlyWhenTheAnswerHasNoUsableSetup() {
    XCTAssertTrue(DTLSRole.isGuessed(localSetup: .actpass, remoteSetup: nil))
    XCTAssertTrue(DTLSRole.isGuessed(localSetup: .actpass, remoteSetup: .actpass))
    XCTAssertFalse(DTLSRole.isGuessed(localSetup: .actpass, remoteSetup: .active))
    XCTAssertFalse(DTLSRole.isGuessed(localSetup: .active, remoteSetup: nil))
  }

  func testSetupRawValuesAreTheSDPTokens() {
    XCTAssertEqual(DTLSSetup(rawValue: "actpass"), .actpass)
    XCTAssertEqual(
      DTLSSetup.allCases.map(\.rawValue), ["active", "passive", "actpass", "holdconn"])
  }
}
