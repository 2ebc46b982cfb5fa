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

  func testH264RTXIsOfferedWithItsAptNextToVP8s() throws {
    var parameters = SDPOfferBuilderTests.parameters()
    var h264 = SDPOfferParameters.H264(isPreferred: true)
    h264.retransmissionPayloadType = 103
    parameters.video?.h264 = h264
    let parsed = try SDPParser.parse(SDPOfferBuilder.publishOffer(parameters).sdpText).description
    let video = try XCTUnwrap(parsed.media.first { $0.media == "video" })
    XCTAssertEqual(video.payloadTypes, [102, 96, 97, 103])
    XCTAssertEqual(video.rtpMap(payloadType: 103)?.encodingName, "rtx")
    XCTAssertEqual(video.rtpMap(payloadType: 103)?.clockRate, 90000)
    XCTAssertEqual(video.formatParameters(payloadType: 103)?.associatedPayloadType, 102)
    XCTAssertEqual(video.formatParameters(payloadType: 97)?.associatedPayloadType, 96)
    // One RTX SSRC for both (one codec is sent at a time), in one FID group.
    let groups = video.attributes.compactMap { attribute -> SSRCGroup? in
      if case .ssrcGroup(let group) = attribute { return group }
      return nil
    }
    XCTAssertEqual(groups.count, 1)
    // Without RTX on the section, none for H.264 either.
    parameters.video?.rtx = nil
    let plain = try SDPParser.parse(SDPOfferBuilder.publishOffer(parameters).sdpText).description
    XCTAssertEqual(plain.media.first { $0.media == "video" }?.payloadTypes, [102, 96])
  }

  func testNoH264UnlessAsked() throws {
    let text = SDPOfferBuilder.publishOffer(SDPOfferBuilderTests.parameters()).sdpText
    XCTAssertFalse(text.contains("H264"))
  }
}
