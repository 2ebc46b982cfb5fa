import Foundation
import XCTest

/// Chromium against `wcs-local-server` over the WCS protocol (wcs-protocol.md): the page plays
/// the Web SDK's part (connection → getUserData; publishStream with its offer → setRemoteSDP →
/// PUBLISHING; playStream → PLAYING; unPublishStream → UNPUBLISHED with recordName), publishes
/// the fake camera and microphone with `record: true`, and plays the stream back.
///
/// Debian's Chromium sends and receives H.264 (`RTCRtpSender.getCapabilities("video")` lists
/// H264 42001f, 42e01f and 4d001f in packetization modes 0 and 1), so the `wcs-h264` scenario
/// publishes H.264 only: relayed as H.264 and recorded to MP4.
final class ChromiumWCSServerTests: XCTestCase {
  func testChromiumPublishesPlaysAndRecordsThroughLocalServer() throws {
    try publishPlayAndRecord(scenario: "wcs", videoCodec: "VP8", container: "webm")
  }

  func testChromiumPublishesH264ThatPlaysBackAndRecordsToMP4() throws {
    try publishPlayAndRecord(scenario: "wcs-h264", videoCodec: "H264", container: "mp4")
  }

  func testChromiumPublishesH264ThatTheSwiftSDKPlays() throws {
    let run = try ChromiumInterop.run(scenario: "wcs-h264-sdk", timeout: 40)
    XCTAssertEqual(run.page["ok"] as? Bool, true, run.text)
    XCTAssertEqual(run.string("page", "publisher", "outbound", "video", "codec"), "video/H264")
    // The relay passes H.264 through (a player that cannot take it fails), so what the SDK
    // played and decoded is Chromium's H.264.
    let summary = try XCTUnwrap(
      (run.page["sdk"] as? [String: Any])?["summary"] as? [String: String], run.text)
    let decoded = summary["Frames received and decoded"].flatMap { Int($0) } ?? 0
    XCTAssertGreaterThanOrEqual(decoded, 30, run.text)
    XCTAssertNotNil(summary["Time to PLAYING"], run.text)
    print("Chromium wcs-h264-sdk: the SDK decoded \(decoded) H.264 frames in 4 s")
  }

  func testTheSwiftSDKPublishesH264ThatChromiumDecodes() throws {
    let run = try ChromiumInterop.run(scenario: "wcs-sdk-h264", timeout: 40)
    XCTAssertEqual(run.page["ok"] as? Bool, true, run.text)
    XCTAssertEqual(run.string("page", "player", "inbound", "video", "codec"), "video/H264")
    XCTAssertGreaterThanOrEqual(
      run.int("page", "player", "inbound", "video", "framesDecoded") ?? 0, 20, run.text)
    XCTAssertEqual(run.int("page", "player", "inbound", "video", "frameWidth"), 320)
    XCTAssertEqual(run.int("page", "player", "inbound", "video", "frameHeight"), 240)
    // The virtual camera's stamped frame numbers, read from the pictures Chromium decoded.
    let numbers = (run.page["frameNumbers"] as? [Any] ?? []).compactMap { $0 as? Int }
    XCTAssertGreaterThanOrEqual(numbers.count, 8, run.text)
    XCTAssertEqual(numbers, numbers.sorted(), run.text)
    print("Chromium wcs-sdk-h264: Chromium decoded the SDK's H.264, frame numbers \(numbers)")
  }

