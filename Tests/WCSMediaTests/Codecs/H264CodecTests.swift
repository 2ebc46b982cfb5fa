import TestSupport
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia

final class H264CodecTests: XCTestCase {
  private func encoder(
    width: Int = 640, height: Int = 480, bitrateKbps: Int = 1500, keyFrameInterval: Int = 3000,
    maxNALUnitSize: Int? = nil
  ) throws -> H264Encoder {
    try H264Encoder(
      configuration: .init(
        width: width, height: height, frameRate: 30, bitrateKbps: bitrateKbps,
        keyFrameInterval: keyFrameInterval, maxNALUnitSize: maxNALUnitSize))
  }

  private func nalTypes(_ frame: EncodedVideoFrame) -> [UInt8] {
    H264AnnexB.nalUnits(frame.data).map { H264NALUnitType.of($0.first ?? 0) }
  }

  func testSequenceRoundTripPSNRAtLeast30dB() throws {
    let camera = VirtualCamera(width: 640, height: 480)
    let encoder = try encoder()
    let decoder = try H264Decoder()
    var worst = Double.infinity
    for index in 0..<20 {
      let source = camera.frame(index)
      let frames = try encoder.encode(source, timestamp: camera.rtpTimestamp(frameIndex: index))
      XCTAssertEqual(frames.count, 1)
      let frame = try XCTUnwrap(frames.first)
      XCTAssertEqual(frame.isKeyFrame, index == 0)
      XCTAssertEqual(frame.timestamp, UInt32(index * 3000))
      let picture = try XCTUnwrap(try decoder.decode(frame.data))
      XCTAssertEqual(picture.width, 640)
      XCTAssertEqual(picture.height, 480)
      worst = min(worst, try XCTUnwrap(picture.psnr(to: source)))
      XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: picture), UInt32(index))
    }
    XCTAssertGreaterThanOrEqual(worst, 30)
  }

  func testIDRCarriesSPSAndPPSOfConstrainedBaseline() throws {
    let camera = VirtualCamera(width: 320, height: 240)
    let encoder = try encoder(width: 320, height: 240, bitrateKbps: 500)
    let frame = try XCTUnwrap(try encoder.encode(camera.frame(0), timestamp: 0).first)
    XCTAssertEqual(Array(nalTypes(frame).prefix(3)), [7, 8, 5])
    let units = H264AnnexB.nalUnits(frame.data)
    let sps = try H264SequenceParameterSet(nalUnit: units[0])
    XCTAssertEqual(sps.profileIDC, 66)
    XCTAssertEqual(sps.width, 320)
    XCTAssertEqual(sps.height, 240)
    let delta = try XCTUnwrap(try encoder.encode(camera.frame(1), timestamp: 3000).first)
    XCTAssertEqual(nalTypes(delta), [1])
  }

  func testKeyFrameOnDemandRepeatsParameterSets() throws {
    let camera = VirtualCamera(width: 320, height: 240)
    let encoder = try encoder(width: 320, height: 240, bitrateKbps: 500)
    var keyFrames: [Int] = []
    for index in 0..<12 {
      if index == 7 { encoder.requestKeyFrame() }
      let frame = try XCTUnwrap(
        try encoder.encode(camera.frame(index), timestamp: camera.rtpTimestamp(frameIndex: index))
          .first)
      if frame.isKeyFrame {
        keyFrames.append(index)
        XCTAssertEqual(Array(nalTypes(frame).prefix(2)), [7, 8])
      }
    }
    XCTAssertEqual(keyFrames, [0, 7])
  }

  func testAutomaticKeyFrameInterval() throws {
    let camera = VirtualCamera(width: 160, height: 120)
    let encoder = try encoder(width: 160, height: 120, bitrateKbps: 200, keyFrameInterval: 10)
    var keyFrames: [Int] = []
    for index in 0..<25 {
      let frames = try encoder.encode(camera.frame(index), timestamp: 0)
      if frames.first?.isKeyFrame == true { keyFrames.append(index) }
    }
    XCTAssertEqual(keyFrames, [0, 10, 20])
  }

  func testLowerBitrateGivesSmallerFrames() throws {
    let camera = VirtualCamera(width: 640, height: 480)
    func bytes(kbps: Int) throws -> Int {
      let encoder = try encoder(bitrateKbps: 2000)
      try encoder.setBitrate(kbps)
      XCTAssertEqual(encoder.configuration.bitrateKbps, kbps)
      var total = 0
      for index in 0..<30 {
        total += try encoder.encode(camera.frame(index), timestamp: 0).reduce(0) {
          $0 + $1.data.count
        }
      }
      return total
    }
    let low = try bytes(kbps: 200)
    let high = try bytes(kbps: 2000)
    XCTAssertLessThan(low * 2, high)
  }

  func testSizeLimitedSlicesForPacketizationModeZero() throws {
    let camera = VirtualCamera(width: 640, height: 480)
    let encoder = try encoder(bitrateKbps: 2500, maxNALUnitSize: 1100)
    let decoder = try H264Decoder()
    for index in 0..<5 {
      let source = camera.frame(index)
      let frame = try XCTUnwrap(try encoder.encode(source, timestamp: 0).first)
      let units = H264AnnexB.nalUnits(frame.data)
      if index == 0 { XCTAssertGreaterThan(units.count, 3) }
      for unit in units { XCTAssertLessThanOrEqual(unit.count, 1100) }
      let picture = try XCTUnwrap(try decoder.decode(frame.data))
      XCTAssertGreaterThanOrEqual(try XCTUnwrap(picture.psnr(to: source)), 30)
    }
  }

  func testDeltaBeforeIDRIsRefused() throws {
    let camera = VirtualCamera(width: 160, height: 120)
    let encoder = try encoder(width: 160, height: 120, bitrateKbps: 200)
    _ = try encoder.encode(camera.frame(0), timestamp: 0)
    let delta = try XCTUnwrap(try encoder.encode(camera.frame(1), timestamp: 0).first)
    let decoder = try H264Decoder()
    XCTAssertThrowsError(try decoder.decode(delta.data)) { error in
      XCTAssertEqual((error as? H264Error)?.reason, .decode)
    }
    XCTAssertThrowsError(try decoder.decode([])) { error in
      XCTAssertEqual((error as? H264Error)?.reason, .invalidInput)
    }
  }

  func testSPSOverTheLimitNeverReachesTheDecoder() throws {
    // Baseline SPS: profile 66, level 31, id 0, log2_max_frame_num 4, POC type 2, 1 reference,
    // 1024 x 1024 macroblocks (16384 x 16384 samples), frame_mbs_only, no cropping.
    var writer = ExpGolombBitWriter()
    writer.bits(0x67, 8)
    writer.bits(66, 8)
    writer.bits(0xC0, 8)
    writer.bits(31, 8)
    writer.ue(0)
    writer.ue(0)
    writer.ue(2)
    writer.ue(1)
    writer.bits(0, 1)
    writer.ue(1023)
    writer.ue(1023)
    writer.bits(1, 1)
    writer.bits(1, 1)
    writer.bits(0, 1)
    writer.bits(0, 1)
    writer.bits(1, 1)  // rbsp_stop_one_bit
    let sps = writer.bytes
    let parsed = try H264SequenceParameterSet(nalUnit: sps)
    XCTAssertEqual(parsed.width, 16384)
    XCTAssertEqual(parsed.height, 16384)
    let decoder = try H264Decoder()
    XCTAssertThrowsError(try decoder.decode(H264AnnexB.stream([sps]))) { error in
      XCTAssertEqual((error as? H264Error)?.reason, .pictureTooLarge)
    }
    XCTAssertThrowsError(try H264SequenceParameterSet(nalUnit: sps.prefix(6))) { error in
      XCTAssertEqual(error as? H264BitstreamError, .truncated)
    }
  }

  func testAnnexBSplitsThreeAndFourByteStartCodes() {
    let stream: [UInt8] = [0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 1, 0x65, 4, 5]
    let units = H264AnnexB.nalUnits(stream).map(Array.init)
    XCTAssertEqual(units, [[0x67, 1, 2], [0x68, 3], [0x65, 4, 5]])
    XCTAssertEqual(H264AnnexB.nalUnits(H264AnnexB.stream(units)).map(Array.init), units)
  }
}
