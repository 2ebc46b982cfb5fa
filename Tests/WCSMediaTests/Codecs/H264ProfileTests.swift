import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia

/// H.264 profiles beyond constrained baseline: what OpenH264 encodes (main and constrained
/// high, CABAC) and what libavcodec decodes (a high-profile stream from the ffmpeg CLI's
/// libx264, with the 8x8 transform).
final class H264ProfileTests: XCTestCase {
  /// The SPS's profile_idc and the PPS's entropy_coding_mode_flag (H.264 §7.3.2.2) of `stream`.
  private func profileAndCABAC(_ stream: [UInt8]) throws -> (profile: UInt8, cabac: Bool) {
    let units = H264AnnexB.nalUnits(stream)
    let sps = try XCTUnwrap(
      units.first { H264NALUnitType.of($0.first ?? 0) == H264NALUnitType.sps })
    let pps = try XCTUnwrap(
      units.first { H264NALUnitType.of($0.first ?? 0) == H264NALUnitType.pps })
    var reader = H264BitReader(rbsp: H264BitReader.removingEmulationPrevention(pps.dropFirst()))
    _ = try reader.unsignedExpGolomb(max: 255)  // pic_parameter_set_id
    _ = try reader.unsignedExpGolomb(max: 31)  // seq_parameter_set_id
    return (try H264SequenceParameterSet(nalUnit: sps).profileIDC, try reader.flag())
  }

  func testMainAndHighAreEncodedWithCABACAndDecode() throws {
    let camera = VirtualCamera(width: 640, height: 480)
    for (profile, idc) in [(H264Encoder.Profile.main, 77), (.constrainedHigh, 100)] {
      let encoder = try H264Encoder(
        configuration: .init(width: 640, height: 480, bitrateKbps: 1500, profile: profile))
      let decoder = try H264Decoder()
      var worst = Double.infinity
      for index in 0..<20 {
        let source = camera.frame(index)
        let frame = try XCTUnwrap(
          try encoder.encode(source, timestamp: camera.rtpTimestamp(frameIndex: index)).first)
        if index == 0 {
          let found = try profileAndCABAC(frame.data)
          XCTAssertEqual(found.profile, UInt8(idc), "\(profile)")
          XCTAssertTrue(found.cabac, "\(profile) uses CABAC")
        }
        let picture = try XCTUnwrap(try decoder.decode(frame.data))
        worst = min(worst, try XCTUnwrap(picture.psnr(to: source)))
        XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: picture), UInt32(index))
      }
      XCTAssertGreaterThanOrEqual(worst, 30, "\(profile)")
    }
    let baseline = try H264Encoder(configuration: .init(width: 640, height: 480))
    let frame = try XCTUnwrap(try baseline.encode(camera.frame(0), timestamp: 0).first)
    let found = try profileAndCABAC(frame.data)
    XCTAssertEqual(found.profile, 66)
    XCTAssertFalse(found.cabac)
  }

  /// libx264 high profile (CABAC, 8x8 transform, no B pictures as WebRTC senders use it),
  /// split into access units at its delimiters: every picture decodes, equal to what the
  /// ffmpeg CLI decodes from the same file.
  func testHighProfileStreamFromFFmpegDecodesAsFFmpegDoes() throws {
    let ffmpeg = try ExternalTool.require("ffmpeg")
    let directory = try ExternalTool.temporaryDirectory(for: self)
    let stream = directory.appendingPathComponent("high.h264").path
    let raw = directory.appendingPathComponent("high.yuv").path
    let encoded = try ExternalTool.run(
      ffmpeg,
      [
        "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "30",
        "-c:v", "libx264", "-profile:v", "high", "-bf", "0", "-x264-params", "aud=1",
        "-pix_fmt", "yuv420p", "-f", "h264", stream,
      ])
    guard encoded.status == 0 else { throw XCTSkip("ffmpeg has no libx264 encoder") }
    XCTAssertEqual(
      try ExternalTool.run(
        ffmpeg, ["-v", "error", "-i", stream, "-f", "rawvideo", "-pix_fmt", "yuv420p", raw]
      ).status, 0)
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: stream)))
    let reference = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
    XCTAssertEqual(try profileAndCABAC(bytes).profile, 100)
    XCTAssertTrue(try profileAndCABAC(bytes).cabac)

    // Access units: from one delimiter (type 9) to the next.
    var accessUnits: [[[UInt8]]] = []
    for unit in H264AnnexB.nalUnits(bytes) {
      if H264NALUnitType.of(unit.first ?? 0) == H264NALUnitType.accessUnitDelimiter
        || accessUnits.isEmpty
      {
        accessUnits.append([])
      }
      accessUnits[accessUnits.count - 1].append(Array(unit))
    }
    XCTAssertEqual(accessUnits.count, 30)
    let decoder = try H264Decoder()
    let frameSize = 320 * 240 * 3 / 2
    var decoded = 0
    for (index, units) in accessUnits.enumerated() {
      guard let picture = try decoder.decode(H264AnnexB.stream(units)) else { continue }
      let start = index * frameSize
      XCTAssertEqual(picture.width, 320)
      XCTAssertEqual(
        picture.y, Array(reference[start..<start + 320 * 240]), "picture \(index) luma")
      decoded += 1
    }
    XCTAssertEqual(decoded, 30)
  }
}
