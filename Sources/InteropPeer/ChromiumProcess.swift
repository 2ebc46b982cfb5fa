import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Headless Chromium started in its own process group, so that ending the group also ends its
/// zygote, renderer, GPU and network-service processes. Output goes to a log file; the page
/// reports over the WebSocket, never through Chromium's stdout.
final class ChromiumProcess {
  enum LaunchError: Error, CustomStringConvertible {
    case spawnFailed(path: String, errno: Int32)

    var description: String {
      switch self {
      case .spawnFailed(let path, let code):
        return "cannot start \(path): \(String(cString: strerror(code)))"
      }
    }
  }

  let pid: pid_t
  let logPath: String
  private var exitStatus: Int32?

  /// Flags every run needs: headless without sandbox (we run as root inside a namespace), fake
  /// camera and microphone granted without a prompt, loopback ICE candidates (the namespace has
  /// only `lo`), and real addresses instead of mDNS names in candidates.
  static func arguments(url: String, userDataDirectory: String) -> [String] {
    [
      "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
      "--no-default-browser-check", "--disable-background-networking",
      "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
      "--allow-loopback-in-peer-connection",
      "--disable-features=WebRtcHideLocalIpsWithMdns",
      "--autoplay-policy=no-user-gesture-required",
      "--user-data-dir=\(userDataDirectory)", url,
    ]
  }

  init(executable: String, arguments: [String], logPath: String) throws {
    self.logPath = logPath
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
    posix_spawnattr_setpgroup(&attributes, 0)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var child: pid_t = 0
    let result = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
    guard result == 0 else { throw LaunchError.spawnFailed(path: executable, errno: result) }
    pid = child
  }

  /// Whether the main Chromium process has exited (reaps it when it has).
  var hasExited: Bool {
    if exitStatus != nil { return true }
    var status: Int32 = 0
    if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status }
    return exitStatus != nil
  }

  /// Asks the whole process group to quit, waits up to `grace`, then kills what is left.
  func terminate(grace: Double = 3) {
    kill(-pid, SIGTERM)
    let deadline = Date().addingTimeInterval(grace)
    while !hasExited && Date() < deadline { usleep(50_000) }
    kill(-pid, SIGKILL)
    if exitStatus == nil {
      var status: Int32 = 0
      if waitpid(pid, &status, 0) == pid { exitStatus = status }
    }
  }

  /// The last `count` lines of Chromium's output, for reports when a run fails.
  func logTail(_ count: Int) -> [String] {
    guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
    return Array(text.split(separator: "\n").suffix(count).map(String.init))
  }
}
