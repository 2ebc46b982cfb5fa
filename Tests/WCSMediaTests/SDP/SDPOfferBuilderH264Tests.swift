import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class SDPOfferBuilderH264Tests: XCTestCase {
  private func videoSection(preferred: Bool) throws -> MediaDescription {
    var parameters = SDPOfferBuilderTests.parameters()
    parameters.video?.h264 = .init(isPreferred: preferred)
    let text = SDPOfferBuilder.publishOffer(parameters).sdpText
    let parsed = try SDPParser.parse(text).description
    return try XCTUnwrap(parsed.media.first { $0.media == "video" })
  }

  func testH264IsOfferedAfterVP8UnlessPreferred() throws {
    XCTAssertEqual(try videoSection(preferred: false).payloadTypes, [96, 97, 102])
    let preferred = try videoSection(preferred: true)
    XCTAssertEqual(preferred.payloadTypes, [102, 96, 97])
    XCTAssertEqual(preferred.rtpMap(payloadType: 102)?.encodingName, "H264")
    let fmtp = try XCTUnwrap(preferred.formatParameters(payloadType: 102))
    XCTAssertEqual(
      H264FormatParameters(fmtp.parameters),
      H264FormatParameters(
        profileLevelID: .constrainedBaseline31, levelAsymmetryAllowed: true, packetizationMode: 1))
    XCTAssertEqual(
      preferred.rtcpFeedback(payloadType: 102).map { $0.type + ($0.parameter ?? "") },
      ["goog-remb", "transport-cc", "ccmfir", "nack", "nackpli"])
  }

  func testNoH264UnlessAsked() throws {
    let text = SDPOfferBuilder.publishOffer(SDPOfferBuilderTests.parameters()).sdpText
    XCTAssertFalse(text.contains("H264"))
  }
}
