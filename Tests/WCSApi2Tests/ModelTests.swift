import Foundation
import XCTest

@testable import WCSApi2

/// Enum spellings, string helpers, info mapping, stripCodecs and constraints initializers.
final class ModelTests: XCTestCase {
  func testEnumSpellingsAndAliases() {
    XCTAssertEqual(kFPWCSSessionStatus.fpwcsSessionStatusEstablished.rawValue, 2)
    XCTAssertEqual(kFPWCSStreamStatus.fpwcsStreamStatusNotEnoughtBandwidth.rawValue, 10)
    XCTAssertEqual(
      kFPWCSStreamStatus.fpwcsStreamStatusNotEnoughBandwidth, .fpwcsStreamStatusNotEnoughtBandwidth)
    XCTAssertEqual(
      kFPWCSStreamStatus.fpwcsStreamStatusSnapshotComplete, .fpwcsStreamStatusSnaphotComplete)
    XCTAssertEqual(kFPWCSStreamStatus.allCases.count, 11)
    XCTAssertEqual(kFPWCSTransport.fpwcsTransportTCP.rawValue, 1)
    XCTAssertEqual(kFPWCSConnectionQuality.allCases.count, 4)
    switch kFPWCSStreamStatus.fpwcsStreamStatusNotEnoughtBandwidth {
    case .fpwcsStreamStatusNotEnoughBandwidth: break
    default: XCTFail("alias must match in a switch")
    }
  }

  func testModelStrings() {
    XCTAssertEqual(
      FPWCSApi2Model.sessionStatus(toString: .fpwcsSessionStatusEstablished), "ESTABLISHED")
    XCTAssertEqual(
      FPWCSApi2Model.streamStatus(toString: .fpwcsStreamStatusNotEnoughtBandwidth),
      "NOT_ENOUGH_BANDWIDTH")
    XCTAssertEqual(
      FPWCSApi2Model.streamStatus(toString: .fpwcsStreamStatusSnaphotComplete), "SNAPSHOT_COMPLETE")
    XCTAssertEqual(FPWCSApi2Model.streamStatus(from: "publishing"), .fpwcsStreamStatusPublishing)
    XCTAssertNil(FPWCSApi2Model.streamStatus(from: "PLAYBACK_PROBLEM"))
    XCTAssertEqual(FPWCSApi2Model.callStatus(from: "FINISH"), .fpwcsCallStatusFinish)
    XCTAssertEqual(FPWCSApi2Model.streamEventType(toString: .fpwcsStreamEventTypeData), "data")
    XCTAssertEqual(
      FPWCSApi2Model.streamEventType(toString: .fpwcsStreamEventTypeAudioMuted), "audioMuted")
    for status in kFPWCSStreamStatus.allCases {
      XCTAssertEqual(
        FPWCSApi2Model.streamStatus(from: FPWCSApi2Model.streamStatus(toString: status)), status)
    }
  }

