import XCTest

@testable import WCSLocalServer

/// The parts of an RTSP/RTMP pull that need no source: the stream names that start one, and
/// libavformat's H.264 layouts turned into Annex B with bounds on every length.
final class PulledSourceTests: XCTestCase {
  /// An SPS of constrained baseline level 3.0, 320×240 (x264), and a PPS.
  static let sps: [UInt8] = [
    0x67, 0x42, 0xC0, 0x1E, 0xD9, 0x01, 0x41, 0xFB, 0x01, 0x10, 0x00, 0x00, 0x03, 0x00, 0x10,
    0x00, 0x00, 0x03, 0x03, 0xC0, 0xF1, 0x62, 0xE4, 0x80,
  ]
  static let pps: [UInt8] = [0x68, 0xCB, 0x83, 0xCB, 0x20]

  static var avcC: [UInt8] {
    [0x01, 0x42, 0xC0, 0x1E, 0xFF, 0xE1, 0x00, UInt8(sps.count)] + sps
      + [0x01, 0x00, UInt8(pps.count)] + pps
  }

  func testOnlyRTSPAndRTMPURLsArePulledAndEachURLHasOneSource() {
    XCTAssertEqual(
      PullSourceName.sourceId(forStreamName: "rtsp://127.0.0.1:554/cam"),
      "pull:rtsp://127.0.0.1:554/cam")
    XCTAssertNotNil(PullSourceName.sourceId(forStreamName: "RTMP://host/live/a"))
    XCTAssertNil(PullSourceName.sourceId(forStreamName: "camera"))
    XCTAssertNil(PullSourceName.sourceId(forStreamName: "http://host/a"))
    XCTAssertNil(PullSourceName.sourceId(forStreamName: "rtsp://"))
    XCTAssertNil(PullSourceName.sourceId(forStreamName: "rtsp://host/a b"))
    XCTAssertNil(
      PullSourceName.sourceId(forStreamName: "rtsp://" + String(repeating: "a", count: 2048)))
    XCTAssertEqual(
      PullSourceName.url(ofSourceId: "pull:rtmp://host/live/a"), "rtmp://host/live/a")
    XCTAssertNil(PullSourceName.url(ofSourceId: "pull:camera"))
    XCTAssertNil(PullSourceName.url(ofSourceId: "publisher-1"))
  }

  func testAVCPacketsBecomeAnnexBAfterTheRecordsParameterSets() throws {
    var h264 = try PulledH264(extradata: Self.avcC)
    XCTAssertEqual(h264.lengthSize, 4)
    XCTAssertEqual(h264.parameterSets, [Self.sps, Self.pps])
    XCTAssertEqual(
      h264.formatParameters.profileLevelID.description, "42e01e", "constrained baseline 3.0")
    XCTAssertEqual(h264.formatParameters.packetizationMode, 1)
    let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00]
    let slice: [UInt8] = [0x41, 0x9A, 0x02]
    let packet: [UInt8] = [0, 0, 0, 4] + idr + [0, 0, 0, 3] + slice
    let first = try packet.withUnsafeBytes { try h264.accessUnit($0) }
    // The IDR's trailing zero goes: an Annex B reader takes it for trailing_zero_8bits.
    let read = Array(idr.dropLast())
    XCTAssertEqual(
      first,
      [0, 0, 0, 1] + Self.sps + [0, 0, 0, 1] + Self.pps + [0, 0, 0, 1] + read + [0, 0, 0, 1] + slice
    )
    let second = try packet.withUnsafeBytes { try h264.accessUnit($0) }
    XCTAssertEqual(second, [0, 0, 0, 1] + read + [0, 0, 0, 1] + slice, "parameter sets once")
  }

  func testAnnexBExtradataAndPacketsPassThrough() throws {
    var h264 = try PulledH264(extradata: [0, 0, 0, 1] + Self.sps + [0, 0, 1] + Self.pps)
    XCTAssertNil(h264.lengthSize)
    XCTAssertEqual(h264.parameterSets, [Self.sps, Self.pps])
    let packet: [UInt8] = [0, 0, 0, 1, 0x41, 0x9A]
    _ = try packet.withUnsafeBytes { try h264.accessUnit($0) }
    XCTAssertEqual(try packet.withUnsafeBytes { try h264.accessUnit($0) }, packet)
  }

  func testLengthsPastThePacketAndOversizedUnitsAreDroppedNotRead() throws {
    var h264 = try PulledH264(extradata: Self.avcC)
    let pastTheEnd: [UInt8] = [0, 0, 0, 9, 0x41, 0x9A]
    XCTAssertThrowsError(try pastTheEnd.withUnsafeBytes { try h264.accessUnit($0) }) {
      XCTAssertEqual($0 as? PullError, .badFrame("NAL unit past the end"))
    }
    let truncatedLength: [UInt8] = [0, 0, 0, 2, 0x41, 0x9A, 0, 0]
    XCTAssertThrowsError(try truncatedLength.withUnsafeBytes { try h264.accessUnit($0) }) {
      XCTAssertEqual($0 as? PullError, .badFrame("truncated NAL length"))
    }
    let huge = [UInt8](repeating: 0, count: PulledH264.maxAccessUnitSize + 1)
    XCTAssertThrowsError(try huge.withUnsafeBytes { try h264.accessUnit($0) }) {
      XCTAssertEqual($0 as? PullError, .badFrame("access unit of \(huge.count) bytes"))
    }
  }

  func testRecordsThatEndEarlyOrClaimHugePicturesAreTheWrongFormat() {
    var cut = Self.avcC
    cut.removeLast(3)
    XCTAssertThrowsError(try PulledH264(extradata: cut)) {
      XCTAssertEqual($0 as? PullError, .wrongFormat("avcC parameter set past the end"))
    }
    XCTAssertThrowsError(try PulledH264(extradata: [0x01, 0x42, 0xC0])) {
      XCTAssertEqual($0 as? PullError, .wrongFormat("avcC record too short"))
    }
    XCTAssertEqual(PullError.wrongFormat("x").info(url: "rtsp://a/b"), "Rtsp has wrong format")
    XCTAssertEqual(
      PullError.cannotConnect("x").info(url: "rtsp://a/b"), "Failed to connect to rtsp stream")
    XCTAssertEqual(PullError.notFound("x").info(url: "rtsp://a/b"), "Rtsp stream not found")
    XCTAssertEqual(PullError.ended("x").info(url: "rtmp://a/b"), "Stream failed")
  }
}
