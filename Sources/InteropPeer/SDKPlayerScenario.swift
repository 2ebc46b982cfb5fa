import Foundation
import Synchronization
import WCSTransport

/// The Swift side of the `wcs-h264-sdk` scenario: `wcs-local-server` as in `wcs`, and, when the
/// page asks (`{type: "sdk-play", name}` once it publishes), the `Player` example (the Swift
/// SDK, built next to this executable) plays that stream for a few seconds; the page gets
/// `{type: "sdk-played", exitStatus, summary}` with the example's summary lines.
///
/// `@unchecked Sendable`: `prepare()` and `finish()` run on the main thread; the one `handle`
/// call's work runs on its own queue and touches only `played` (a Mutex).
final class SDKPlayerScenario: InteropScenario, @unchecked Sendable {
  private let server: WCSServerScenario
  private let playerPath: String
  private var wsURL: String?
  private let played = Mutex<JSONValue>(.null)

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
    guard message["type"]?.stringValue == "sdk-play", let name = message["name"]?.stringValue,
      let wsURL
    else { return }
    let arguments = [
      "--url", wsURL, "--stream", name, "--duration", "4",
      "--out", server.temporaryDirectory.appendingPathComponent("player").path,
    ]
    let path = playerPath
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
        text = "Player did not start: \(error)"
      }
      let result = JSONValue.object([
        "type": .string("sdk-played"), "exitStatus": status,
        "summary": .object(ExampleSummary.parse(text)),
        "output": .array(text.split(separator: "\n").suffix(30).map { .string(String($0)) }),
      ])
      self.played.withLock { $0 = result }
      reply(result)
    }
  }

  func finish() -> JSONValue {
    .object(["server": server.finish(), "player": played.withLock { $0 }])
  }
}
