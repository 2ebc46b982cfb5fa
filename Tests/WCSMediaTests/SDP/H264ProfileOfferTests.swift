import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// `MediaConnectionRequest.h264Profile`: main (`4d001f`) or constrained high (`640c1f`) offered
/// before the baseline H.264 formats, and encoded only when the answer picks it.
final class H264ProfileOfferTests: XCTestCase {
  private func offeredVideo(profile: H264OfferedProfile?) throws -> MediaDescription {
    var parameters = SDPOfferBuilderTests.parameters()
    parameters.video?.h264Formats = NativeMediaConnection.h264OfferFormats(
      preferred: true, profile: profile)
    let text = SDPOfferBuilder.publishOffer(parameters).sdpText
    let parsed = try SDPParser.parse(text).description
    return try XCTUnwrap(parsed.media.first { $0.media == "video" })
  }

  private func fmtp(_ section: MediaDescription, _ payloadType: Int) -> String? {
    section.formatParameters(payloadType: payloadType)?.parameters
      .map { "\($0.name)=\($0.value ?? "")" }.joined(separator: ";")
  }

  func testTheRequestedProfileIsOfferedBeforeTheBaselineFormats() throws {
    let main = try offeredVideo(profile: .main)
    XCTAssertEqual(
      main.payloadTypes, [112, 102, 104, 106, 108, 96, 97, 113, 103, 105, 107, 109])
    XCTAssertEqual(
      fmtp(main, 112), "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=4d001f")
    XCTAssertEqual(
      main.formatParameters(payloadType: 113)?.parameters.first { $0.name == "apt" }?.value,
      "112")
    XCTAssertEqual(
      fmtp(main, 102), "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f")

    let high = try offeredVideo(profile: .constrainedHigh)
    XCTAssertEqual(high.payloadTypes.first, 114)
    XCTAssertEqual(
      fmtp(high, 114), "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=640c1f")
    XCTAssertFalse(high.payloadTypes.contains(112))
    XCTAssertEqual(
      try offeredVideo(profile: nil).payloadTypes,
      [102, 104, 106, 108, 96, 97, 103, 105, 107, 109])
  }

  func testTheEncoderUsesTheProfileOnlyWhenTheAnswerPickedIt() throws {
    let main = H264FormatParameters(
      profileLevelID: H264ProfileLevelID(profile: .main, level: 31), packetizationMode: 1)
    let baseline = H264FormatParameters(
      profileLevelID: .constrainedBaseline31, packetizationMode: 1)
    XCTAssertEqual(NativeMediaConnection.encoderProfile(answered: main, requested: .main), .main)
    XCTAssertEqual(
      NativeMediaConnection.encoderProfile(answered: baseline, requested: .main),
      .constrainedBaseline)
    XCTAssertEqual(
      NativeMediaConnection.encoderProfile(answered: main, requested: nil), .constrainedBaseline)
    XCTAssertEqual(
      NativeMediaConnection.encoderProfile(answered: main, requested: .constrainedHigh),
      .constrainedBaseline)
  }
}
