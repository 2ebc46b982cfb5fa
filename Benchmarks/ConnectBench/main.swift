import BenchSupport
// Connect time: `publish()` → PUBLISHING (ICE, DTLS and the server's answer, as an app sees it)
// through the bundled local server on 127.0.0.1, one row per way of reaching it, the median of
// `--runs` (20) publishes each, in one process and one session. Each row is a set of stream
// options (`iceServers`, `iceTransportPolicy`, `transport`), so another transport is one more
// entry in `rows`. The TURN rows need coturn (`turnserver`, Debian `coturn`), which this starts
// on 127.0.0.1 with long-term credentials (UDP and TCP on one port, TLS on another with a
// certificate for IP 127.0.0.1 that `openssl` makes and the client trusts as its CA); without
// it they are skipped with a note. The ICE-TCP row publishes with `transport = .TCP` to a
// second local server in passive-TCP mode (`iceTCPTransport`, as a WCS with
// ice_tcp_transport).
// Run: `swift run -c release ConnectBench [--runs 20]`.
import FPWCSApi2Swift
import Foundation
import WCSLocalServer
import WCSMedia

/// One way to reach the server.
struct Row {
  var name: String
  var iceServers: [FPWCSApi2IceServer]?
  var policy: FPWCSApi2IceTransportPolicy?
  var transport: kFPWCSTransport = .fpwcsTransportUDP
  /// Publish to the passive-TCP server rather than the UDP one.
  var iceTCPServer = false
  /// Why the row cannot run here, if it cannot.
  var unavailable: String?
}

/// A free port of 127.0.0.1: bind, read it, release it (the temporary socket closes at once).
func freePort() -> UInt16? {
  (try? UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)))?.localAddress.port
}

/// coturn on 127.0.0.1 (user `user`, password `secret`): UDP and TCP on `port`, TLS on
/// `tlsPort` with the certificate in `certificate` (PEM, also the CA file to trust); `nil`
/// without coturn.
func startCoturn() -> (process: Process, port: UInt16, tlsPort: UInt16, certificate: String)? {
  let executable = "/usr/bin/turnserver"
  guard FileManager.default.isExecutableFile(atPath: executable), let port = freePort(),
    let tlsPort = freePort()
  else { return nil }
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("connect-bench-turn-\(UInt32.random(in: 0 ... .max))").path
  try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  let certificate = "\(directory)/cert.pem"
  let key = "\(directory)/key.pem"
  let openssl = Process()
  openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
  openssl.arguments = [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
    key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
    "subjectAltName=IP:127.0.0.1",
  ]
  openssl.standardOutput = FileHandle.nullDevice
  openssl.standardError = FileHandle.nullDevice
  guard (try? openssl.run()) != nil else { return nil }
  openssl.waitUntilExit()
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = [
    "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
    "--tls-listening-port=\(tlsPort)", "--cert=\(certificate)", "--pkey=\(key)",
    "--user=user:secret", "--realm=wcs.test", "--lt-cred-mech", "--no-dtls",
    "--allow-loopback-peers", "--no-cli", "--log-file=stdout", "--db=\(directory)/turndb",
    "--pidfile=\(directory)/turn.pid",
  ]
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  guard (try? process.run()) != nil else { return nil }
  Thread.sleep(forTimeInterval: 0.5)
  return (process, port, tlsPort, certificate)
}

/// Polls `condition` every millisecond for up to `timeout` seconds.
func poll(timeout: Double, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while !condition() {
    if Date() >= deadline { return false }
    usleep(1000)
  }
  return true
}

/// Publishes once with `row`'s options; milliseconds to PUBLISHING, or the failure.
func publishOnce(_ session: FPWCSApi2Session, row: Row, index: Int) -> Result<Double, WCSError> {
  let options = FPWCSApi2StreamOptions()
  options.name = "connect-\(index)-\(UInt32.random(in: 0 ... .max))"
  options.constraints = FPWCSApi2MediaConstraints(audio: true, video: true)
  options.iceServers = row.iceServers
  options.iceTransportPolicy = row.policy
  options.transport = row.transport
  let stream: FPWCSApi2Stream
  do {
    stream = try session.createStream(options)
  } catch {
    return .failure(error as? WCSError ?? .invalidArgument("\(error)"))
  }
  let start = ContinuousClock.now
  do {
    try stream.publish()
  } catch {
    return .failure(error as? WCSError ?? .invalidArgument("\(error)"))
  }
  let ended: Set<kFPWCSStreamStatus> = [
    .fpwcsStreamStatusPublishing, .fpwcsStreamStatusFailed, .fpwcsStreamStatusUnpublished,
  ]
  _ = poll(timeout: 40) { ended.contains(stream.getStatus()) }
  let elapsed = start.duration(to: .now)
  let status = stream.getStatus()
  try? stream.stop()
  _ = poll(timeout: 5) { session.getStreams().isEmpty }
  guard status == .fpwcsStreamStatusPublishing else {
    return .failure(.streamFailed(statusInfo: stream.getStatusInfo(), info: stream.getInfo()))
  }
  return .success(elapsed.milliseconds)
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
  sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p + 0.5))]
}

