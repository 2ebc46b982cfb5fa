import Foundation
import Synchronization

/// A child process whose standard output and error are collected, for the tests' external
/// peers (baresip, kamailio): started at once, stopped with SIGTERM and then SIGKILL.
public final class CapturedProcess: Sendable {
  private final class Output: Sendable {
    let text = Mutex("")
  }

  /// Characters of output kept (the newest).
  public static let outputLimit = 400_000

  private let process: Process
  private let buffer = Output()

  /// Starts `executable` with `arguments` (standard input: /dev/null).
  /// - Throws: what `Process.run()` throws when it cannot be started.
  public init(executable: String, arguments: [String]) throws {
    process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    let buffer = buffer
    pipe.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      guard !data.isEmpty else { return }
      let text = String(decoding: data, as: UTF8.self)
      buffer.text.withLock { $0 = String(($0 + text).suffix(Self.outputLimit)) }
    }
    try process.run()
  }

  /// Everything printed so far (the last `outputLimit` characters).
  public var output: String { buffer.text.withLock { $0 } }

  /// Whether the process still runs.
  public var isRunning: Bool { process.isRunning }

  /// Waits until `output` contains `text`, the process ends or `seconds` pass; whether it does.
  public func waitForOutput(_ text: String, seconds: Double) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !output.contains(text), process.isRunning, Date() < deadline { usleep(20_000) }
    return output.contains(text)
  }

  /// Ends the process (SIGTERM, then SIGKILL after 5 s) and whatever it forked: the child is
  /// the leader of its own process group (Foundation spawns it so), and a server such as
  /// kamailio leaves workers behind that ignore SIGTERM once their parent is gone, so the
  /// whole group gets SIGKILL at the end. Polled: `waitUntilExit` spins a run loop that can
  /// wait forever off the main thread.
  public func stop() {
    let group = process.processIdentifier
    guard group > 0 else { return }
    if process.isRunning {
      process.terminate()
      let deadline = Date().addingTimeInterval(5)
      while process.isRunning, Date() < deadline { usleep(20_000) }
    }
    kill(-group, SIGKILL)
  }
}
