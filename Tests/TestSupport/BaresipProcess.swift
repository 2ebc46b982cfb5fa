import Foundation
import Synchronization

/// A Debian baresip on 127.0.0.1 with a config directory of its own: one account
/// `sip:<user>@127.0.0.1:<port>`, `ausine` at 880 Hz as its microphone, G.711 only, and its
/// `ctrl_tcp` command port. Shared by the SIP call tests and CallBench.
public final class BaresipProcess: Sendable {
  /// Why baresip could not be started.
  public struct StartFailure: Error, CustomStringConvertible {
    /// The reason and the end of baresip's output.
    public let description: String
  }

  /// The SIP port (UDP and TCP).
  public let port: Int
  /// The `ctrl_tcp` port (netstring-framed JSON commands).
  public let controlPort: Int
  /// baresip's config directory (removed by `stop()`).
  public let directory: URL
  private let process: CapturedProcess

  /// Whether `/usr/bin/baresip` exists (`scripts/install-deps.sh test` installs it).
  public static var isInstalled: Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/baresip")
  }

  /// A port free for TCP and UDP on 127.0.0.1 right now.
  public static func freePort() -> Int {
    while true {
      let port = boundPort(type: SOCK_STREAM, port: 0)
      if port > 0, boundPort(type: SOCK_DGRAM, port: port) == port { return port }
    }
  }

  /// Binds a socket of `type` to `port` (0 = any) and closes it: the port it got, or 0.
  static func boundPort(type: __socket_type, port: Int) -> Int {
    let fd = socket(AF_INET, Int32(type.rawValue), 0)
    defer { close(fd) }
    var sin = sockaddr_in()
    sin.sin_family = sa_family_t(AF_INET)
    sin.sin_port = UInt16(port).bigEndian
    sin.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &sin) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else { return 0 }
    _ = withUnsafeMutablePointer(to: &sin) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: sin.sin_port))
  }

  /// Starts baresip and waits (10 s at most) until it is ready.
  /// - Parameters:
  ///   - user: the account's user part.
  ///   - answer: auto-answer incoming calls (else they ring until `hangup`/`accept`).
  ///   - extraConfig: more config lines (modules and their settings).
  ///   - arguments: more command-line arguments (`-t`, `-e`).
  /// - Throws: `StartFailure` when it does not start.
  public init(user: String, answer: Bool, extraConfig: String = "", arguments: [String] = [])
    throws
  {
    port = Self.freePort()
    controlPort = Self.freePort()
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("baresip-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let rtpBase = 30000 + (port % 200) * 10
    let config = """
      poll_method epoll
      sip_listen 127.0.0.1:\(port)
      net_interface 127.0.0.1
      audio_player aufile,/dev/null
      audio_source ausine,880
      ausrc_srate 48000
      auplay_srate 48000
      ausrc_channels 2
      audio_alert aufile,/dev/null
      rtp_ports \(rtpBase)-\(rtpBase + 9)
      module_path /usr/lib/baresip/modules
      module g711.so
      module ausine.so
      module aufile.so
      module_app account.so
      module_app menu.so
      module_app ctrl_tcp.so
      ctrl_tcp_listen 127.0.0.1:\(controlPort)
      \(extraConfig)

      """
    try config.write(
      to: directory.appendingPathComponent("config"), atomically: true, encoding: .utf8)
    let mode = answer ? "auto" : "manual"
    try "<sip:\(user)@127.0.0.1:\(port)>;regint=0;answermode=\(mode)\n".write(
      to: directory.appendingPathComponent("accounts"), atomically: true, encoding: .utf8)
    try "".write(
      to: directory.appendingPathComponent("contacts"), atomically: true, encoding: .utf8)
    process = try CapturedProcess(
      executable: "/usr/bin/baresip", arguments: ["-f", directory.path] + arguments)
    guard process.waitForOutput("baresip is ready", seconds: 10) else {
      stop()
      throw StartFailure(description: "baresip did not start: \(output.suffix(400))")
    }
  }

  /// Everything baresip printed so far.
  public var output: String { process.output }

  /// Ends baresip (SIGTERM, then SIGKILL after 5 s) and removes its directory.
  public func stop() {
    process.stop()
    try? FileManager.default.removeItem(at: directory)
  }
}
