import WCSEventLoop

/// The `wcs-local-server` command line, parsed into a `WCSLocalServer.Configuration`.
public enum LocalServerCommandLine {
  /// What the arguments ask for.
  public enum Parsed {
    /// Run a server with this configuration.
    case run(WCSLocalServer.Configuration)
    /// Print `usage` and exit successfully.
    case help
  }

  /// Why the arguments were refused; `description` is the message for standard error.
  public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `--ws-port needs a port number 0...65535`.
    public var description: String
  }

  /// The `--help` text.
  public static let usage = """
    usage: wcs-local-server [--bind 127.0.0.1] [--ws-port 8080]
                            [--wss-port 8443 --cert CERT.pem --key KEY.pem]
                            [--http-port 8081] [--legacy-http-port 9091] [--records DIR]
                            [--stats SECONDS] [--network SPEC] [--token-file PATH]
                            [--ice-tcp] [--pull-hosts any|HOST,...] [--no-snapshots]

    A WCS-compatible signalling and media server for examples and tests.
      --bind ADDRESS          address every port listens on (default 127.0.0.1)
      --ws-port PORT          WebSocket signalling port (default 8080, 0 = any free port)
      --wss-port PORT         secure WebSocket port; needs --cert and --key
      --cert FILE, --key FILE PEM certificate and private key for --wss-port
      --http-port PORT        HTTP port serving recordings at /client/records/ (default 8081;
                              older WCS builds used 9091: pass --http-port 9091 to mimic them)
      --legacy-http-port PORT also serve recordings on this port (e.g. 9091, next to 8081)
      --records DIR           where recordings are written and served from (default ./records)
      --stats SECONDS         log each publisher's and player's packets, losses, NACKs,
                              retransmissions, PLIs and key frames every SECONDS (they are
                              always logged when a stream ends)
      --network SPEC          emulate a bad network on every media connection of the relay
                              (publishers and players, both directions; send: is what the
                              server sends), e.g. "loss=5%,delay=40ms,jitter=15ms,rate=1.5mbit"
      --token-file PATH       shared-secret mode: clients must send the file's text as
                              custom.token of their connection, record downloads as
                              ?token=... (without it, anyone who can reach the ports may
                              publish, play and download every record)
      --ice-tcp               media over TCP only (a WCS with ice_tcp_transport): answer
                              with passive ICE-TCP candidates (RFC 6544), no UDP; clients
                              must publish and play with transport TCP
      --pull-hosts LIST       hosts whose rtsp:// and rtmp:// URLs players may make the
                              server pull, and publishers' rtmpUrl push to
                              (default 127.0.0.1,localhost,::1; any = all)
      --no-snapshots          answer every snapshot request snapshotFailed and keep no video
                              for snapshots on the relay
      --help                  this text

    \(NetworkEmulation.specSyntax)

    Stops cleanly (sessions closed, recordings finished) on SIGINT or SIGTERM.
    """

  /// Parses `arguments` (without the program name) on top of `base`.
  /// - Throws: `UsageError` for an unknown flag, a missing value, a port outside 0...65535, a
  ///   bad `--network` spec (with its offending token), or `--wss-port` without both `--cert`
  ///   and `--key`.
  public static func parse(
    _ arguments: [String], base: WCSLocalServer.Configuration = WCSLocalServer.Configuration()
  ) throws(UsageError) -> Parsed {
    var configuration = base
    var index = 0
    func value(_ flag: String) throws(UsageError) -> String {
      guard index + 1 < arguments.count else {
        throw UsageError(description: "\(flag) needs a value")
      }
      index += 1
      return arguments[index]
    }
    func port(_ flag: String) throws(UsageError) -> Int {
      let text = try value(flag)
      guard let number = Int(text), (0...65535).contains(number) else {
        throw UsageError(description: "\(flag) needs a port number 0...65535, got '\(text)'")
      }
      return number
    }
    while index < arguments.count {
      let flag = arguments[index]
      switch flag {
      case "--help", "-h": return .help
      case "--bind": configuration.bindAddress = try value(flag)
      case "--ws-port": configuration.wsPort = try port(flag)
      case "--wss-port": configuration.wssPort = try port(flag)
      case "--cert": configuration.certificatePath = try value(flag)
      case "--key": configuration.privateKeyPath = try value(flag)
      case "--http-port": configuration.httpPort = try port(flag)
      case "--legacy-http-port": configuration.legacyHTTPPort = try port(flag)
      case "--records": configuration.recordsDirectory = try value(flag)
      case "--stats":
        let text = try value(flag)
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0.1, seconds <= 86_400
        else {
          throw UsageError(description: "--stats needs seconds 0.1...86400, got '\(text)'")
        }
        configuration.statisticsInterval = .milliseconds(Int64((seconds * 1000).rounded()))
      case "--network":
        let spec = try value(flag)
        do throws(NetworkEmulationSpecError) {
          let emulation = try NetworkEmulation(spec: spec)
          configuration.networkEmulation = emulation.isIdeal ? nil : emulation
        } catch {
          throw UsageError(description: "--network \(error)")
        }
      case "--ice-tcp": configuration.signaling.iceTCPTransport = true
      case "--no-snapshots": configuration.snapshots = false
      case "--pull-hosts":
        let list = try value(flag)
        configuration.signaling.pullSourceHosts =
          list == "any"
          ? nil : Set(list.lowercased().split(separator: ",").map(String.init))
      case "--token-file":
        configuration.signaling.hooks = .sharedSecret(
          try WCSServerHooks.token(fromFile: try value(flag)))
      default: throw UsageError(description: "unknown argument '\(flag)'")
      }
      index += 1
    }
    if configuration.wssPort != nil,
      configuration.certificatePath == nil || configuration.privateKeyPath == nil
    {
      throw UsageError(description: "--wss-port needs --cert and --key")
    }
    return .run(configuration)
  }
}
