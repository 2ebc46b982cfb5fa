import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia

final class VirtualSourceTests: XCTestCase {
  func testCameraIsDeterministicAndMoves() {
    let camera = VirtualCamera(width: 320, height: 240)
    XCTAssertEqual(camera.frame(17), camera.frame(17))
    XCTAssertNotEqual(camera.frame(17).y, camera.frame(18).y)
    XCTAssertEqual(camera.blockSize, 10)
    XCTAssertEqual(VirtualCamera(width: 640, height: 480).blockSize, 16)
    XCTAssertEqual(camera.rtpTimestamp(frameIndex: 30), 90_000)
  }

  func testFrameNumberReadsBackFromRawPictures() {
    let camera = VirtualCamera(width: 640, height: 480)
    for index in [0, 1, 2, 255, 256, 65_535, 1_000_000, Int(Int32.max)] {
      XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: camera.frame(index)), UInt32(index))
    }
    // The top-left block of frame 0x80000000 (bit 31) is white, of frame 1 black.
    let high = VirtualCamera(width: 128, height: 64).frame(1 << 31)
    XCTAssertEqual(high.luma(x: 1, row: 1), 235)
    XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: high), 1 << 31)
    XCTAssertNil(VirtualCamera.decodeFrameNumber(from: I420Image(width: 640, height: 480, y: 128)))
  }

  func testFrameNumberSurvivesVP8For60Frames() throws {
    for (width, height, kbps) in [(640, 480, 1000), (320, 240, 250)] {
      let camera = VirtualCamera(width: width, height: height)
      let encoder = try VP8Encoder(
        configuration: .init(width: width, height: height, bitrateKbps: kbps))
      let decoder = try VP8Decoder()
      var numbers: [UInt32?] = []
      var worst = Double.infinity
      for index in 0..<60 {
        let source = camera.frame(index)
        for frame in try encoder.encode(source, timestamp: camera.rtpTimestamp(frameIndex: index)) {
          let picture = try XCTUnwrap(try decoder.decode(frame.data))
          numbers.append(VirtualCamera.decodeFrameNumber(from: picture))
          worst = min(worst, picture.psnr(to: source) ?? 0)
        }
      }
      XCTAssertEqual(numbers, (0..<60).map { UInt32($0) }, "\(width)x\(height)")
      XCTAssertGreaterThanOrEqual(worst, 30, "\(width)x\(height)")
    }
  }

  func testMicrophoneTone() {
    let microphone = VirtualMicrophone()
    let frame = microphone.frame(3)
    XCTAssertEqual(frame.samplesPerChannel, 960)
    XCTAssertEqual(frame.timestamp, 2880)
    XCTAssertEqual(frame, microphone.frame(3))
    XCTAssertEqual(CodecAudioAnalysis.dominantFrequency(in: frame.samples), 450, accuracy: 50)
    XCTAssertEqual(frame.energy, 8000.0 * 8000.0 / 2, accuracy: 8000.0 * 8000.0 * 0.01)
    // Continuous phase across frames: the last sample of frame 2 leads into frame 3.
    let previous = microphone.frame(2).samples.last ?? 0
    XCTAssertLessThan(abs(Int(previous) - Int(frame.samples[0])), 500)
    let stereo = VirtualMicrophone(channels: 2).frame(0)
    XCTAssertEqual(stereo.samples.count, 1920)
    XCTAssertEqual(stereo.samples[100], stereo.samples[101])
  }

  func testMicrophoneChirpRises() {
    let microphone = VirtualMicrophone(signal: .chirp(from: 200, to: 3200, period: 1.0))
    let early = CodecAudioAnalysis.dominantFrequency(in: microphone.frame(2).samples)
    let late = CodecAudioAnalysis.dominantFrequency(in: microphone.frame(45).samples)
    // At 50 ms the sweep is near 350 Hz, at 910 ms near 2930 Hz.
    XCTAssertEqual(early, 350, accuracy: 100)
    XCTAssertEqual(late, 2930, accuracy: 150)
  }
}
