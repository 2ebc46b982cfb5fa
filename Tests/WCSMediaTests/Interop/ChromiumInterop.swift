import Foundation
import Synchronization
import XCTest

/// Runs one Chromium interop scenario: starts the `InteropPeer` executable inside a fresh
/// network and PID namespace (only `lo` up; when the peer exits, the kernel kills every Chromium
/// process left in the namespace), and returns the JSON summary the peer prints.
///
/// Skips (XCTSkip) when Chromium is not installed, when `unshare -n -p` is not permitted (not
/// root, or a container without the capability), or when the peer was not built.
enum ChromiumInterop {
  static let chromiumPath = "/usr/bin/chromium"

  /// `Tests/Interop/chromium`: the pages the peer serves.
  static let pagesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Interop/chromium").path

  /// One finished run: the peer's summary and how long the whole namespace run took.
  struct Run {
    let summary: [String: Any]
    let wallSeconds: Double

    /// The page's result object (`page` in the summary).
    var page: [String: Any] { summary["page"] as? [String: Any] ?? [:] }
    /// Swift-side figures (`peer` in the summary).
    var peer: [String: Any] { summary["peer"] as? [String: Any] ?? [:] }
    /// An integer anywhere in the summary, by key path (`["page", "peer", "sent", "audioSSRC"]`).
    func int(_ path: String...) -> Int? {
      var value: Any? = summary
      for key in path { value = (value as? [String: Any])?[key] }
      if let number = value as? Int { return number }
      if let number = value as? Double, number == number.rounded() { return Int(number) }
      return nil
    }

    /// A string anywhere in the summary, by key path.
    func string(_ path: String...) -> String? {
      var value: Any? = summary
      for key in path { value = (value as? [String: Any])?[key] }
      return value as? String
    }

    /// Everything, for failure messages.
    var text: String {
      guard let data = try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])
      else { return "\(summary)" }
      return String(decoding: data, as: UTF8.self)
    }
  }

  /// Runs `scenario` with Chromium bounded by `timeout` seconds (the peer's own bound; the whole
  /// process gets 20 s more before it is killed). `setup` runs in the namespace first (after
  /// `lo` is up), e.g. nftables rules that drop datagrams.
  static func run(
    scenario: String, timeout: Double = 30, extraArguments: [String] = [], setup: String? = nil
  ) throws -> Run {
    try skipUnlessAvailable()
    let peer = try XCTUnwrap(peerExecutable(), "InteropPeer not built")
    let started = Date()
    let output = try NamespaceProcess.run(
      arguments: [
        peer, "--pages", pagesDirectory, "--scenario", scenario, "--timeout", "\(timeout)",
        "--chromium", chromiumPath,
      ] + extraArguments,
      timeout: timeout + 20, setup: setup)
    let wallSeconds = Date().timeIntervalSince(started)
    let line = output.stdout.split(separator: "\n").last.map(String.init) ?? ""
    guard
      let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)),
      let summary = object as? [String: Any]
    else {
      throw NoSummary(
        description: "InteropPeer printed no JSON summary (exit \(output.status), timed out: "
          + "\(output.timedOut)); stderr: \(output.stderr.suffix(2000))")
    }
    return Run(summary: summary, wallSeconds: wallSeconds)
  }

  static func skipUnlessAvailable() throws {
    guard FileManager.default.isExecutableFile(atPath: chromiumPath) else {
      throw XCTSkip("Chromium is not installed (apt-get install chromium)")
    }
    let probe = try NamespaceProcess.run(arguments: ["/bin/true"], timeout: 10)
    guard probe.status == 0 else {
      throw XCTSkip(
        "cannot create a network namespace (unshare -n -p needs root or CAP_SYS_ADMIN): "
          + probe.stderr)
    }
    guard peerExecutable() != nil else {
      throw XCTSkip("InteropPeer executable not found next to the test bundle; swift build first")
    }
  }

  /// The peer sits next to the test bundle in the build directory.
  static func peerExecutable() -> String? {
    var directories: [URL] = []
    if let executable = Bundle.main.executableURL {
      directories.append(executable.deletingLastPathComponent())
    }
    directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
    directories.append(Bundle.main.bundleURL)
    for directory in directories {
      let path = directory.appendingPathComponent("InteropPeer").path
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
  }
}

/// The peer ended without printing its summary (crashed, or killed at the outer timeout).
struct NoSummary: Error, CustomStringConvertible {
  let description: String
}

/// A command run with `unshare -n -p -f --kill-child`: a new network namespace in which only
/// `lo` is brought up, and a new PID namespace so that nothing started inside outlives it.
enum NamespaceProcess {
  struct Output {
    let status: Int32
    let stdout: String
    let stderr: String
    let timedOut: Bool
  }

  /// Runs `arguments` (absolute executable path first) in the namespace, after the shell
  /// commands `setup` if given; kills it after `timeout` seconds.
  static func run(arguments: [String], timeout: Double, setup: String? = nil) throws -> Output {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    process.arguments =
      [
        "-n", "-p", "-f", "--kill-child", "/bin/bash", "-c",
        "ip link set lo up" + (setup.map { " && " + $0 } ?? "") + " && exec \"$0\" \"$@\"",
      ]
      + arguments
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = FileHandle.nullDevice
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    let collected = Mutex<(out: Data, err: Data)>((Data(), Data()))
    let readers = DispatchGroup()
    DispatchQueue.global().async(group: readers) {
      let data = stdout.fileHandleForReading.readDataToEndOfFile()
      collected.withLock { $0.out = data }
    }
    DispatchQueue.global().async(group: readers) {
      let data = stderr.fileHandleForReading.readDataToEndOfFile()
      collected.withLock { $0.err = data }
    }
    try process.run()
    var timedOut = false
    if exited.wait(timeout: .now() + timeout) == .timedOut {
      timedOut = true
      // unshare dies, --kill-child SIGKILLs the namespace's init, the kernel kills the rest.
      kill(process.processIdentifier, SIGKILL)
      _ = exited.wait(timeout: .now() + 10)
    }
    _ = readers.wait(timeout: .now() + 10)
    let data = collected.withLock { $0 }
    return Output(
      status: process.isRunning ? -1 : process.terminationStatus,
      stdout: String(decoding: data.out, as: UTF8.self),
      stderr: String(decoding: data.err, as: UTF8.self), timedOut: timedOut)
  }
}
