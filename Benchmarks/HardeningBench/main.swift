// The inputs issue 29 names as hurting, fed to the hardened code: wall time and peak memory
// (growth of the process's maximum resident set) per case, each case in a fresh process so
// the peaks do not mix. Cases ending in `-unbounded` raise the new limit out of the way, which
// is what the code did before the limit (the intake or queue is otherwise the same).
// `swift run -c release HardeningBench` runs every case; `HardeningBench CASE` runs one.
import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia
import WCSTransport

func seconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func peakResidentKiB() -> Int {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  return usage.ru_maxrss
}

/// 100 000 distinct host candidates, as one offer of 4.5 MB would carry.
func iceIntake(maximumRemoteCandidates: Int?) -> String {
  var configuration = ICEAgentConfiguration(
    role: .controlled,
    localCredentials: ICECredentials(ufrag: "ufA1", pwd: "passwordA-0123456789abcd"),
    tieBreaker: 1, randomSeed: 1)
  if let maximumRemoteCandidates { configuration.maximumRemoteCandidates = maximumRemoteCandidates }
  let agent = ICEAgent(configuration: configuration)
  agent.addLocalSocket(
    0, address: ICETransportAddress(ip: .v4(0x7F00_0001), port: 4000),
    now: MediaInstant(nanoseconds: 0))
  for index in 0..<100_000 {
    agent.addRemoteCandidate(
      ICECandidate(
        foundation: "f\(index % 7)", priority: UInt32(index),
        address: ICETransportAddress(ip: .v4(0x0A00_0000 + UInt32(index)), port: 9), type: .host),
      now: MediaInstant(nanoseconds: 0))
  }
  return "kept \(agent.remoteCandidates.count), refused \(agent.refusedRemoteCandidates)"
}

/// The old intake: every candidate compared with every one before it (20 000 of them; the
/// cost grows with the square, so 100 000 take 25 times as long).
func iceLinearScan() -> String {
  var kept: [ICECandidate] = []
  for index in 0..<20_000 {
    let candidate = ICECandidate(
      foundation: "f\(index % 7)", priority: UInt32(index),
      address: ICETransportAddress(ip: .v4(0x0A00_0000 + UInt32(index)), port: 9), type: .host)
    if kept.firstIndex(where: { $0.address == candidate.address }) == nil {
      kept.append(candidate)
    }
  }
  return "kept \(kept.count) of 20 000 (x25 for 100 000)"
}

/// What replacing the shared certificate costs (once a month per process).
func certificateRenewal() throws -> String {
  let certificate = try DTLSCertificate(validity: 30 * 86_400, createdAt: 1_800_000_000)
  return "new certificate, notAfter \(Int(certificate.notAfter))"
}

/// A 320x240 key frame whose header claims 16383x16383.
func forgedKeyFrame(limit: VP8PictureLimit) throws -> String {
  let encoder = try VP8Encoder(
    configuration: .init(width: 320, height: 240, frameRate: 30, bitrateKbps: 300))
  var frame = try encoder.encode(I420Image.black(width: 320, height: 240), timestamp: 0)[0].data
  frame.replaceSubrange(6..<10, with: [0xFF, 0x3F, 0xFF, 0x3F])
  let decoder = try VP8Decoder(pictureLimit: limit)
  do {
    let picture = try decoder.decode(frame)
    return "decoded \(picture.map { "\($0.width)x\($0.height)" } ?? "nothing")"
  } catch {
    return "refused: \(error.reason)"
  }
}

/// 1000 compounds of SR + a malformed RR + PLI + REMB.
func rtcpCompounds(lenient: Bool) throws -> String {
  var bytes = try RTCPPacket.serializeCompound([
    .senderReport(
      RTCPSenderReport(ssrc: 1, ntpTimestamp: 0, rtpTimestamp: 0, packetCount: 1, octetCount: 1))
  ])
  bytes += [0x82, 201, 0x00, 0x01, 0xAA, 0xAA, 0xAA, 0xAA]
  bytes += try RTCPPacket.serializeCompound([
    .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 2, mediaSSRC: 1)),
    .receiverEstimatedMaxBitrate(
      RTCPReceiverEstimatedMaxBitrate(senderSSRC: 2, bitrate: 1_000_000, ssrcs: [1])),
  ])
  var kept = 0
  for _ in 0..<1000 {
    if lenient {
      kept += RTCPPacket.parseCompoundLeniently(bytes).packets.count
    } else {
      kept += (try? RTCPPacket.parseCompound(bytes))?.count ?? 0
    }
  }
  return "packets kept \(kept) of 4000 (1000 malformed)"
}