let runs = option("runs", default: 20)
var serverConfiguration = WCSLocalServer.Configuration()
serverConfiguration.wsPort = 0
serverConfiguration.httpPort = 0
serverConfiguration.recordsDirectory =
  FileManager.default.temporaryDirectory.appendingPathComponent("connect-bench").path
serverConfiguration.logSink = { _ in }
let server = try WCSLocalServer.start(serverConfiguration)
var tcpServerConfiguration = serverConfiguration
tcpServerConfiguration.signaling.iceTCPTransport = true
let tcpServer = try WCSLocalServer.start(tcpServerConfiguration)
let coturn = startCoturn()
defer {
  coturn?.process.terminate()
  server.stop()
  tcpServer.stop()
}

let noTURN = coturn == nil ? "coturn not installed (apt-get install coturn)" : nil
/// The TURN server at `url` (`nil` without coturn) as the row's only ICE server.
func turn(_ url: (UInt16, UInt16) -> String) -> [FPWCSApi2IceServer]? {
  coturn.map {
    [FPWCSApi2IceServer(url: url($0.port, $0.tlsPort), username: "user", credential: "secret")]
  }
}
let rows: [Row] = [
  Row(name: "direct UDP", iceServers: [], policy: .all),
  Row(
    name: "TURN/UDP relay", iceServers: turn { port, _ in "turn:127.0.0.1:\(port)" },
    policy: .relay, unavailable: noTURN),
  Row(
    name: "TURN/TCP relay",
    iceServers: turn { port, _ in "turn:127.0.0.1:\(port)?transport=tcp" }, policy: .relay,
    unavailable: noTURN),
  Row(
    name: "TURN/TLS relay", iceServers: turn { _, tlsPort in "turns:127.0.0.1:\(tlsPort)" },
    policy: .relay, unavailable: noTURN),
  Row(
    name: "ICE-TCP", iceServers: [], policy: .all, transport: .fpwcsTransportTCP,
    iceTCPServer: true),
]

// The TLS row's certificate is coturn's own: trusted as the CA, verification stays on.
var peerConnection = PeerConnectionConfiguration(allowLoopback: true)
if let coturn { peerConnection.turnTLSOptions = TLSClientOptions(caFile: coturn.certificate) }
let backend = NativeMediaBackend(
  configuration: NativeMediaBackend.Configuration(peerConnection: peerConnection))

/// An established session with `server`.
func connect(_ server: WCSLocalServer) throws -> FPWCSApi2Session {
  let options = FPWCSApi2SessionOptions()
  options.urlServer = server.wsURL
  options.bandwidthSampleInterval = 0
  options.mediaBackend = backend
  let session = try FPWCSApi2.createSession(options)
  session.connect()
  guard poll(timeout: 5, { session.getStatus() == .fpwcsSessionStatusEstablished }) else {
    print("session did not reach ESTABLISHED")
    exit(1)
  }
  return session
}
let session = try connect(server)
let tcpSession = try connect(tcpServer)
// One publish first, outside the figures: it pays the process-wide set-up (certificate,
// libsrtp self-tests, codec libraries).
_ = publishOnce(session, row: rows[0], index: -1)

print("publish → PUBLISHING through the local server on 127.0.0.1, \(runs) runs per row (ms)")
print("row                  median     p10     p90     min     max  failed")
for row in rows {
  if let unavailable = row.unavailable {
    print(row.name.padding(toLength: 18, withPad: " ", startingAt: 0) + "  skipped: \(unavailable)")
    continue
  }
  var times: [Double] = []
  var failures: [String] = []
  for index in 0..<runs {
    switch publishOnce(row.iceTCPServer ? tcpSession : session, row: row, index: index) {
    case .success(let milliseconds): times.append(milliseconds)
    case .failure(let error): failures.append("\(error)")
    }
  }
  let sorted = times.sorted()
  let figures =
    sorted.isEmpty
    ? "      –       –       –       –       –"
    : [0.5, 0.1, 0.9].map { String(format: "%8.1f", percentile(sorted, $0)) }.joined()
      + String(format: "%8.1f%8.1f", sorted[0], sorted[sorted.count - 1])
  print(
    row.name.padding(toLength: 18, withPad: " ", startingAt: 0) + figures
      + String(format: "%8d", failures.count))
  if let first = failures.first { print("  first failure: \(first)") }
}
session.disconnect()
tcpSession.disconnect()
