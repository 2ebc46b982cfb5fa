import CWebRTCCore
import XCTest

final class LWSPreTests: XCTestCase {
  func testLWSPreIsPadded() {
    XCTAssertEqual(wcs_lws_pre() % 16, 0)
    XCTAssertGreaterThanOrEqual(wcs_lws_pre(), 16)
  }
}
