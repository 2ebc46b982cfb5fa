import Foundation
import Synchronization

/// A Debian kamailio on 127.0.0.1 (UDP only) as a minimal registrar and proxy: REGISTER needs
/// digest auth (RFC 3261 §22, realm = the From domain) with a static password per user, the
/// contacts live in memory (`usrloc`, no database), and every other out-of-dialog request is
/// routed to the registered contact of its Request-URI's user (404 for an unknown one).
/// In-dialog requests go straight between the user agents (no Record-Route).
public final class KamailioProcess: Sendable {
  /// Why kamailio could not be started.
  public struct StartFailure: Error, CustomStringConvertible {
    /// The reason and the end of kamailio's output.
    public let description: String
  }

  /// The SIP port (UDP).
  public let port: Int
  /// The config directory (removed by `stop()`).
  public let directory: URL
  private let process: CapturedProcess

  /// Whether `/usr/sbin/kamailio` exists (`scripts/install-deps.sh test` installs it).
  public static var isInstalled: Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/sbin/kamailio")
  }

  /// Starts kamailio and waits (10 s at most) until it listens.
  /// - Parameter users: user name → password of the accounts that may register.
  /// - Throws: `StartFailure` when it does not start.
  public init(users: [String: String]) throws {
    port = BaresipProcess.freePort()
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("kamailio-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let passwords = users.keys.sorted().map { user in
      "  if ($fU == \"\(user)\") { $var(pw) = \"\(users[user] ?? "")\"; }"
    }.joined(separator: "\n")
    let config = """
      #!KAMAILIO
      debug=2
      log_stderror=yes
      children=1
      disable_tcp=yes
      disable_sctp=yes
      auto_aliases=no
      listen=udp:127.0.0.1:\(port)
      alias=127.0.0.1:\(port)
      mpath="/usr/lib/x86_64-linux-gnu/kamailio/modules/"
      loadmodule "tm.so"
      loadmodule "sl.so"
      loadmodule "pv.so"
      loadmodule "maxfwd.so"
      loadmodule "siputils.so"
      loadmodule "usrloc.so"
      loadmodule "registrar.so"
      loadmodule "auth.so"
      loadmodule "xlog.so"
      loadmodule "textops.so"
      modparam("usrloc", "db_mode", 0)

      request_route {
        if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
        if (is_method("REGISTER")) {
          xlog("L_INFO", "REGISTER $fu auth=$au\\n");
          $var(pw) = "";
      \(passwords)
          if ($var(pw) == "" || !pv_auth_check("$fd", "$var(pw)", "0", "1")) {
            auth_challenge("$fd", "0");
            exit;
          }
          consume_credentials();
          if (!save("location")) { sl_reply_error(); }
          xlog("L_INFO", "registered $tu\\n");
          exit;
        }
        if (has_totag()) {
          if (is_method("ACK") && !t_check_trans()) { exit; }
          t_relay();
          exit;
        }
        if (is_method("CANCEL")) {
          if (t_check_trans()) { t_relay(); }
          exit;
        }
        if (!lookup("location")) { sl_send_reply("404", "Not Found"); exit; }
        xlog("L_INFO", "routing $rm for $tu to $ru\\n");
        t_relay();
      }

      """
    let configFile = directory.appendingPathComponent("kamailio.cfg")
    try config.write(to: configFile, atomically: true, encoding: .utf8)
    // -DD: stay in the foreground; -E: log to stderr; small memory pools; a runtime dir of
    // its own so that nothing touches /run/kamailio.
    process = try CapturedProcess(
      executable: "/usr/sbin/kamailio",
      arguments: [
        "-f", configFile.path, "-DD", "-E", "-m", "32", "-M", "8", "-Y", directory.path, "-w",
        directory.path,
      ])
    let deadline = Date().addingTimeInterval(10)
    while process.isRunning, !listening, Date() < deadline { usleep(50_000) }
    guard process.isRunning, listening else {
      stop()
      throw StartFailure(description: "kamailio did not start: \(output.suffix(600))")
    }
  }

  /// Whether something is bound to the SIP port (kamailio, once its listener is up).
  private var listening: Bool { BaresipProcess.boundPort(type: SOCK_DGRAM, port: port) != port }

  /// Everything kamailio printed so far.
  public var output: String { process.output }

  /// Ends kamailio (SIGTERM, then SIGKILL after 5 s) and removes its directory.
  public func stop() {
    process.stop()
    try? FileManager.default.removeItem(at: directory)
  }
}