/// A client that never reads, sent 256 MiB in 64 KiB messages.
func silentClient(outbox: Int) throws -> String {
  let closed = DispatchSemaphore(value: 0)
  let connections = Mutex<[WebSocketServer.Connection]>([])
  let code = Mutex(0)
  let server = WebSocketServer(configuration: .init(maximumOutboxSize: outbox)) { event in
    switch event {
    case .connected(let connection): connections.withLock { $0.append(connection) }
    case .closed(_, let closeCode, _):
      code.withLock { $0 = closeCode }
      closed.signal()
    default: break
    }
  }
  try server.start()
  defer { server.stop() }
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(fd) }
  var size: Int32 = 4096
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = UInt16(server.port).bigEndian
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  _ = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  let request = Array(
    ("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
  _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
  while connections.withLock({ $0.isEmpty }) { usleep(1000) }
  let connection = connections.withLock { $0[0] }
  let message = String(repeating: "x", count: 64 << 10)
  var sent = 0
  while sent < 4096, connection.send(message) {
    sent += 1
    if sent % 64 == 0 { usleep(1000) }
  }
  // Let the service thread queue what it was given.
  usleep(200_000)
  let result = closed.wait(timeout: .now()) == .success ? "closed \(code.withLock { $0 })" : "open"
  return "\(sent) messages of 64 KiB taken, \(result)"
}

/// One 64 MiB message from a client.
func bigMessage(limit: Int) throws -> String {
  let received = DispatchSemaphore(value: 0)
  let outcome = Mutex("")
  let server = WebSocketServer(configuration: .init(maximumMessageSize: limit)) { event in
    switch event {
    case .text(_, let text):
      outcome.withLock { $0 = "received \(text.utf8.count >> 20) MiB" }
      received.signal()
    case .closed(_, let code, _):
      outcome.withLock { $0 = "closed \(code)" }
      received.signal()
    default: break
    }
  }
  try server.start()
  defer { server.stop() }
  let client = WebSocketTransport()
  let opened = DispatchSemaphore(value: 0)
  client.connect(to: server.url, options: .init(connectTimeout: 5)) { event in
    if event == .opened { opened.signal() }
  }
  opened.wait()
  _ = client.send(String(repeating: "y", count: 64 << 20))
  received.wait()
  client.close()
  _ = client.waitUntilStopped(timeout: 10)
  return outcome.withLock { $0 }
}

/// A publisher sending each RTP packet (1200 bytes) from a new SSRC, 100 000 packets: the
/// relay keeps a packet cache per source (`packetCacheSize` 1024), for at most
/// `maxSourcesPerPublisher` of them; unbounded, one per packet (20 000 of them: memory
/// grows linearly, so 100 000 cost 5 times as much).
func ssrcFlood(maximumSources: Int) -> String {
  let packets = maximumSources == .max ? 20_000 : 100_000
  var caches: [UInt32: RelayPacketCache] = [:]
  var refused = 0
  let packet = [UInt8](repeating: 0x5A, count: 1200)
  for index in 0..<packets {
    let ssrc = 0x1000_0000 + UInt32(index)
    if caches[ssrc] == nil {
      guard caches.count < maximumSources else {
        refused += 1
        continue
      }
      caches[ssrc] = RelayPacketCache(capacity: 1024)
    }
    caches[ssrc]?.store(packet, sequenceNumber: UInt16(truncatingIfNeeded: index))
  }
  return "\(packets) packets: kept \(caches.count) sources, refused \(refused)"
}

let cases: [(name: String, run: () throws -> String)] = [
  (
    "relay-100k-ssrcs", { ssrcFlood(maximumSources: LocalServerRelayEngine.maxSourcesPerPublisher) }
  ),
  ("relay-20k-ssrcs-unbounded", { ssrcFlood(maximumSources: .max) }),
  ("ice-100k-candidates", { iceIntake(maximumRemoteCandidates: nil) }),
  ("ice-100k-candidates-unbounded", { iceIntake(maximumRemoteCandidates: .max) }),
  ("ice-old-linear-scan-20k", iceLinearScan),
  ("vp8-16383x16383-key-frame", { try forgedKeyFrame(limit: .default) }),
  (
    "vp8-16383x16383-key-frame-unbounded",
    { try forgedKeyFrame(limit: VP8PictureLimit(maximumDimension: 16383, maximumPixels: .max)) }
  ),
  ("dtls-certificate-renewal", certificateRenewal),
  ("rtcp-1000-compounds-lenient", { try rtcpCompounds(lenient: true) }),
  ("rtcp-1000-compounds-strict", { try rtcpCompounds(lenient: false) }),
  (
    "ws-silent-client-256MiB",
    { try silentClient(outbox: WebSocketServer.Configuration.defaultMaximumOutboxSize) }
  ),
  ("ws-silent-client-256MiB-unbounded", { try silentClient(outbox: .max) }),
  (
    "ws-64MiB-message",
    { try bigMessage(limit: WebSocketServer.Configuration.defaultMaximumMessageSize) }
  ),
  ("ws-64MiB-message-unbounded", { try bigMessage(limit: 64 << 20) }),
]

let arguments = CommandLine.arguments
if arguments.count > 1 {
  guard let chosen = cases.first(where: { $0.name == arguments[1] }) else {
    print("unknown case \(arguments[1]); cases: \(cases.map(\.name).joined(separator: " "))")
    exit(2)
  }
  let baseline = peakResidentKiB()
  let start = seconds()
  let result = try chosen.run()
  let elapsed = seconds() - start
  let grown = Double(peakResidentKiB() - baseline) / 1024
  print(
    chosen.name.padding(toLength: 38, withPad: " ", startingAt: 0)
      + String(format: "%9.1f ms  peak +%7.1f MiB  ", elapsed * 1000, grown) + result)
} else {
  for item in cases {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = [item.name]
    try process.run()
    process.waitUntilExit()
  }
}
