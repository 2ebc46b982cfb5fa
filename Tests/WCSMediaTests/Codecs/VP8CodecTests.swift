import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia

final class VP8CodecTests: XCTestCase {
  private func encoder(
    width: Int = 640, height: Int = 480, bitrateKbps: Int = 1500, keyFrameInterval: Int = 3000
  ) throws -> VP8Encoder {
    try VP8Encoder(
      configuration: .init(
        width: width, height: height, frameRate: 30, bitrateKbps: bitrateKbps,
        keyFrameInterval: keyFrameInterval))
  }

  func testSequenceRoundTripPSNRAtLeast30dB() throws {
    let camera = VirtualCamera(width: 640, height: 480)
    let encoder = try encoder()
    let decoder = try VP8Decoder()
    var worst = Double.infinity
    for index in 0..<20 {
      let source = camera.frame(index)
      let frames = try encoder.encode(source, timestamp: camera.rtpTimestamp(frameIndex: index))
      XCTAssertEqual(frames.count, 1)
      let frame = try XCTUnwrap(frames.first)
      XCTAssertEqual(frame.isKeyFrame, index == 0)
      XCTAssertEqual(EncodedVideoFrame.isKeyFrame(frame.data), frame.isKeyFrame)
      XCTAssertEqual(frame.timestamp, UInt32(index * 3000))
      let picture = try XCTUnwrap(try decoder.decode(frame.data))
      XCTAssertEqual(picture.width, 640)
      XCTAssertEqual(picture.height, 480)
      let psnr = try XCTUnwrap(picture.psnr(to: source))
      worst = min(worst, psnr)
      XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: picture), UInt32(index))
    }
    XCTAssertGreaterThanOrEqual(worst, 30)
  }

  func testKeyFrameOnDemand() throws {
    let camera = VirtualCamera(width: 320, height: 240)
    let encoder = try encoder(width: 320, height: 240, bitrateKbps: 500)
    var keyFrames: [Int] = []
    for index in 0..<12 {
      if index == 7 { encoder.requestKeyFrame() }
      let frames = try encoder.encode(
        camera.frame(index), timestamp: camera.rtpTimestamp(frameIndex: index))
      if frames.first?.isKeyFrame == true { keyFrames.append(index) }
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
    XCTAssertEqual(keyFrames.first, 0)
    XCTAssertGreaterThanOrEqual(keyFrames.count, 3)
    for (a, b) in zip(keyFrames, keyFrames.dropFirst()) { XCTAssertLessThanOrEqual(b - a, 10) }
  }

  func testBitrateRoughlyHonoured() throws {
    let camera = VirtualCamera(width: 320, height: 240)
    for target in [300, 800] {
      let encoder = try encoder(width: 320, height: 240, bitrateKbps: target)
      var bytes = 0
      for index in 0..<60 {
        let frames = try encoder.encode(
          camera.frame(index), timestamp: camera.rtpTimestamp(frameIndex: index))
        // The first second includes the key frame and the rate controller settling; measure after.
        if index >= 15 { bytes += frames.reduce(0) { $0 + $1.data.count } }
      }
      let kbps = Double(bytes * 8) / (45.0 / 30.0) / 1000
      XCTAssertEqual(kbps / Double(target), 1, accuracy: 0.4, "target \(target) kbps, got \(kbps)")
    }
  }

  func testSetBitrateAtRuntime() throws {
    let camera = VirtualCamera(width: 320, height: 240)
    let encoder = try encoder(width: 320, height: 240, bitrateKbps: 1200)
    func measure(_ range: Range<Int>) throws -> Int {
      var bytes = 0
      for index in range {
        let frames = try encoder.encode(camera.frame(index), timestamp: 0)
        if index >= range.lowerBound + 10 { bytes += frames.reduce(0) { $0 + $1.data.count } }
      }
      return bytes
    }
    let high = try measure(0..<40)
    try encoder.setBitrate(200)
    XCTAssertEqual(encoder.configuration.bitrateKbps, 200)
    let low = try measure(40..<80)
    XCTAssertLessThan(low * 2, high)
  }

  func testTruncatedAndCorruptFramesAreRejectedWithoutCrash() throws {
    let camera = VirtualCamera(width: 320, height: 240)
    let encoder = try encoder(width: 320, height: 240, bitrateKbps: 500)
    let frames = try (0..<3).map {
      try XCTUnwrap(try encoder.encode(camera.frame($0), timestamp: 0).first)
    }
    let decoder = try VP8Decoder()
    XCTAssertThrowsError(try decoder.decode([])) { error in
      XCTAssertEqual((error as? VP8Error)?.reason, .invalidInput)
    }
    // A delta frame before any key frame cannot be decoded.
    XCTAssertThrowsError(try decoder.decode(frames[1].data))
    // Garbage that claims to be a key frame but has no start code.
    XCTAssertThrowsError(try decoder.decode([0x10, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00])) { error in
      XCTAssertEqual((error as? VP8Error)?.reason, .decode)
    }
    // Every truncation of the key frame header, and cuts through its body: error or corrupt flag.
    let key = frames[0].data
    var rejected = 0
    for length in Array(1..<20) + [key.count / 4, key.count / 2, key.count - 10] {
      let fresh = try VP8Decoder()
      do {
        _ = try fresh.decode(Array(key.prefix(length)))
      } catch {
        XCTAssertTrue([.decode, .corruptFrame].contains(error.reason), "\(error)")
        rejected += 1
      }
    }
    XCTAssertGreaterThanOrEqual(rejected, 19)
    // The decoder still works on good data afterwards.
    XCTAssertNotNil(try decoder.decode(key))
    XCTAssertNotNil(try decoder.decode(frames[1].data))
  }

  func testTwoThreadsAndOddSize() throws {
    let camera = VirtualCamera(width: 321, height: 241)
    let encoder = try VP8Encoder(
      configuration: .init(width: 321, height: 241, bitrateKbps: 800, threads: 2))
    let decoder = try VP8Decoder()
    for index in 0..<5 {
      let source = camera.frame(index)
      let frame = try XCTUnwrap(try encoder.encode(source, timestamp: 0).first)
      let picture = try XCTUnwrap(try decoder.decode(frame.data))
      XCTAssertEqual(picture.width, 321)
      XCTAssertEqual(picture.height, 241)
      XCTAssertGreaterThanOrEqual(try XCTUnwrap(picture.psnr(to: source)), 30)
    }
  }

  func testWrongPictureSizeIsRejected() throws {
    let encoder = try encoder(width: 320, height: 240)
    XCTAssertThrowsError(try encoder.encode(I420Image.black(width: 640, height: 480), timestamp: 0))
    {
      XCTAssertEqual(($0 as? VP8Error)?.reason, .invalidInput)
    }
    XCTAssertThrowsError(try VP8Encoder(configuration: .init(width: 0, height: 10)))
  }
}
