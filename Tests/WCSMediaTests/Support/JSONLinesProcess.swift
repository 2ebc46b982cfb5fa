import Foundation

/// A child Python process spoken to in JSON lines over stdin/stdout; every read is bounded.
final class JSONLinesProcess {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private var buffer: [UInt8] = []

  init(script: String, arguments: [String] = []) throws {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script] + arguments
    process.standardInput = input
    process.standardOutput = output
    try process.run()
  }

  func writeLine(_ object: [String: Any]) throws {
    var data = try JSONSerialization.data(withJSONObject: object)
    data.append(0x0A)
    try input.fileHandleForWriting.write(contentsOf: data)
  }

  /// The next JSON line, or `nil` when none arrives within `timeout` seconds.
  func readLine(timeout: Double) throws -> [String: Any]? {
    let limit = Date().addingTimeInterval(timeout)
    let descriptor = output.fileHandleForReading.fileDescriptor
    while true {
      if let newline = buffer.firstIndex(of: 0x0A) {
        let line = Array(buffer[..<newline])
        buffer.removeSubrange(...newline)
        return try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
      }
      let remaining = limit.timeIntervalSinceNow
      var descriptorSet = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      // At the deadline a zero-timeout poll still picks up what is already in the pipe.
      guard poll(&descriptorSet, 1, Int32(max(0, remaining) * 1000)) > 0 else { return nil }
      var chunk = [UInt8](repeating: 0, count: 65536)
      let count = read(descriptor, &chunk, chunk.count)
      guard count > 0 else { return nil }
      buffer += chunk.prefix(count)
    }
  }

  /// The next line whose `event` is `event`, skipping others; `nil` after `timeout` seconds.
  func readLine(until event: String, timeout: Double) throws -> [String: Any]? {
    let limit = Date().addingTimeInterval(timeout)
    while let line = try readLine(timeout: max(0, limit.timeIntervalSinceNow)) {
      if line["event"] as? String == event { return line }
    }
    return nil
  }

  func stop() {
    try? input.fileHandleForWriting.close()
    if process.isRunning {
      let deadline = Date().addingTimeInterval(3)
      while process.isRunning && Date() < deadline { usleep(10_000) }
      if process.isRunning { process.terminate() }
    }
    process.waitUntilExit()
  }
}
