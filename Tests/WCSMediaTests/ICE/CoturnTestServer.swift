import Foundation
import XCTest

@testable import WCSEventLoop
@testable import WCSMedia
@testable import WCSProtocols

/// coturn (`turnserver`, installed by `scripts/install-deps.sh test`) on 127.0.0.1 for interop
/// tests: long-term credentials `user`/`secret`, realm `wcs.test`, UDP only, relayed addresses
/// on 127.0.0.1, loopback peers allowed, its log in a file the test can read. Stopped by
/// `stop()` (also on deinit); the temporary directory is removed then.
final class CoturnTestServer {
  static let executable = "/usr/bin/turnserver"

  /// The server as our TURN client and `PeerConnectionConfiguration.turnServers` take it.
  let server: ICETURNServer
  /// coturn's log (`--log-file`, `--simple-log`).
  let logFile: URL
  /// The self-signed certificate of a `.tls` server (PEM); absent for the others.
  let certificateFile: URL
  private let process: Process
  private let directory: URL

  /// One coturn usage report (`peer usage: ... rp=, rb=, sp=, sb=`), logged when an allocation
  /// ends: packets/bytes the relay received from peers and sent to peers.
  struct PeerUsage: Equatable {
    var receivedPackets: Int
    var receivedBytes: Int
    var sentPackets: Int
    var sentBytes: Int
  }

  /// Starts coturn on a free port. Throws `XCTSkip` when coturn is not installed. The server
  /// may still be starting when this returns: TURN retransmissions cover that (over UDP; a
  /// TCP client waits with `waitUntilListening`).
  ///
  /// - Parameter transport: how `server` reaches it; `.tcp` and `.tls` also turn UDP off
  ///   (`--no-udp`), so nothing but the stream can allocate (relayed addresses stay UDP).
  ///   `.tls` listens on a second port with a self-signed P-256 certificate for IP 127.0.0.1
  ///   made by `openssl` (`certificateFile`, the CA file a verifying client trusts).
  init(transport: ICETURNTransport = .udp) throws {
    guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
      throw XCTSkip("coturn is not installed (apt-get install coturn)")
    }
    // A free port: bind, read it, release it.
    let port = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
      .localAddress.port
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-turn-\(UInt32.random(in: 0 ... .max))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    logFile = directory.appendingPathComponent("turn.log")
    process = Process()
    process.executableURL = URL(fileURLWithPath: Self.executable)
    process.arguments = [
      "-n", "-v", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
      "--user=user:secret", "--realm=wcs.test", "--lt-cred-mech", "--no-tls", "--no-dtls",
      "--allow-loopback-peers", "--no-cli", "--log-file=\(logFile.path)", "--simple-log",
      "--db=\(directory.path)/turndb", "--pidfile=\(directory.path)/turn.pid",
    ]
    if transport.isStream { process.arguments? += ["--no-udp"] }
    certificateFile = directory.appendingPathComponent("cert.pem")
    var serverPort = port
    if transport == .tls {
      serverPort = try UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0))
        .localAddress.port
      let key = directory.appendingPathComponent("key.pem")
      let openssl = Process()
      openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
      openssl.arguments = [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", key.path, "-out", certificateFile.path, "-days", "1", "-subj", "/CN=127.0.0.1",
        "-addext", "subjectAltName=IP:127.0.0.1",
      ]
      openssl.standardOutput = FileHandle.nullDevice
      openssl.standardError = FileHandle.nullDevice
      try openssl.run()
      openssl.waitUntilExit()
      process.arguments?.removeAll { $0 == "--no-tls" }
      process.arguments? += [
        "--tls-listening-port=\(serverPort)", "--cert=\(certificateFile.path)",
        "--pkey=\(key.path)",
      ]
    }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    server = ICETURNServer(
      address: ICETransportAddress(ip: .loopbackV4, port: serverPort), username: "user",
      password: "secret", transport: transport)
    do {
      try process.run()
    } catch {
      try? FileManager.default.removeItem(at: directory)
      throw error
    }
  }

  deinit { stop() }

  /// Waits until coturn accepts TCP connections on its port (at most `timeout` seconds);
  /// returns whether it did.
  func waitUntilListening(timeout: Double = 10) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = server.address.port.bigEndian
      address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      close(probe)
      if connected == 0 { return true }
      usleep(20_000)
    }
    return false
  }

  /// Terminates coturn and removes its directory; calling it again is harmless.
  func stop() {
    if process.isRunning {
      process.terminate()
      process.waitUntilExit()
    }
    try? FileManager.default.removeItem(at: directory)
  }

  /// The log so far ("" before coturn opened it).
  var log: String {
    (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
  }

  /// The peer usage reports logged so far, oldest first.
  var peerUsages: [PeerUsage] {
    log.split(separator: "\n").compactMap { line -> PeerUsage? in
      guard line.contains("peer usage:") else { return nil }
      func value(_ name: String) -> Int? {
        guard let range = line.range(of: " \(name)=") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
      }
      guard let rp = value("rp"), let rb = value("rb"), let sp = value("sp"), let sb = value("sb")
      else { return nil }
      return PeerUsage(receivedPackets: rp, receivedBytes: rb, sentPackets: sp, sentBytes: sb)
    }
  }
}
