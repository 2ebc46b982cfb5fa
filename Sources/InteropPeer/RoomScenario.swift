import Foundation
import Synchronization
import WCSTransport

/// The Swift side of the `room` scenario (wcs-rooms-and-calls.md §A): `wcs-local-server` as in
/// `wcs`, and a Swift room participant in it, the `Conference` example (built next to this
/// executable) joining room `chromium-room` as `swift` with no bots. The page joins the same
/// room as `browser` over the room protocol; each side plays the other's video and greets it.
/// The summary (under `peer`) holds the server's part and the example's exit status and
/// summary lines.
///
/// `@unchecked Sendable`: `prepare()` and `finish()` run on the main thread, one after the
/// other; `handle` is unused (the page talks to the WCS server directly).
final class RoomScenario: InteropScenario, @unchecked Sendable {
  static let room = "chromium-room"
  static let login = "swift"

  private let server: WCSServerScenario
  private let conferencePath: String
  private let duration: Double
  private var conference: Process?
  private let output = Mutex("")

  init(recordsDirectory: String?, duration: Double) {
    server = WCSServerScenario(recordsDirectory: recordsDirectory)
    conferencePath =
      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("Conference").path
    self.duration = duration
  }

  func prepare() throws -> [String: String] {
    guard FileManager.default.isExecutableFile(atPath: conferencePath) else {
      throw WCSServerScenario.SetupError.serverNotBuilt(conferencePath)
    }
    var parameters = try server.prepare()
    guard let url = parameters["wcs"] else { return parameters }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: conferencePath)
    process.arguments = [
      "--url", url, "--room", Self.room, "--login", Self.login, "--bots", "0",
      "--duration", "\(duration)", "--message", "hello browser from swift",
      "--out", server.temporaryDirectory.appendingPathComponent("conference").path,
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    conference = process
    let reader = pipe.fileHandleForReading
    DispatchQueue.global().async { [self] in
      while true {
        let data = reader.availableData
        if data.isEmpty { break }
        self.output.withLock { $0 += String(decoding: data, as: UTF8.self) }
      }
    }
    parameters["room"] = Self.room
    parameters["swift"] = Self.login
    return parameters
  }

  func handle(_ message: JSONValue, reply: @escaping @Sendable (JSONValue) -> Void) {}

  func finish() -> JSONValue {
    var status: Int32?
    if let conference {
      let deadline = Date().addingTimeInterval(duration + 20)
      while conference.isRunning && Date() < deadline { usleep(20_000) }
      if conference.isRunning { conference.terminate() }
      conference.waitUntilExit()
      status = conference.terminationStatus
    }
    let text = output.withLock { $0 }
    let summary = ExampleSummary.parse(text)
    return .object([
      "server": server.finish(),
      "conferenceExitStatus": status.map { .number(Double($0)) } ?? .null,
      "conference": .object(summary),
      "conferenceOutput": .array(
        text.split(separator: "\n").suffix(60).map { .string(String($0)) }),
    ])
  }
}