  func testInfoStringsMapLoosely() throws {
    XCTAssertEqual(
      FPWCSApi2Model.streamStatusInfo(from: "Stream name is already in use"),
      .fpwcsStreamStatusInfoStreamNameAlreadyInUse)
    XCTAssertEqual(
      FPWCSApi2Model.streamStatusInfo(from: "stream NAME is already in use."),
      .fpwcsStreamStatusInfoStreamNameAlreadyInUse)
    XCTAssertEqual(
      FPWCSApi2Model.streamStatusInfo(from: "Stopped by REST API /terminate query"),
      .fpwcsStreamStatusInfoStoppedByRestTerminate)
    XCTAssertEqual(
      FPWCSApi2Model.streamStatusInfo(from: "Transcoding required, but disabled"),
      .fpwcsStreamStatusInfoTranscodingRequiredButDisabled)
    XCTAssertEqual(
      FPWCSApi2Model.streamStatusInfo(from: "Forbidden"), .fpwcsStreamStatusInfoUnknown)
    XCTAssertEqual(FPWCSApi2Model.streamStatusInfo(from: nil), .fpwcsStreamStatusInfoUnknown)
    for code in kFPWCSStreamStatusInfo.allCases where code != .fpwcsStreamStatusInfoUnknown {
      XCTAssertEqual(
        FPWCSApi2Model.streamStatusInfo(from: FPWCSApi2Model.streamStatusInfo(toString: code)), code
      )
    }
    // Every FAILED info string of the corpus maps to a code (when the corpus is present).
    let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
      "../../../shared/corpus/wcs-ws/wcs-status-and-info-strings.json")
    guard let data = try? Data(contentsOf: corpus) else { return }
    let json = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    let strings = try XCTUnwrap(json["failed_info_strings"] as? [String])
    XCTAssertGreaterThan(strings.count, 20)
    for text in strings {
      XCTAssertNotEqual(
        FPWCSApi2Model.streamStatusInfo(from: text), .fpwcsStreamStatusInfoUnknown, text)
    }
  }

  func testStripCodecsRemovesPayloadTypesAndTheirLines() {
    let sdp = [
      "v=0", "m=audio 9 UDP/TLS/RTP/SAVPF 111 0", "a=rtpmap:111 opus/48000/2",
      "a=fmtp:111 minptime=10",
      "a=rtpmap:0 PCMU/8000", "m=video 9 UDP/TLS/RTP/SAVPF 96 102 103", "a=rtpmap:96 VP8/90000",
      "a=rtcp-fb:96 nack", "a=rtpmap:102 H264/90000", "a=fmtp:102 profile-level-id=42e01f",
      "a=rtcp-fb:102 nack pli", "a=rtpmap:103 h264/90000", "",
    ].joined(separator: "\r\n")
    let stripped = SDPCodecFilter.strip(codecs: ["h264", "PCMU"], from: sdp)
    XCTAssertEqual(
      stripped,
      [
        "v=0", "m=audio 9 UDP/TLS/RTP/SAVPF 111", "a=rtpmap:111 opus/48000/2",
        "a=fmtp:111 minptime=10",
        "m=video 9 UDP/TLS/RTP/SAVPF 96", "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack", "",
      ].joined(separator: "\r\n"))
    XCTAssertEqual(SDPCodecFilter.strip(codecs: [], from: sdp), sdp)
    XCTAssertEqual(SDPCodecFilter.strip(codecs: ["AV1"], from: sdp), sdp)
  }

  func testConstraintInitializers() throws {
    let c = try XCTUnwrap(
      FPWCSApi2MediaConstraints(audio: true, videoWidth: 640, videoHeight: 480, videoFps: 15))
    XCTAssertNotNil(c.audio)
    XCTAssertEqual(c.video?.minWidth, 640)
    XCTAssertEqual(c.video?.maxHeight, 480)
    XCTAssertEqual(c.video?.maxFrameRate, 15)
    let audioOnly = try XCTUnwrap(FPWCSApi2MediaConstraints(audio: true, video: false))
    XCTAssertNil(audioOnly.video)
    let capturer = RTCVideoCapturer()
    let custom = try XCTUnwrap(FPWCSApi2MediaConstraints(audio: false, videoCapturer: capturer))
    XCTAssertNil(custom.audio)
    XCTAssertTrue(custom.video?.videoCapturer === capturer)
    let request = MediaRequestBuilder.connectionRequest(
      custom, direction: .publish, display: nil, transport: .fpwcsTransportUDP, stripCodecs: [])
    XCTAssertTrue(request.video?.capturer === capturer)
    let frames = Locked<Int>(0)
    capturer.setFrameHandler { frame in frames.withLock { $0 += frame.isValid ? 1 : 0 } }
    capturer.deliver(VideoFrame(width: 4, height: 2))
    XCTAssertEqual(frames.value, 1)
  }

  func testVideoFrameValidity() {
    let frame = VideoFrame(width: 5, height: 3)
    XCTAssertEqual(frame.chromaWidth, 3)
    XCTAssertEqual(frame.dataU.count, 6)
    XCTAssertTrue(frame.isValid)
    var broken = frame
    broken.dataV = Data(count: 2)
    XCTAssertFalse(broken.isValid)
  }
}
