import Foundation
import TestSupport
import XCTest

@testable import WCSMedia
@testable import WCSProtocols

final class H264FormatParametersTests: XCTestCase {
  private func level(_ text: String) -> H264ProfileLevelID? { H264ProfileLevelID(Substring(text)) }

  func testProfilesAreReadByPatternNotByString() {
    XCTAssertEqual(level("42e01f"), H264ProfileLevelID(profile: .constrainedBaseline, level: 31))
    XCTAssertEqual(level("42C01F"), H264ProfileLevelID(profile: .constrainedBaseline, level: 31))
    XCTAssertEqual(level("4d801f")?.profile, .constrainedBaseline)
    XCTAssertEqual(level("42001f"), H264ProfileLevelID(profile: .baseline, level: 31))
    XCTAssertEqual(level("4d001f")?.profile, .main)
    XCTAssertEqual(level("640c1f")?.profile, .constrainedHigh)
    XCTAssertEqual(level("64001f")?.profile, .high)
    XCTAssertEqual(level("58001f")?.profile, .extended)
    XCTAssertEqual(level("42f00b")?.level, H264ProfileLevelID.level1b)
    XCTAssertEqual(level("42e00b")?.level, 11)
    XCTAssertNil(level("640d1f"))
    XCTAssertNil(level("42e01"))
    XCTAssertNil(level("zze01f"))
    XCTAssertEqual(level("42C01F")?.description, "42e01f")
    XCTAssertEqual(level("42f00b")?.description, "42f00b")
  }

  func testAnswerMatchesProfileAndModeAndNegotiatesLevel() throws {
    let ours = H264FormatParameters()
    let offered = try XCTUnwrap(
      H264FormatParameters([
        FormatParameter("level-asymmetry-allowed", "1"),
        FormatParameter("packetization-mode", "1"),
        FormatParameter("profile-level-id", "42C034"),
      ]))
    XCTAssertEqual(ours.answer(to: offered)?.profileLevelID.level, 31)
    var symmetric = offered
    symmetric.levelAsymmetryAllowed = false
    symmetric.profileLevelID.level = 21
    XCTAssertEqual(ours.answer(to: symmetric)?.profileLevelID.level, 21)
    XCTAssertEqual(ours.answer(to: symmetric)?.levelAsymmetryAllowed, false)
    var modeZero = offered
    modeZero.packetizationMode = 0
    XCTAssertNil(ours.answer(to: modeZero))
    let high = try XCTUnwrap(
      H264FormatParameters([
        FormatParameter("packetization-mode", "1"), FormatParameter("profile-level-id", "640c1f"),
      ]))
    XCTAssertNil(ours.answer(to: high))
    let absent = try XCTUnwrap(H264FormatParameters([]))
    XCTAssertEqual(absent.packetizationMode, 0)
    XCTAssertEqual(absent.profileLevelID, H264ProfileLevelID(profile: .baseline, level: 10))
    XCTAssertNil(H264FormatParameters([FormatParameter("packetization-mode", "3")]))
    XCTAssertEqual(
      ours.formatParameters.map { "\($0.name)=\($0.value ?? "")" },
      ["level-asymmetry-allowed=1", "packetization-mode=1", "profile-level-id=42e01f"])
  }

  func testSafariOfferHasOneConstrainedBaselineMatch() throws {
    guard let url = SharedCorpus.url("sdp/aiortc-safari-audio-video-data-offer.sdp") else {
      throw XCTSkip("shared corpus absent")
    }
    let parsed = try SDPParser.parse(String(contentsOf: url, encoding: .utf8))
    let video = try XCTUnwrap(parsed.description.media.first { $0.media == "video" })
    let h264 = video.rtpMaps.filter { $0.encodingName.uppercased() == "H264" }
    XCTAssertEqual(h264.map(\.payloadType), [96, 98])
    let matching = h264.filter { map in
      guard let fmtp = video.formatParameters(payloadType: map.payloadType),
        let offered = H264FormatParameters(fmtp.parameters)
      else { return false }
      return H264FormatParameters().matches(offered)
    }
    XCTAssertEqual(matching.map(\.payloadType), [98])
  }
}
