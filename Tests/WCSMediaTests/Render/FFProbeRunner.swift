import Foundation

/// Runs `ffprobe` (when installed) to check that files we write are readable by another tool.
enum FFProbeRunner {
  static var path: String? {
    ["/usr/bin/ffprobe", "/usr/local/bin/ffprobe"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
  }

  /// `ffprobe -v error -count_frames -show_entries stream=... -of default=nw=1` as key=value pairs.
  static func stream(of url: URL) throws -> [String: String]? {
    guard let path else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = [
      "-v", "error", "-count_frames", "-select_streams", "0", "-show_entries",
      "stream=codec_name,width,height,nb_read_frames,sample_rate,channels,duration_ts,duration",
      "-of", "default=nw=1", url.path,
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    var result: [String: String] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let parts = line.split(separator: "=", maxSplits: 1)
      if parts.count == 2 { result[String(parts[0])] = String(parts[1]) }
    }
    return result
  }
}
