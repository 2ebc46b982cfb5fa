import Foundation

/// A child program started with posix_spawn and reaped with waitpid, so every wait is bounded and
/// does not depend on Foundation's `Process` termination monitoring (which was seen to miss
/// children that exit within milliseconds, leaving them zombies). Used to run `pactl`; the device
/// tests use it for pulseaudio, Xvfb and xsetroot.
package final class ChildProcess {
  /// Process id of the child.
  package let pid: pid_t
  private var status: Int32?

  /// Starts `executable` with `arguments`; the environment is this process's plus `environment`.
  /// - Parameter outputPath: file that receives stdout (created or truncated); nil for /dev/null.
  /// - Throws: `POSIXError` with posix_spawn's error code.
  package init(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:],
    outputPath: String? = nil
  ) throws {
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { _, new in new }
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(
      &actions, 1, outputPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var child: pid_t = 0
    let result = posix_spawn(&child, executable, &actions, nil, argv, envp)
    guard result == 0 else {
      throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL)
    }
    pid = child
  }

  deinit { terminate() }

  /// The first existing executable called `name` in the usual bin folders, or nil.
  package static func find(_ name: String) -> String? {
    ["/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin", "/sbin"].map { "\($0)/\(name)" }.first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
  }

  /// Whether the child has not exited yet.
  package var isRunning: Bool { reap() == nil }

  /// Waits up to `timeout` seconds (polling every 5 ms) for the child to exit.
  /// - Returns: its exit status (128 + signal number if killed), or nil if still running.
  package func waitForExit(timeout: Double) -> Int32? {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeout) * 1e9)
    while true {
      if let status = reap() { return status }
      if DispatchTime.now().uptimeNanoseconds >= deadline { return nil }
      usleep(5_000)
    }
  }

  /// SIGTERM, up to `grace` seconds, then SIGKILL and up to 2 s more.
  package func terminate(grace: Double = 3) {
    guard reap() == nil else { return }
    kill(pid, SIGTERM)
    if waitForExit(timeout: grace) == nil {
      kill(pid, SIGKILL)
      _ = waitForExit(timeout: 2)
    }
  }

  private func reap() -> Int32? {
    if let status { return status }
    var raw: Int32 = 0
    let result = waitpid(pid, &raw, WNOHANG)
    if result == pid {
      // WIFEXITED / WEXITSTATUS / WTERMSIG are macros; decode the wait status by hand.
      let signal = raw & 0x7F
      status = signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
      return status
    }
    if result < 0 && errno == ECHILD {
      status = -1
      return status
    }
    return nil
  }
}
