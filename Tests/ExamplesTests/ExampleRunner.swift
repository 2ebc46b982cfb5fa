import ExampleSupport
import Foundation
import Synchronization
import XCTest

/// Runs a built example (from the same build directory as this test bundle) and collects its
/// output.
enum ExampleRunner {
  /// The build directory: where the xctest bundle lives (`.build/debug`), else the package's.
  static var buildDirectory: URL {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    if FileManager.default.isExecutableFile(atPath: bundle.appendingPathComponent("wcs-demo").path)
    {
      return bundle
    }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(".build/debug")
  }

  /// Output and exit status of one run.
  struct Result {
    var status: Int32
    var output: String
    var summary: [String: String]
  }

  /// A started example.
  final class Running: @unchecked Sendable {
    // @unchecked Sendable: `process` is only touched by the test thread; the output goes
    // through the mutex.
    let process: Process
    private let collected = Mutex(Data())
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `name`; `environment` adds to (or, with "" values, removes from) this process's;
    /// `input` is written to its standard input, which is then closed (else it reads
    /// /dev/null).
    init(
      _ name: String, _ arguments: [String], environment: [String: String] = [:],
      input: String? = nil
    ) throws {
      let url = ExampleRunner.buildDirectory.appendingPathComponent(name)
      guard FileManager.default.isExecutableFile(atPath: url.path) else {
        throw XCTSkip("\(url.path) is not built (run `swift build --build-tests`)")
      }
      process = Process()
      process.executableURL = url
      process.arguments = arguments
      if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
          .filter { !$0.value.isEmpty }
      }
      let inputPipe = input.map { _ in Pipe() }
      if let inputPipe {
        process.standardInput = inputPipe
      } else {
        process.standardInput = FileHandle.nullDevice
      }
      let pipe = Pipe()
      process.standardOutput = pipe
      process.standardError = pipe
      try process.run()
      if let inputPipe, let input {
        // Written whole before the example reads: `input` must fit the pipe's buffer (64 KiB).
        inputPipe.fileHandleForWriting.write(Data(input.utf8))
        try inputPipe.fileHandleForWriting.close()
      }
      let handle = pipe.fileHandleForReading
      Thread.detachNewThread { [self] in
        while true {
          let data = handle.availableData
          if data.isEmpty { break }
          self.collected.withLock { $0.append(data) }
        }
        self.finished.signal()
      }
    }

    /// Output so far.
    var output: String { collected.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Waits for the exit (killing the example after `timeout` seconds).
    func wait(timeout: Double) -> Result {
      if finished.wait(timeout: .now() + timeout) == .timedOut {
        process.terminate()
        _ = finished.wait(timeout: .now() + 5)
      }
      process.waitUntilExit()
      let text = output
      return Result(
        status: process.terminationStatus, output: text, summary: ExampleSummary.parse(text))
    }
  }

  /// Runs `name` with `arguments` to completion.
  static func run(
    _ name: String, _ arguments: [String], environment: [String: String] = [:],
    input: String? = nil, timeout: Double = 60
  ) throws -> Result {
    try Running(name, arguments, environment: environment, input: input).wait(timeout: timeout)
  }

  /// A fresh temporary directory for one test's files.
  static func temporaryDirectory(_ label: String) throws -> String {
    let path = NSTemporaryDirectory() + "examples-tests-\(label)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }
}
