import Foundation
import WCSMedia
import XCTest

/// A PulseAudio server of the test's own, in a fresh directory, with one null sink `test`
/// (48 kHz; being the only sink it is the default, and `test.monitor` records what it plays).
/// `PULSE_SERVER` points the process at it until `stop()`. Tests run one at a time, so the
/// process-wide variable is safe.
final class PrivatePulseAudio {
  private var server: ChildProcess?
  private let directory: URL

  /// Starts the server and waits up to 5 s for its socket.
  /// - Throws: `XCTSkip` when `pulseaudio` is not installed; the launch error otherwise.
  init() throws {
    guard let pulseaudio = ChildProcess.find("pulseaudio") else {
      throw XCTSkip("pulseaudio is not installed (apt-get install pulseaudio pulseaudio-utils)")
    }
    directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "wcs-pulse-\(UUID().uuidString.prefix(8))")
    let runtime = directory.appendingPathComponent("runtime")
    try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
    let socket = directory.appendingPathComponent("native").path
    // -n: no default.pa; as root pulseaudio warns but runs in per-user mode with this HOME.
    server = try ChildProcess(
      pulseaudio,
      [
        "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no", "-n",
        "--log-target=stderr",
        "--load=module-null-sink sink_name=test rate=48000",
        "--load=module-native-protocol-unix socket=\(socket) auth-anonymous=1",
      ],
      environment: [
        "HOME": directory.path, "PULSE_RUNTIME_PATH": runtime.path,
        "XDG_RUNTIME_DIR": runtime.path,
      ])
    setenv("PULSE_SERVER", "unix:\(socket)", 1)
    XCTAssertTrue(
      waitUntil(timeout: 5) { FileManager.default.fileExists(atPath: socket) },
      "pulseaudio created its socket within 5 s")
  }

  /// Kills the server but leaves `PULSE_SERVER` pointing at its dead socket (a sound server
  /// that went away).
  func terminateServer() {
    server?.terminate()
    server = nil
  }

  /// Stops the server, forgets `PULSE_SERVER` and removes the directory; safe to call twice.
  func stop() {
    unsetenv("PULSE_SERVER")
    server?.terminate()
    server = nil
    try? FileManager.default.removeItem(at: directory)
  }

  deinit { stop() }
}
