import Foundation
import WCSLocalServer

/// The WCS the example talks to: the one given with `--url ws://host:8080` (or
/// `wss://host:8443`), or, without a URL, the bundled `WCSLocalServer` started in this process
/// on free loopback ports, recording into a temporary directory.
public final class ExampleServer: Sendable {
  /// WebSocket URL to connect to (`ws://` or `wss://`).
  public let url: String
  /// Where the server serves records: `http://host:port/client/records/` (with the slash).
  public let recordsURL: String
  /// The in-process server's records directory, `nil` for a remote WCS.
  public let recordsDirectory: String?
  private let local: WCSLocalServer?

  /// Common options every example takes.
  public static let usage = """
      --url URL          a WCS to use (ws://host:8080 or wss://host:8443); default: start the
                         bundled local server in this process
      --records-url URL  where that WCS serves records (default http://host:8081/client/records/,
                         https://host:8444/... for wss)
      --server-log       print the local server's log lines
    \(ExampleNetwork.usage)
    """

  /// For an example's start: makes the `--out` folder (default `example-output`) and connects
  /// to `--url` or starts the local server. Returns both, or `nil` after logging
  /// "`program`: reason" when either fails (the example then exits 1).
  public static func start(_ program: String, arguments: ExampleArguments, log: ExampleLog)
    -> (server: ExampleServer, out: String)?
  {
    let out = arguments.string("out", default: "example-output") ?? "example-output"
    do {
      try ExampleMedia.makeDirectory(out)
      return (try ExampleServer(arguments: arguments, log: log), out)
    } catch {
      log.plain("\(program): \(error)")
      return nil
    }
  }

  /// Connects to `--url`, or starts the local server.
  /// - Throws: `ExampleError.server` when the local server cannot start.
  public init(arguments: ExampleArguments, log: ExampleLog) throws(ExampleError) {
    if let url = arguments.string("url") {
      self.url = url
      local = nil
      recordsDirectory = nil
      if let records = arguments.string("records-url") {
        recordsURL = records.hasSuffix("/") ? records : records + "/"
      } else {
        // WCS serves records over HTTP on 8081 and HTTPS on 8444 (wcs-protocol.md §6).
        let parsed = URL(string: url)
        let host = parsed?.host ?? "127.0.0.1"
        recordsURL =
          parsed?.scheme == "wss"
          ? "https://\(host):8444/client/records/" : "http://\(host):8081/client/records/"
      }
      log.line("using WCS at \(url)")
      return
    }
    let directory =
      NSTemporaryDirectory()
      + "wcs-example-records-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory = directory
    // The SIP gateway on loopback, for the phone examples (ClickToCall).
    configuration.sipGateway = SIPGatewayConfiguration()
    // `--transport tcp` offers ICE-TCP candidates only (as the iOS SDK), so the local server
    // answers as a WCS with ice_tcp_transport: passive TCP candidates.
    if arguments.string("transport")?.lowercased() == "tcp" {
      configuration.signaling.iceTCPTransport = true
    }
    if arguments.flag("server-log") {
      configuration.logSink = { line in log.line("server: " + line) }
    } else {
      configuration.logSink = { _ in }
    }
    let server: WCSLocalServer
    do {
      server = try WCSLocalServer.start(configuration)
    } catch {
      throw .server("\(error)")
    }
    local = server
    url = server.wsURL
    recordsURL = server.httpBaseURL + "/client/records/"
    recordsDirectory = directory
    log.line("started the local server at \(url), records at \(recordsURL)")
  }

  /// `true` when the server runs in this process.
  public var isLocal: Bool { local != nil }

  /// Stops the in-process server (nothing for a remote WCS).
  public func stop() {
    local?.stop()
  }
}
