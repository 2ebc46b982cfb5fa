import Foundation
import Synchronization
import WCSTransport

/// The Swift side of the `wcs-h264-sdk` and `wcs-sdk-h264` scenarios: `wcs-local-server` as
/// in `wcs`, and the Swift SDK's examples (built next to this executable) when the page asks:
/// `{type: "sdk-play", name}` runs `Player` on that stream for 4 s and answers
/// `{type: "sdk-played", exitStatus, summary}` with the example's summary lines;
/// `{type: "sdk-publish", name}` runs `Streamer` publishing the virtual camera as H.264 at
/// 320x240 for 8 s, answers `{type: "sdk-publishing"}` at once, and the summary gets its end.
///
/// `@unchecked Sendable`: `prepare()` (which sets `wsURL`) and `finish()` run on the main
/// thread before and after the page's messages; each example runs on its own queue and
/// touches only `lastRun` (a Mutex).
final class SDKExampleScenario: InteropScenario, @unchecked Sendable {
  private let server: WCSServerScenario
  private let playerPath: String
  private var wsURL: String?
  private let lastRun = Mutex<JSONValue>(.null)

  init(recordsDirectory: String?) {
    server = WCSServerScenario(recordsDirectory: recordsDirectory)
    playerPath =
      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("Player").path
  }

  func prepare() throws -> [String: String] {
    guard FileManager.default.isExecutableFile(atPath: playerPath) else {
      throw WCSServerScenario.SetupError.serverNotBuilt(playerPath)
    }
    let parameters = try server.prepare()
    wsURL = parameters["wcs"]
    return parameters
  }

  func handle(_ message: JSONValue, reply: @escaping @Sendable (JSONValue) -> Void) {
    guard let type = message["type"]?.stringValue, let name = message["name"]?.stringValue,
      let wsURL
    else { return }
    let directory = URL(fileURLWithPath: playerPath).deletingLastPathComponent()
    let out = server.temporaryDirectory.appendingPathComponent("sdk").path
    switch type {
    case "sdk-play":
      run(
        directory.appendingPathComponent("Player").path,
        ["--url", wsURL, "--stream", name, "--duration", "4", "--out", out],
        replyType: "sdk-played", reply: reply)
    case "sdk-publish":
      run(
        directory.appendingPathComponent("Streamer").path,
        [
          "--url", wsURL, "--stream", name, "--codec", "h264", "--width", "320", "--height", "240",
          "--fps", "15", "--duration", "8", "--no-play",
        ], replyType: nil, reply: reply)
      reply(.object(["type": .string("sdk-publishing")]))
    default: break
    }
  }

  /// Runs an example on its own queue; its result goes into the summary and, with
  /// `replyType`, to the page.
  private func run(
    _ path: String, _ arguments: [String], replyType: String?,
    reply: @escaping @Sendable (JSONValue) -> Void
  ) {
    DispatchQueue.global().async { [self] in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: path)
      process.arguments = arguments
      let pipe = Pipe()
      process.standardOutput = pipe
      process.standardError = pipe
      process.standardInput = FileHandle.nullDevice
      var text = ""
      var status: JSONValue = .null
      do {
        try process.run()
        text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        status = .number(Double(process.terminationStatus))
      } catch {
        text = "\(path) did not start: \(error)"
      }
      let result = JSONValue.object([
        "type": .string(replyType ?? "sdk-ended"), "exitStatus": status,
        "summary": .object(ExampleSummary.parse(text)),
        "output": .array(text.split(separator: "\n").suffix(30).map { .string(String($0)) }),
      ])
      self.lastRun.withLock { $0 = result }
      if replyType != nil { reply(result) }
    }
  }

  func finish() -> JSONValue {
    // A publishing example ends on its own within its duration.
    let deadline = Date().addingTimeInterval(12)
    while lastRun.withLock({ $0 }) == .null && Date() < deadline { usleep(50_000) }
    return .object(["server": server.finish(), "sdk": lastRun.withLock { $0 }])
  }
}
