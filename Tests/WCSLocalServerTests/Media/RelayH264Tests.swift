import Foundation
import WCSMedia
import XCTest

@testable import WCSLocalServer

/// H.264 through the relay: passed on without transcoding to players whose offer has the same
/// profile and packetization mode (RFC 6184 §8.2.2), refused to the others as a WCS with
/// transcoding off refuses them.
final class RelayH264Tests: XCTestCase {
  private func offer(video formats: [(Int, String, String?)]) -> String {
    var lines = [
      "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0",
      "m=video 9 UDP/TLS/RTP/SAVPF " + formats.map { "\($0.0)" }.joined(separator: " "),
      "c=IN IP4 0.0.0.0", "a=mid:0",
    ]
    for (payloadType, name, fmtp) in formats {
      lines.append("a=rtpmap:\(payloadType) \(name)/90000")
      if let fmtp { lines.append("a=fmtp:\(payloadType) \(fmtp)") }
    }
    return (lines + [""]).joined(separator: "\r\n")
  }

  private static let baselineMode1 =
    "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"

  func testPublisherAnswerKeepsOnlyItsFirstVideoCodec() throws {
    let published = offer(video: [
      (102, "H264", Self.baselineMode1), (96, "VP8", nil),
      (108, "H264", "packetization-mode=0;profile-level-id=42e01f"),
    ])
    let kept = try SDPParser.parse(RelayAnswer.keepingFirstVideoCodec(published)).description
    XCTAssertEqual(kept.media[0].payloadTypes, [102])
    let vp8First = offer(video: [(96, "VP8", nil), (102, "H264", Self.baselineMode1)])
    let keptVP8 = try SDPParser.parse(RelayAnswer.keepingFirstVideoCodec(vp8First)).description
    XCTAssertEqual(keptVP8.media[0].payloadTypes, [96])
  }

  func testH264KeepsItsRTXFormatAndTheRelayRepairsThroughIt() throws {
    let published = offer(video: [
      (102, "H264", Self.baselineMode1), (103, "rtx", "apt=102"), (96, "VP8", nil),
      (97, "rtx", "apt=96"),
    ])
    let kept = try SDPParser.parse(RelayAnswer.keepingFirstVideoCodec(published)).description
    XCTAssertEqual(kept.media[0].payloadTypes, [102, 103])
    XCTAssertEqual(RelayCodecs.retransmissionPayloadTypes(in: kept), [103: 102])
    XCTAssertEqual(
      RelayCodecs.retransmissionPayloadTypes(in: try SDPParser.parse(published).description),
      [103: 102, 97: 96])
  }

  func testPlayerGetsH264OnlyWithTheSameProfileAndMode() throws {
    let publisher = RelayCodecs.payloadTypes(
      in: try SDPParser.parse(offer(video: [(102, "H264", Self.baselineMode1)])).description)
    XCTAssertEqual(publisher[102]?.h264?.profileLevelID.profile, .constrainedBaseline)
    // Chrome's layout: baseline 42001f first, constrained baseline (other case, other level)
    // later; profile matching picks 125, not the first H264.
    let chrome = RelayCodecs.payloadTypes(
      in: try SDPParser.parse(
        offer(video: [
          (96, "VP8", nil),
          (102, "H264", "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f"),
          (125, "H264", "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42C034"),
        ])
      ).description)
    XCTAssertEqual(RelayCodecs.payloadTypeMap(publisher: publisher, player: chrome), [102: 125])
    XCTAssertTrue(RelayCodecs.playerTakesVideo(publisher: publisher, player: chrome))
    let vp8Only = RelayCodecs.payloadTypes(
      in: try SDPParser.parse(offer(video: [(96, "VP8", nil)])).description)
    XCTAssertFalse(RelayCodecs.playerTakesVideo(publisher: publisher, player: vp8Only))
    let modeZero = RelayCodecs.payloadTypes(
      in: try SDPParser.parse(
        offer(video: [(97, "H264", "packetization-mode=0;profile-level-id=42e01f")])
      ).description)
    XCTAssertFalse(RelayCodecs.playerTakesVideo(publisher: publisher, player: modeZero))
    XCTAssertEqual(
      RelayAnswerError.transcodingRequired.info, "Transcoding required, but disabled")
  }
}
