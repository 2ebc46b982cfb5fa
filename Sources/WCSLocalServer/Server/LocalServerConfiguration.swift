import Foundation
import WCSEventLoop
import WCSTransport

extension WCSLocalServer {
  /// Everything `WCSLocalServer.start(_:)` needs. Ports follow WCS defaults (wcs-protocol.md
  /// §1.1, §6): WebSocket 8080, secure WebSocket 8443, HTTP 8081 (records under
  /// `/client/records/`). Older WCS builds served HTTP on 9091: pass `httpPort: 9091`, or keep
  /// 8081 and set `legacyHTTPPort: 9091` to serve the records on both.
  ///
  /// Not `Sendable`: it carries the media engine, which the server then touches only on its own
  /// queue.
  public struct Configuration {
    /// Address every port binds to (default `127.0.0.1`, loopback only).
    public var bindAddress: String = "127.0.0.1"
    /// Plain WebSocket port (default 8080); 0 picks a free port, read it from `wsURL`.
    public var wsPort: Int = 8080
    /// Secure WebSocket port, `nil` for none. Needs `certificatePath` and `privateKeyPath`.
    public var wssPort: Int?
    /// PEM certificate (chain) for `wss`.
    public var certificatePath: String?
    /// PEM private key of `certificatePath`.
    public var privateKeyPath: String?
    /// HTTP port serving `recordsDirectory` at `/client/records/` (default 8081); 0 picks a free
    /// port, read it from `httpBaseURL`.
    public var httpPort: Int = 8081
    /// A second HTTP port serving the same records (the legacy 9091), `nil` for none.
    public var legacyHTTPPort: Int?
    /// Largest signalling message a client may send, bytes (1 MiB); a longer one closes its
    /// connection with 1009.
    public var maximumMessageSize = WebSocketServer.Configuration.defaultMaximumMessageSize
    /// Most signalling bytes queued to one client and not yet written (16 MiB); past it the
    /// client is closed with 1008.
    public var maximumOutboxSize = WebSocketServer.Configuration.defaultMaximumOutboxSize
    /// Where finished recordings are stored and served from; created when missing.
    public var recordsDirectory: String =
      FileManager.default.currentDirectoryPath + "/records"
    /// Interval of the relay's per-publisher and per-player statistics log lines (packets,
    /// losses, NACKs, retransmissions, PLIs, key frames); nil logs them only at each stream's
    /// end (`--stats SECONDS`).
    public var statisticsInterval: Duration?
    /// Whether the relay keeps each publisher's video since its last key frame to answer
    /// `snapshot` (`LocalServerRelayEngine.Configuration.snapshots`); off, snapshots fail with
    /// `LocalServerRelayEngine.snapshotsOffReason` (`--no-snapshots`). Default: on.
    public var snapshots = true
    /// Signalling settings (ping interval, version string, record template). `serverAddress`
    /// is replaced by `bindAddress:wsPort` with the actual port.
    public var signaling = WCSServerConfiguration()
    /// The media side. `nil` uses `LocalServerRelayEngine` (ICE-lite + DTLS-SRTP, SFU relay,
    /// WebM recording into `recordsDirectory`, media on `bindAddress`). Tests inject fakes;
    /// `UnavailableMediaEngine` runs signalling only.
    public var mediaEngine: (any LocalServerMediaEngine)?
    /// A network to emulate on every media connection of the relay (publishers and players,
    /// both directions of each; `PeerConnectionConfiguration.networkEmulation`), `nil` for
    /// none. Used by the default engine only, not by an injected `mediaEngine`.
    public var networkEmulation: NetworkEmulation?
    /// The WebRTC–SIP gateway (`call`, `answer`, REGISTER), `nil` for none: calls then fail
    /// at once (SIP/SIPGateway.swift).
    public var sipGateway: SIPGatewayConfiguration?
    /// Receives one line per session and stream event (no trailing newline), on the server's
    /// queue. Default: standard error.
    public var logSink: @Sendable (String) -> Void = WCSLocalServer.standardErrorLog
    /// Current time in ms since the Unix epoch; tests may inject their own.
    public var clock: @Sendable () -> Int64 = WCSLocalServer.wallClock

    /// All defaults.
    public init() {}
  }

  /// Writes `line` and a newline to standard error.
  public static let standardErrorLog: @Sendable (String) -> Void = { line in
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }

  /// Milliseconds since the Unix epoch from the system clock.
  public static let wallClock: @Sendable () -> Int64 = {
    Int64((Date().timeIntervalSince1970 * 1000).rounded())
  }
}

/// Why `WCSLocalServer.start(_:)` failed.
public enum WCSLocalServerStartError: Error, Sendable, Equatable, CustomStringConvertible {
  /// A WebSocket or HTTP port could not be opened (in use, bad address, bad certificate).
  case listen(WebSocketServerStartFailure)
  /// `wssPort` is set without both `certificatePath` and `privateKeyPath`.
  case missingCertificate
  /// The records directory does not exist and cannot be created.
  case recordsDirectory(path: String, reason: String)

  /// One line for logs and the command line.
  public var description: String {
    switch self {
    case .listen(let failure): return failure.description
    case .missingCertificate: return "--wss-port needs --cert and --key"
    case .recordsDirectory(let path, let reason):
      return "cannot use records directory \(path): \(reason)"
    }
  }
}

/// Which listener failed and why (the transport's `StartError` text).
public struct WebSocketServerStartFailure: Sendable, Equatable, CustomStringConvertible {
  /// `ws`, `wss` or `http`.
  public var listener: String
  /// The transport's explanation.
  public var reason: String

  /// `listener: reason`.
  public var description: String { "\(listener): \(reason)" }
}
