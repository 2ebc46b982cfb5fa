import XCTest

@testable import WCSMedia
@testable import WCSProtocols

/// An offer with nothing to accept is told apart from a codec mismatch (RFC 3264 §6).
final class SDPOfferErrorTests: XCTestCase {
  static let session = "v=0\r\no=- 7 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"

  func testAnOfferWithoutMediaSectionsSaysSo() throws {
    let offer = try SDPParser.parse(Self.session + "a=ice-lite\r\n").description
    XCTAssertThrowsError(try offer.firstAcceptedMediaIndex()) {
      XCTAssertEqual($0 as? SDPOfferError, .noMediaSections)
      XCTAssertEqual("\($0)", "offer has no media sections")
    }
  }

  func testAnOfferWithEverySectionAtPortZeroSaysSo() throws {
    let offer = try SDPParser.parse(
      Self.session + "m=audio 0 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n"
        + "m=video 0 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 VP8/90000\r\n"
    ).description
    XCTAssertThrowsError(try offer.firstAcceptedMediaIndex()) {
      XCTAssertEqual($0 as? SDPOfferError, .allMediaSectionsRejected)
      XCTAssertEqual("\($0)", "every media section is rejected (port 0)")
    }
  }

  func testTheFirstSectionWithANonZeroPortIsAccepted() throws {
    let offer = try SDPParser.parse(
      Self.session + "m=audio 0 UDP/TLS/RTP/SAVPF 111\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
    ).description
    XCTAssertEqual(try offer.firstAcceptedMediaIndex(), 1)
    XCTAssertEqual(try SDPParser.parse(chromeBrowserOffer).description.firstAcceptedMediaIndex(), 0)
  }
}
