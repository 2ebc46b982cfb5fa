import Foundation

/// An H.264 MP4 made by the ffmpeg CLI (libx264, no B-frames) from numbered pictures, for
/// tests and benchmarks of file sources.
public enum NumberedH264File {
  /// Why the file could not be made.
  public struct Failure: Error, CustomStringConvertible {
    /// ffmpeg's exit status and the end of its error output.
    public var description: String
  }

  /// Writes `frames` pictures at `frameRate` to an MP4 at `url`.
  /// - Parameters:
  ///   - profile: libx264's `-profile:v` (`baseline` gives constrained baseline, `42c0xx`).
  ///   - keyFrameInterval: pictures from one IDR to the next (`-g`, scene cuts off).
  ///   - quantizer: libx264's constant `-qp` (lower is closer to the pictures).
  ///   - codecArguments: other encoder arguments in place of libx264's (another codec, for a
  ///     file that is not H.264).
  ///   - picture: picture `n` as packed I420 bytes (`width × height` luma, then the two
  ///     chroma planes of half the size each way).
  /// - Throws: `Failure` when ffmpeg is missing or fails.
  public static func make(
    at url: URL, width: Int, height: Int, frameRate: Int, frames: Int,
    profile: String = "baseline", keyFrameInterval: Int, quantizer: Int = 16,
    codecArguments: [String]? = nil, picture: (Int) -> [UInt8]
  ) throws {
    let raw = url.deletingPathExtension().appendingPathExtension("yuv")
    var bytes: [UInt8] = []
    for index in 0..<frames { bytes += picture(index) }
    try Data(bytes).write(to: raw)
    defer { try? FileManager.default.removeItem(at: raw) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    let x264 = [
      "-c:v", "libx264", "-profile:v", profile, "-preset", "veryfast", "-bf", "0", "-g",
      "\(keyFrameInterval)", "-keyint_min", "\(keyFrameInterval)", "-sc_threshold", "0", "-qp",
      "\(quantizer)",
    ]
    process.arguments =
      [
        "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s",
        "\(width)x\(height)", "-r", "\(frameRate)", "-i", raw.path,
      ] + (codecArguments ?? x264) + ["-pix_fmt", "yuv420p", url.path]
    let errors = Pipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errors
    do {
      try process.run()
    } catch {
      throw Failure(description: "ffmpeg: \(error)")
    }
    let output = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw Failure(
        description: "ffmpeg exited \(process.terminationStatus): "
          + String(decoding: output.suffix(400), as: UTF8.self))
    }
  }
}
