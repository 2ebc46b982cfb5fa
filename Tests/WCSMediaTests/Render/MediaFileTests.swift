import Foundation
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSMedia

final class MediaFileTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-media-files-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  func testY4MRoundTripAndFFProbe() throws {
    let camera = VirtualCamera(width: 96, height: 64)
    let url = directory.appendingPathComponent("camera.y4m")
    let writer = try Y4MWriter(url: url, width: 96, height: 64, frameRate: 30)
    let pictures = (0..<5).map { camera.frame($0) }
    for picture in pictures { try writer.write(picture) }
    XCTAssertThrowsError(try writer.write(I420Image.black(width: 8, height: 8)))
    try writer.close()
    XCTAssertThrowsError(try writer.write(pictures[0])) {
      XCTAssertEqual($0 as? MediaFileError, .closed)
    }

    let file = try Y4MFile(url: url)
    XCTAssertEqual(file.width, 96)
    XCTAssertEqual(file.height, 64)
    XCTAssertEqual(file.frameRateNumerator, 30)
    XCTAssertEqual(file.frameRateDenominator, 1)
    XCTAssertEqual(file.frames, pictures)
    let bytes = try Data(contentsOf: url)
    let header = "YUV4MPEG2 W96 H64 F30:1 Ip A1:1 C420jpeg\n"
    XCTAssertEqual(Array(bytes.prefix(header.utf8.count)), Array(header.utf8))
    XCTAssertEqual(bytes.count, header.utf8.count + 5 * (6 + 96 * 64 * 3 / 2))

