import XCTest

@testable import WCSEngine
@testable import WCSMedia
@testable import WCSProtocols

/// The SDK's H.264 offer: the formats browsers offer (constrained baseline and baseline 3.1,
/// packetization-mode 1 and 0), so the H.264 of any browser's or WCS's SDP finds its match
/// (RFC 6184 §8.2.2: same profile and mode).
final class H264OfferFormatsTests: XCTestCase {
  private func offeredVideo(preferred: Bool) throws -> MediaDescription {
    var parameters = SDPOfferBuilderTests.parameters()
    parameters.video?.h264Formats = NativeMediaConnection.h264OfferFormats(preferred: preferred)
    let text = SDPOfferBuilder.publishOffer(parameters).sdpText
    let parsed = try SDPParser.parse(text).description
    return try XCTUnwrap(parsed.media.first { $0.media == "video" })
  }

  private func h264Formats(_ section: MediaDescription) -> [Int: H264FormatParameters] {
    var formats: [Int: H264FormatParameters] = [:]
    for payloadType in section.payloadTypes(forCodec: "H264") {
      formats[payloadType] = H264FormatParameters(
        section.formatParameters(payloadType: payloadType)?.parameters ?? [])
    }
    return formats
  }

  func testTheOfferListsBaselineProfilesInBothPacketizationModes() throws {
    let preferred = try offeredVideo(preferred: true)
    XCTAssertEqual(preferred.payloadTypes, [102, 104, 106, 108, 96, 97, 103, 105, 107, 109])
    XCTAssertEqual(
      try offeredVideo(preferred: false).payloadTypes,
      [96, 97, 102, 104, 106, 108, 103, 105, 107, 109])
    // Each H.264 format has its own RTX (RFC 4588 §8.1), at the odd type after it.
    let apts = [103, 105, 107, 109].map {
      preferred.formatParameters(payloadType: $0)?.parameters.first { $0.name == "apt" }?.value
    }
    XCTAssertEqual(apts, ["102", "104", "106", "108"])
    let fmtp = [102, 104, 106, 108].map {
      preferred.formatParameters(payloadType: $0)?.parameters.map { "\($0.name)=\($0.value ?? "")" }
        .joined(separator: ";")
    }
    XCTAssertEqual(
      fmtp,
      [
        "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
        "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
        "level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42e01f",
        "level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42001f",
      ])
    XCTAssertEqual(
      preferred.rtcpFeedback(payloadType: 108).map { $0.type + ($0.parameter ?? "") },
      ["goog-remb", "transport-cc", "ccmfir", "nack", "nackpli"])
  }

  func testEveryBaselineH264OfTheCorpusMatchesAnOfferedFormat() throws {
    let files = SDPCorpus.files()
    try XCTSkipIf(files.isEmpty, "../shared/corpus/sdp not present")
    let ours = h264Formats(try offeredVideo(preferred: true))
    var matched: [String] = []
    var unmatched: [String] = []
    for url in files {
      let description = try SDPParser.parse(String(contentsOf: url, encoding: .utf8)).description
      for section in description.media where section.media == "video" {
        for (payloadType, theirs) in h264Formats(section) {
          let label = "\(url.lastPathComponent) \(payloadType)"
          let match = ours.values.first { $0.matches(theirs) }
          if let match {
            // Either side answers the other: the answer keeps profile and mode.
            let answer = try XCTUnwrap(theirs.answer(to: match), label)
            XCTAssertEqual(answer.profileLevelID.profile, theirs.profileLevelID.profile, label)
            XCTAssertEqual(answer.packetizationMode, theirs.packetizationMode, label)
            matched.append("\(theirs.profileLevelID)/\(theirs.packetizationMode)")
          } else {
            unmatched.append("\(label) \(theirs.profileLevelID)")
          }
        }
      }
    }
    // 42e01f/1 twice, 42001f/1, 420020/1, the mode-0 constrained baselines of 42c00b (twice)
    // and 42c01f, and an H264 without fmtp (baseline 1, mode 0: RFC 6184 §8.1 defaults); only
    // constrained high (640c1f) is not offered.
    XCTAssertEqual(
      matched.sorted(),
      [
        "42000a/0", "42001f/1", "420020/1", "42e00b/0", "42e00b/0", "42e01f/0", "42e01f/1",
        "42e01f/1",
      ])
    XCTAssertEqual(unmatched.count, 1, "\(unmatched)")
    XCTAssertTrue(unmatched.first?.hasSuffix("640c1f") ?? false, "\(unmatched)")
  }
}
