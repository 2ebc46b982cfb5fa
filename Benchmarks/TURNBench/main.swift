// Connect time and throughput through a TURN relay reached over UDP, TCP and TLS (RFC 8656
// §3.1): coturn from Debian on 127.0.0.1 (long-term credentials, TLS with a certificate made by
// openssl for 127.0.0.1), a relay-only offering PeerConnection and a loopback answerer in this
// process. Connect time: from the offer to both sides `.connected` (allocation, ICE, DTLS),
// median/min/max of `--rounds` (20) per transport, plus direct UDP for reference. Throughput:
// SRTP packets of 1200 payload bytes sent as fast as the relay leg takes them for `--seconds`
// (2) over one TURN/TCP (and TLS) allocation; the payload rate the answerer received.
// Run: `swift run -c release TURNBench [--rounds 20] [--seconds 2]`.
import BenchSupport
import Foundation
import Synchronization
import WCSEventLoop
import WCSPeerConnection
import WCSProtocols

/// coturn on free ports of 127.0.0.1, stopped (and its directory removed) by `stop()`.
final class Coturn {
  let server: ICETURNServer
  let certificate: String
  private let process = Process()
  private let directory: URL

  init(transport: ICETURNTransport) throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("turn-bench-\(UInt32.random(in: 0 ... .max))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    certificate = directory.appendingPathComponent("cert.pem").path
    let key = directory.appendingPathComponent("key.pem").path
    let port = Self.freePort()
    let tlsPort = Self.freePort()
    var arguments = [
      "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
      "--user=user:secret", "--realm=wcs.test", "--lt-cred-mech", "--no-dtls",
      "--allow-loopback-peers", "--no-cli", "--log-file=stdout", "--simple-log",
      "--db=\(directory.path)/turndb", "--pidfile=\(directory.path)/turn.pid",
    ]
    if transport == .tls {
      let openssl = Process()
      openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
      openssl.arguments = [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1",
        "-addext", "subjectAltName=IP:127.0.0.1",
      ]
      openssl.standardOutput = FileHandle.nullDevice
      openssl.standardError = FileHandle.nullDevice
      try openssl.run()
      openssl.waitUntilExit()
      arguments += ["--tls-listening-port=\(tlsPort)", "--cert=\(certificate)", "--pkey=\(key)"]
    } else {
      arguments.append("--no-tls")
    }
    if transport.isStream { arguments.append("--no-udp") }
    process.executableURL = URL(fileURLWithPath: "/usr/bin/turnserver")
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    server = ICETURNServer(
      address: ICETransportAddress(ip: .loopbackV4, port: transport == .tls ? tlsPort : port),
      username: "user", password: "secret", transport: transport)
    try process.run()
    // Up once its port answers (TCP) or after a moment (UDP: retransmissions cover it).
    usleep(300_000)
  }

  func stop() {
    if process.isRunning {
      process.terminate()
      process.waitUntilExit()
    }
    try? FileManager.default.removeItem(at: directory)
  }

  private static func freePort() -> UInt16 {
    (try? UDPSocket(bindingTo: ICETransportAddress(ip: .loopbackV4, port: 0)).localAddress.port)
      ?? 0
  }
}

/// What the loop's handlers saw, read from the main thread.
final class Seen: Sendable {
  let offererConnected = Mutex<ContinuousClock.Instant?>(nil)
  let answererConnected = Mutex<ContinuousClock.Instant?>(nil)
  let failed = Mutex(false)
  let receivedBytes = Mutex(0)
}

/// A relay-only offerer through `server` (or a direct one when `nil`) and a loopback answerer.
final class Pair {
  let loop: EventLoop
  let offerer: PeerConnection
  let answerer: PeerConnection
  let seen = Seen()

  init(loop: EventLoop, server: ICETURNServer?, tls: TLSClientOptions) {
    self.loop = loop
    var configuration = PeerConnectionConfiguration.loopback
    if let server {
      configuration.turnServers = [server]
      configuration.iceTransportPolicy = .relay
      configuration.turnTLSOptions = tls
    }
    offerer = PeerConnection(configuration: configuration, loop: loop)
    answerer = PeerConnection(configuration: .loopback, loop: loop)
  }