    if let probe = try FFProbeRunner.stream(of: url) {
      XCTAssertEqual(probe["codec_name"], "rawvideo")
      XCTAssertEqual(probe["width"], "96")
      XCTAssertEqual(probe["height"], "64")
      XCTAssertEqual(probe["nb_read_frames"], "5")
    }
  }

  func testY4MReaderIsStrict() {
    let good = Array("YUV4MPEG2 W2 H2 F25:1 C420\nFRAME\n".utf8) + [1, 2, 3, 4, 5, 6]
    XCTAssertEqual(try Y4MFile(bytes: good).frames.first?.y, [1, 2, 3, 4])
    XCTAssertEqual(try Y4MFile(bytes: good).frames.first?.v, [6])
    for length in 0..<good.count where length != 27 {
      // Every cut is an error except right after the header (a stream with no frames).
      XCTAssertThrowsError(try Y4MFile(bytes: Array(good.prefix(length))), "length \(length)")
    }
    XCTAssertEqual(try Y4MFile(bytes: Array(good.prefix(27))).frames.count, 0)
    XCTAssertThrowsError(try Y4MFile(bytes: Array("YUV4MPEG2 W2 H2 C444\n".utf8))) {
      XCTAssertEqual($0 as? MediaFileError, .unsupported("chroma 444"))
    }
    XCTAssertThrowsError(try Y4MFile(bytes: Array("YUV4MPEG2 W0 H2\n".utf8)))
    XCTAssertThrowsError(try Y4MFile(bytes: Array("YUV4MPEG2 W2 H2\nFRAMX\n123456".utf8)))
  }

  func testIVFRoundTripAndFFProbe() throws {
    let camera = VirtualCamera(width: 160, height: 120)
    let encoder = try VP8Encoder(configuration: .init(width: 160, height: 120, bitrateKbps: 300))
    let url = directory.appendingPathComponent("camera.ivf")
    let writer = try IVFWriter(url: url, width: 160, height: 120, timebaseRate: 30)
    var written: [EncodedVideoFrame] = []
    for index in 0..<30 {
      for frame in try encoder.encode(camera.frame(index), timestamp: UInt32(index)) {
        try writer.write(frame.data, timestamp: UInt64(frame.timestamp))
        written.append(frame)
      }
    }
    try writer.close()

    let file = try IVFFile(url: url)
    XCTAssertEqual(file.fourCC, "VP80")
    XCTAssertEqual(file.width, 160)
    XCTAssertEqual(file.height, 120)
    XCTAssertEqual(file.timebaseRate, 30)
    XCTAssertEqual(file.timebaseScale, 1)
    XCTAssertEqual(file.declaredFrameCount, 30)
    XCTAssertEqual(file.frames.map(\.data), written.map(\.data))
    XCTAssertEqual(file.frames.map(\.timestamp), (0..<30).map { UInt64($0) })
    // The frames decode back to the camera's pictures.
    let decoder = try VP8Decoder()
    let last = try XCTUnwrap(file.frames.compactMap { try decoder.decode($0.data) }.last)
    XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: last), 29)

    if let probe = try FFProbeRunner.stream(of: url) {
      XCTAssertEqual(probe["codec_name"], "vp8")
      XCTAssertEqual(probe["width"], "160")
      XCTAssertEqual(probe["height"], "120")
      XCTAssertEqual(probe["nb_read_frames"], "30")
    }
  }

  func testIVFReaderIsStrict() throws {
    let url = directory.appendingPathComponent("small.ivf")
    let writer = try IVFWriter(url: url, width: 2, height: 2)
    try writer.write([1, 2, 3], timestamp: 7)
    try writer.close()
    let bytes = [UInt8](try Data(contentsOf: url))
    XCTAssertEqual(bytes.count, 32 + 12 + 3)
    XCTAssertEqual(Array(bytes[0..<4]), Array("DKIF".utf8))
    XCTAssertEqual(Array(bytes[8..<12]), Array("VP80".utf8))
    XCTAssertEqual(
      try IVFFile(bytes: bytes).frames, [IVFFile.Frame(data: [1, 2, 3], timestamp: 7)])
    for length in 0..<bytes.count where length != 32 {
      XCTAssertThrowsError(try IVFFile(bytes: Array(bytes.prefix(length))), "length \(length)")
    }
    var badHeaderSize = bytes
    badHeaderSize[6] = 0xFF
    badHeaderSize[7] = 0xFF
    XCTAssertThrowsError(try IVFFile(bytes: badHeaderSize))
    var hugeFrame = bytes
    hugeFrame[32 + 3] = 0x7F  // frame size ≈ 2 GB
    XCTAssertThrowsError(try IVFFile(bytes: hugeFrame)) {
      guard case .malformed = $0 as? MediaFileError else { return XCTFail("\($0)") }
    }
  }

  func testWAVRoundTripAndFFProbe() throws {
    let microphone = VirtualMicrophone(signal: .tone(frequency: 440), amplitude: 9000, channels: 2)
    let url = directory.appendingPathComponent("tone.wav")
    let writer = try WAVWriter(url: url, sampleRate: 48_000, channels: 2)
    let frames = (0..<50).map { microphone.frame($0) }  // 1 s
    for frame in frames { try writer.write(frame) }
    XCTAssertThrowsError(try writer.write(PCMAudioFrame(samples: [1], channels: 1)))
    try writer.close()

    let bytes = [UInt8](try Data(contentsOf: url))
    XCTAssertEqual(bytes.count, 44 + 48_000 * 2 * 2)
    // RIFF size = file - 8, data size = samples bytes, both little-endian.
    XCTAssertEqual(Array(bytes[4..<8]), MediaFileLittleEndian.bytes(UInt32(bytes.count - 8)))
    XCTAssertEqual(Array(bytes[40..<44]), MediaFileLittleEndian.bytes(UInt32(192_000)))
    let file = try WAVFile(url: url)
    XCTAssertEqual(file.sampleRate, 48_000)
    XCTAssertEqual(file.channels, 2)
    XCTAssertEqual(file.samplesPerChannel, 48_000)
    XCTAssertEqual(file.samples, frames.flatMap(\.samples))

    if let probe = try FFProbeRunner.stream(of: url) {
      XCTAssertEqual(probe["codec_name"], "pcm_s16le")
      XCTAssertEqual(probe["sample_rate"], "48000")
      XCTAssertEqual(probe["channels"], "2")
      XCTAssertEqual(Double(probe["duration"] ?? "") ?? 0, 1.0, accuracy: 0.001)
    }
  }

  func testWAVReaderIsStrict() {
    var header = Array("RIFF".utf8) + MediaFileLittleEndian.bytes(UInt32(40)) + Array("WAVE".utf8)
    // An unknown chunk with an odd size (padded) before fmt.
    header += Array("LIST".utf8) + MediaFileLittleEndian.bytes(UInt32(3)) + [1, 2, 3, 0]
    header +=
      Array("fmt ".utf8) + MediaFileLittleEndian.bytes(UInt32(16))
      + MediaFileLittleEndian.bytes(UInt16(1))
    header += MediaFileLittleEndian.bytes(UInt16(1)) + MediaFileLittleEndian.bytes(UInt32(8000))
    header += MediaFileLittleEndian.bytes(UInt32(16000)) + MediaFileLittleEndian.bytes(UInt16(2))
    header += MediaFileLittleEndian.bytes(UInt16(16))
    let good =
      header + Array("data".utf8) + MediaFileLittleEndian.bytes(UInt32(4)) + [
        0x01, 0x00, 0xFF, 0xFF,
      ]
    XCTAssertEqual(try WAVFile(bytes: good).samples, [1, -1])
    XCTAssertEqual(try WAVFile(bytes: good).sampleRate, 8000)
    for length in 0..<good.count {
      XCTAssertThrowsError(try WAVFile(bytes: Array(good.prefix(length))), "length \(length)")
    }
    var eightBit = good
    eightBit[12 + 12 + 8 + 14] = 8
    XCTAssertThrowsError(try WAVFile(bytes: eightBit)) {
      XCTAssertEqual($0 as? MediaFileError, .unsupported("8 bits per sample"))
    }
  }
}
