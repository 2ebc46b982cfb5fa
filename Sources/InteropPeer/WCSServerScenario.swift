import Foundation
import Synchronization
import WCSTransport

/// The Swift side of the `wcs` scenario: runs the `wcs-local-server` executable (built next to
/// this one) on free ports of 127.0.0.1, hands its WebSocket URL to the page, and at the end
/// stops it with SIGTERM (which finishes recordings) and lists the records directory.
///
/// `@unchecked Sendable`: `prepare()` and `finish()` run on the main thread, one after the
/// other; the page never reaches `handle`'s state (it talks to the WCS server directly).
final class WCSServerScenario: InteropScenario, @unchecked Sendable {
  enum SetupError: Error, CustomStringConvertible {
    case serverNotBuilt(String)
    case serverDidNotStart(String)

    var description: String {
      switch self {
      case .serverNotBuilt(let path): return "wcs-local-server not built (\(path))"
      case .serverDidNotStart(let output): return "wcs-local-server did not start: \(output)"
      }
    }
  }

  let serverPath: String
  let recordsDirectory: String
  let logPath: String
  /// Holds the server log (and the records when no directory was given); the PID is always 1
  /// inside the namespace, hence the UUID.
  let temporaryDirectory: URL
  private var process: Process?
  private var wsURL: String?
  private var recordsURL: String?
  private var exitStatus: Int32?
  private var errors: [String] = []

  init(recordsDirectory: String?) {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    serverPath = directory.appendingPathComponent("wcs-local-server").path
    let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
      "wcs-interop-\(UUID().uuidString)")
    temporaryDirectory = temporary
    self.recordsDirectory = recordsDirectory ?? temporary.appendingPathComponent("records").path
    logPath = temporary.appendingPathComponent("wcs-local-server.log").path
  }

  func prepare() throws -> [String: String] {
    guard FileManager.default.isExecutableFile(atPath: serverPath) else {
      throw SetupError.serverNotBuilt(serverPath)
    }
    try FileManager.default.createDirectory(
      atPath: recordsDirectory, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: (logPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: serverPath)
    process.arguments = [
      "--bind", "127.0.0.1", "--ws-port", "0", "--http-port", "0", "--records", recordsDirectory,
    ]
    let stdout = Pipe()
    process.standardOutput = stdout
    process.standardError = FileHandle(forWritingAtPath: logPath)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    self.process = process
    // The server prints `ws: URL` and `records: URL` lines once it listens.
    let output = Mutex("")
    let reader = stdout.fileHandleForReading
    DispatchQueue.global().async {
      while true {
        let data = reader.availableData
        if data.isEmpty { break }
        output.withLock { $0 += String(decoding: data, as: UTF8.self) }
      }
    }
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
      let lines = output.withLock { $0 }.split(separator: "\n").map(String.init)
      wsURL = lines.first { $0.hasPrefix("ws: ") }.map { String($0.dropFirst(4)) }
      recordsURL = lines.first { $0.hasPrefix("records: ") }.map { String($0.dropFirst(9)) }
      if wsURL != nil && recordsURL != nil { break }
      if !process.isRunning { break }
      usleep(20_000)
    }
    guard let wsURL else {
      throw SetupError.serverDidNotStart(
        output.withLock { $0 } + logTail(20).joined(separator: "\n"))
    }
    return ["wcs": wsURL]
  }

  func handle(_ message: JSONValue, reply: @escaping @Sendable (JSONValue) -> Void) {}

  func finish() -> JSONValue {
    if let process, process.isRunning {
      process.terminate()
      let deadline = Date().addingTimeInterval(10)
      while process.isRunning && Date() < deadline { usleep(20_000) }
      if process.isRunning {
        errors.append("wcs-local-server ignored SIGTERM for 10 s; killed")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
      }
    }
    if let process, !process.isRunning { exitStatus = process.terminationStatus }
    let names = (try? FileManager.default.contentsOfDirectory(atPath: recordsDirectory)) ?? []
    let records: [JSONValue] = names.sorted().map { name in
      let path = (recordsDirectory as NSString).appendingPathComponent(name)
      let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
      return .object(["name": .string(name), "size": .number(Double(size))])
    }
    let log = logTail(60)
    if !recordsDirectory.hasPrefix(temporaryDirectory.path) {
      try? FileManager.default.removeItem(at: temporaryDirectory)
    } else {
      try? FileManager.default.removeItem(atPath: logPath)
    }
    return .object([
      "wsURL": wsURL.map { .string($0) } ?? .null,
      "recordsURL": recordsURL.map { .string($0) } ?? .null,
      "recordsDirectory": .string(recordsDirectory),
      "records": .array(records),
      "serverExitStatus": exitStatus.map { .number(Double($0)) } ?? .null,
      "serverLog": .array(log.map { .string($0) }),
      "errors": .array(errors.map { .string($0) }),
    ])
  }

  private func logTail(_ count: Int) -> [String] {
    guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
    return Array(text.split(separator: "\n").suffix(count).map(String.init))
  }
}