  /// Negotiates and waits until both are connected; the time it took, `nil` on failure.
  func connect(timeout: Double = 15) -> Duration? {
    let start = ContinuousClock.now
    let seen = seen
    let answerer = answerer
    let ok: Bool = loop.submit {
      offerer.onEvent = { event in
        switch event {
        case .stateChanged(.connected): seen.offererConnected.withLock { $0 = $0 ?? .now }
        case .stateChanged(.failed): seen.failed.withLock { $0 = true }
        case .localCandidate(let candidate):
          answerer.addRemoteCandidate(candidate)
        default: break
        }
      }
      answerer.onEvent = { event in
        switch event {
        case .stateChanged(.connected): seen.answererConnected.withLock { $0 = $0 ?? .now }
        case .stateChanged(.failed): seen.failed.withLock { $0 = true }
        default: break
        }
      }
      answerer.onRTP = { _, packet in seen.receivedBytes.withLock { $0 += packet.count - 12 } }
      do {
        let offer = try offerer.localDescriptionForOffer()
        let answer = try answerer.setRemoteOffer(offer)
        try offerer.setRemoteAnswer(answer)
        return true
      } catch {
        return false
      }
    }
    guard ok else { return nil }
    let deadline = start + .milliseconds(Int(timeout * 1000))
    while ContinuousClock.now < deadline {
      if seen.failed.withLock({ $0 }) { return nil }
      if let a = seen.offererConnected.withLock({ $0 }),
        let b = seen.answererConnected.withLock({ $0 })
      {
        return start.duration(to: max(a, b))
      }
      usleep(200)
    }
    return nil
  }

  /// Sends 1200-byte payloads as fast as the offerer takes them for `seconds`; the payload
  /// bytes the answerer received per second.
  func throughput(seconds: Double) -> Double {
    let payload = [UInt8](repeating: 0x5A, count: 1200)
    var sequence: UInt16 = 0
    let start = ContinuousClock.now
    let end = start + .milliseconds(Int(seconds * 1000))
    let before = seen.receivedBytes.withLock { $0 }
    while ContinuousClock.now < end {
      let refused: Int = loop.submit {
        var refused = 0
        for _ in 0..<32 {
          sequence &+= 1
          let packet = RTPPacket(
            header: RTPHeader(
              payloadType: 96, sequenceNumber: sequence, timestamp: UInt32(sequence) * 90,
              ssrc: 0x7475_726E),
            payload: payload)
          do {
            try offerer.sendRTP(try packet.serialized())
          } catch {
            refused += 1
          }
        }
        return refused
      }
      // The relay leg's queue is full: let it drain.
      if refused > 0 { usleep(500) }
    }
    // What is still in flight arrives within a moment.
    usleep(200_000)
    let received = seen.receivedBytes.withLock { $0 } - before
    return Double(received) / start.duration(to: .now).seconds
  }

  func close() {
    loop.submit {
      offerer.close()
      answerer.close()
    }
  }
}

let rounds = option("rounds", default: 20)
let seconds = Double(option("seconds", default: 2))
let loop = EventLoop(label: "TURNBench")
print("connect time, offer to both connected (ICE + DTLS), \(rounds) rounds each, ms")
print("transport      median    min     max   failed")
var throughputServers: [(String, Coturn)] = []
for (name, transport) in [
  ("direct UDP", nil), ("TURN/UDP", ICETURNTransport.udp), ("TURN/TCP", .tcp),
  ("TURN/TLS", .tls),
] as [(String, ICETURNTransport?)] {
  let coturn = try transport.map { try Coturn(transport: $0) }
  let tls = TLSClientOptions(caFile: coturn?.certificate)
  var times: [Double] = []
  var failed = 0
  for _ in 0..<rounds {
    let pair = Pair(loop: loop, server: coturn?.server, tls: tls)
    if let time = pair.connect() { times.append(time.seconds * 1000) } else { failed += 1 }
    pair.close()
  }
  times.sort()
  let median = times.isEmpty ? .nan : times[times.count / 2]
  print(
    String(
      format: "%-12@ %7.1f %7.1f %7.1f   %d", name as NSString, median, times.first ?? .nan,
      times.last ?? .nan, failed))
  if let coturn {
    if transport?.isStream == true {
      throughputServers.append((name, coturn))
    } else {
      coturn.stop()
    }
  }
}
print("throughput of one allocation, 1200-byte payloads, \(seconds) s")
for (name, coturn) in throughputServers {
  let pair = Pair(
    loop: loop, server: coturn.server, tls: TLSClientOptions(caFile: coturn.certificate))
  if pair.connect() != nil {
    let rate = pair.throughput(seconds: seconds)
    print(String(format: "%-12@ %7.1f Mbit/s payload", name as NSString, rate * 8 / 1e6))
  } else {
    print("\(name): did not connect")
  }
  pair.close()
  coturn.stop()
}
loop.shutdown()
