import Foundation
import XCTest

/// Runs the ffmpeg/ffprobe command-line tools that check what the recorder wrote (or make test
/// media for the file reader). Tests skip when the tool is not installed.
enum ExternalTool {
  /// The tool's path on `PATH`, or throws `XCTSkip`.
  static func require(_ name: String) throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
      let candidate = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw XCTSkip("\(name) is not installed (Debian package ffmpeg; scripts/install-deps.sh test)")
  }

  /// Runs `executable` with `arguments`; returns its exit status and standard output.
  static func run(_ executable: String, _ arguments: [String]) throws -> (
    status: Int32, output: Data
  ) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, data)
  }

  /// A fresh temporary directory, removed when the test case ends.
  static func temporaryDirectory(for testCase: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-media-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    testCase.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
  }
}

/// What `ffprobe -show_entries format=duration:stream=...` says about a file.
struct ProbeResult {
  struct Stream {
    var codecName: String
    var width: Int?
    var height: Int?
    var packets: Int?
  }
  var streams: [Stream]
  var duration: Double

  /// Probes `path`, counting packets per stream.
  static func probe(_ path: String) throws -> ProbeResult {
    let ffprobe = try ExternalTool.require("ffprobe")
    let result = try ExternalTool.run(
      ffprobe,
      [
        "-v", "error", "-count_packets", "-show_entries",
        "format=duration:stream=codec_name,width,height,nb_read_packets", "-of", "json", path,
      ])
    XCTAssertEqual(result.status, 0, "ffprobe failed on \(path)")
    let json = try XCTUnwrap(
      try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
    let format = try XCTUnwrap(json["format"] as? [String: Any])
    let duration = try XCTUnwrap(Double(try XCTUnwrap(format["duration"] as? String)))
    let streams = try XCTUnwrap(json["streams"] as? [[String: Any]]).map { stream in
      Stream(
        codecName: stream["codec_name"] as? String ?? "",
        width: stream["width"] as? Int, height: stream["height"] as? Int,
        packets: (stream["nb_read_packets"] as? String).flatMap { Int($0) })
    }
    return ProbeResult(streams: streams, duration: duration)
  }
}
