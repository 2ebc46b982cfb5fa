import Foundation
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// An H.264 stream published with `record = true` through the local server is recorded to MP4
/// (H.264 + Opus, no transcoding): ffprobe reads it, its duration is the published time, and
/// its pictures are the virtual camera's (frame numbers in order, PSNR against the source).
final class H264RecordingEndToEndTests: XCTestCase {
  static let width = 320
  static let height = 240

  func testH264PublishedWithRecordBecomesAnMP4OfTheCameraAndTheMicrophone() async throws {
    let records = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-h264rec-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: records) }
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory = records.path
    configuration.logSink = { _ in }
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    let sessionOptions = FPWCSApi2SessionOptions()
    sessionOptions.urlServer = server.wsURL
    sessionOptions.appKey = "defaultApp"
    let session = try FPWCSApi2.createSession(sessionOptions)
    try await session.connect()
    defer { session.disconnect() }

    let constraints = FPWCSApi2MediaConstraints.virtualDevices(
      width: Self.width, height: Self.height, frameRate: 15)
    let options = FPWCSApi2StreamOptions()
    options.name = "h264rec-\(UUID().uuidString.prefix(6).lowercased())"
    options.constraints = constraints
    options.record = true
    options.preferredVideoCodec = "H264"
    options.stripCodecs = ["VP8"]
    let publisher = try session.createStream(options)
    try await publisher.publish()
    let started = ContinuousClock.now
    try await Task.sleep(for: .seconds(3))
    try publisher.stop()
    let published = ContinuousClock.now - started
    try await waitFor("UNPUBLISHED with a record name") {
      publisher.getStatus() == .fpwcsStreamStatusUnpublished && publisher.getRecordName() != nil
    }
    let recordName = try XCTUnwrap(publisher.getRecordName())
    XCTAssertTrue(recordName.hasSuffix(".mp4"), recordName)
    let path = records.appendingPathComponent(recordName).path
    try await waitFor("the record file") { FileManager.default.fileExists(atPath: path) }

    let probe = try FFProbe.run(path)
    XCTAssertEqual(probe.codecs, ["h264", "opus"])
    let seconds =
      Double(published.components.seconds)
      + Double(published.components.attoseconds) / 1e18
    XCTAssertEqual(probe.duration, seconds, accuracy: 0.3, "published \(seconds) s")

    let reader = try MediaFileReader(path: path)
    var numbers: [UInt32] = []
    let camera = VirtualCamera(width: Self.width, height: Self.height)
    while let sample = try reader.nextSample() {
      guard case .video(let frame) = sample else { continue }
      let picture = try XCTUnwrap(
        I420Image(
          width: frame.width, height: frame.height, y: frame.y, strideY: frame.yStride,
          u: frame.u, strideU: frame.uStride, v: frame.v, strideV: frame.vStride))
      XCTAssertEqual([picture.width, picture.height], [Self.width, Self.height])
      let number = try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: picture))
      XCTAssertGreaterThan(
        try XCTUnwrap(picture.psnr(to: camera.frame(Int(number)))), 28, "frame \(number)")
      numbers.append(number)
    }
    // 3 s at 15 fps, all decodable and in camera order.
    XCTAssertGreaterThanOrEqual(numbers.count, 40)
    XCTAssertEqual(numbers, numbers.sorted())
    XCTAssertEqual(Set(numbers).count, numbers.count)
  }
}

/// `ffprobe` of a file: its streams' codecs and the container duration.
private enum FFProbe {
  struct Result {
    var codecs: [String]
    var duration: Double
  }

  static func run(_ path: String) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
    process.arguments = [
      "-v", "error", "-show_entries", "format=duration:stream=codec_name", "-of", "json", path,
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let streams = try XCTUnwrap(json["streams"] as? [[String: Any]])
    let format = try XCTUnwrap(json["format"] as? [String: Any])
    return Result(
      codecs: streams.compactMap { $0["codec_name"] as? String },
      duration: try XCTUnwrap(Double(try XCTUnwrap(format["duration"] as? String))))
  }
}
