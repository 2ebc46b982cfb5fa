import BenchSupport
// Connect time: `publish()` → PUBLISHING (ICE, DTLS and the server's answer, as an app sees it)
// through the bundled local server on 127.0.0.1, one row per way of reaching it, the median of
// `--runs` (20) publishes each, in one process and one session. Each row is a set of stream
// options (`iceServers`, `iceTransportPolicy`, `transport`), so another transport is one more
// entry in `rows`. The TURN rows need coturn (`turnserver`, Debian `coturn`), which this starts
// on 127.0.0.1 with long-term credentials; without it they are skipped with a note.
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
  /// Why the row cannot run here, if it cannot.
  var unavailable: String?
}

/// coturn on a free UDP port of 127.0.0.1 (user `user`, password `secret`), or `nil`.
func startCoturn() -> (Process, UInt16)? {
  let executable = "/usr/bin/turnserver"
  // A free port: bind, read it, release it (the temporary socket closes at once).
  guard FileManager.default.isExecutableFile(atPath: executable),
    let port = (try? UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)))?
      .localAddress.port
  else { return nil }
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("connect-bench-turn-\(UInt32.random(in: 0 ... .max))").path
  try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = [
    "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
    "--user=user:secret", "--realm=wcs.test", "--lt-cred-mech", "--no-tls", "--no-dtls",
    "--allow-loopback-peers", "--no-cli", "--log-file=stdout", "--db=\(directory)/turndb",
    "--pidfile=\(directory)/turn.pid",
  ]
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  guard (try? process.run()) != nil else { return nil }
  Thread.sleep(forTimeInterval: 0.3)
  return (process, port)
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
  let (seconds, attoseconds) = start.duration(to: .now).components
  let status = stream.getStatus()
  try? stream.stop()
  _ = poll(timeout: 5) { session.getStreams().isEmpty }
  guard status == .fpwcsStreamStatusPublishing else {
    return .failure(.streamFailed(statusInfo: stream.getStatusInfo(), info: stream.getInfo()))
  }
  return .success(Double(seconds) * 1000 + Double(attoseconds) / 1e15)
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
let coturn = startCoturn()
defer {
  coturn?.0.terminate()
  server.stop()
}

let turnURL = coturn.map { "turn:127.0.0.1:\($0.1)" }
let noTURN = coturn == nil ? "coturn not installed (apt-get install coturn)" : nil
let rows: [Row] = [
  Row(name: "direct UDP", iceServers: [], policy: .all),
  Row(
    name: "TURN/UDP relay",
    iceServers: turnURL.map {
      [FPWCSApi2IceServer(url: $0, username: "user", credential: "secret")]
    },
    policy: .relay, unavailable: noTURN),
]

let options = FPWCSApi2SessionOptions()
options.urlServer = server.wsURL
options.bandwidthSampleInterval = 0
let session = try FPWCSApi2.createSession(options)
session.connect()
guard poll(timeout: 5, { session.getStatus() == .fpwcsSessionStatusEstablished }) else {
  print("session did not reach ESTABLISHED")
  exit(1)
}
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
    switch publishOnce(session, row: row, index: index) {
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