  /// Runs `scenario`; the played and published video is `videoCodec` (RTP name), the record
  /// a `container` file of that codec and Opus.
  private func publishPlayAndRecord(scenario: String, videoCodec: String, container: String)
    throws
  {
    let records = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-chromium-records-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: records) }
    let run = try ChromiumInterop.run(
      scenario: scenario, extraArguments: ["--records", records.path])
    if let error = run.summary["error"] as? String, error.contains("wcs-local-server not built") {
      throw XCTSkip("wcs-local-server is not part of this build yet: \(error)")
    }
    if let info = run.page["failedInfo"] as? String, info == "Media engine not available" {
      throw XCTSkip("wcs-local-server has no media engine yet (\(info))")
    }
    XCTAssertEqual(run.summary["outcome"] as? String, "result", run.text)
    XCTAssertEqual(run.page["ok"] as? Bool, true, run.text)
    XCTAssertEqual(run.page["sessionStatus"] as? String, "ESTABLISHED")

    let publishId = try XCTUnwrap(run.page["publishId"] as? String, run.text)
    let playId = try XCTUnwrap(run.page["playId"] as? String)
    let statuses = try XCTUnwrap(run.page["statuses"] as? [String: [String]], run.text)
    XCTAssertEqual(
      statuses[publishId]?.filter { $0 != "PENDING" }, ["PUBLISHING", "UNPUBLISHED"], run.text)
    XCTAssertEqual(statuses[playId]?.filter { $0 != "PENDING" }.first, "PLAYING", run.text)

    // The played stream is the published one, relayed: the codec at the camera's size, Opus.
    XCTAssertEqual(
      run.string("page", "player", "inbound", "video", "codec"), "video/\(videoCodec)")
    XCTAssertGreaterThanOrEqual(
      run.int("page", "player", "inbound", "video", "framesDecoded") ?? 0, 20, run.text)
    XCTAssertEqual(run.int("page", "player", "inbound", "video", "frameWidth"), 320)
    XCTAssertEqual(run.int("page", "player", "inbound", "video", "frameHeight"), 240)
    XCTAssertEqual(run.string("page", "player", "inbound", "audio", "codec"), "audio/opus")
    XCTAssertGreaterThanOrEqual(
      run.int("page", "player", "inbound", "audio", "packetsReceived") ?? 0, 25)
    XCTAssertEqual(
      run.string("page", "publisher", "outbound", "video", "codec"), "video/\(videoCodec)")

    // The recording: the container with the codec and Opus lasting about as long as the page
    // published.
    let recordName = try XCTUnwrap(run.page["recordName"] as? String, run.text)
    XCTAssertTrue(recordName.hasSuffix(".\(container)"), recordName)
    let file = records.appendingPathComponent(recordName).path
    XCTAssertTrue(FileManager.default.fileExists(atPath: file), run.text)
    let publishSeconds = try XCTUnwrap(run.page["publishSeconds"] as? Double)
    let probe = try FFprobe.probe(file)
    XCTAssertTrue(probe.formatName.contains(container), probe.formatName)
    XCTAssertEqual(probe.videoCodec, videoCodec.lowercased())
    XCTAssertEqual(probe.width, 320)
    XCTAssertEqual(probe.height, 240)
    XCTAssertEqual(probe.audioCodec, "opus")
    XCTAssertEqual(probe.duration, publishSeconds, accuracy: 1.5, run.text)
    // Whole media, not just headers: the fake camera gives 15-30 fps, Opus one packet per 20 ms;
    // a third of those rates still proves the relay kept recording all along.
    XCTAssertGreaterThanOrEqual(Double(probe.videoFrames), 5 * publishSeconds)
    XCTAssertGreaterThanOrEqual(Double(probe.audioFrames), 16 * publishSeconds)
    print(
      "Chromium \(scenario): \(run.wallSeconds) s wall, \(run.summary["runSeconds"] ?? "?") s page, "
        + "published \(publishSeconds) s, recorded \(probe.duration) s, "
        + "\(probe.videoFrames) video frames, \(probe.audioFrames) Opus packets")
  }
}

/// What `ffprobe` says about a media file.
struct FFprobe {
  var formatName = ""
  var duration = 0.0
  var videoCodec: String?
  var audioCodec: String?
  var width: Int?
  var height: Int?
  /// Frames (video) and packets (audio) ffprobe decoded (`-count_frames`).
  var videoFrames = 0
  var audioFrames = 0

  /// Runs `ffprobe -show_format -show_streams -of json`; skips when ffprobe is not installed.
  static func probe(_ path: String) throws -> FFprobe {
    let executable = "/usr/bin/ffprobe"
    guard FileManager.default.isExecutableFile(atPath: executable) else {
      throw XCTSkip("ffprobe is not installed (apt-get install ffmpeg)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = [
      "-v", "error", "-count_frames", "-show_format", "-show_streams", "-of", "json", path,
    ]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let json = try XCTUnwrap(
      try JSONSerialization.jsonObject(with: data) as? [String: Any], "ffprobe printed no JSON")
    var result = FFprobe()
    let format = json["format"] as? [String: Any] ?? [:]
    result.formatName = format["format_name"] as? String ?? ""
    result.duration = Double(format["duration"] as? String ?? "") ?? 0
    for stream in json["streams"] as? [[String: Any]] ?? [] {
      switch stream["codec_type"] as? String {
      case "video":
        result.videoCodec = stream["codec_name"] as? String
        result.width = stream["width"] as? Int
        result.height = stream["height"] as? Int
        result.videoFrames = Int(stream["nb_read_frames"] as? String ?? "") ?? 0
      case "audio":
        result.audioCodec = stream["codec_name"] as? String
        result.audioFrames = Int(stream["nb_read_frames"] as? String ?? "") ?? 0
      default: break
      }
    }
    return result
  }
}
