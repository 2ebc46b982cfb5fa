// SFU relay capacity of the local server: one 1.5 Mbit/s VP8-like publisher → N players on
// 127.0.0.1, N stepped up (10, 25, 50, 100, ...) until ≥ 1 % of the packets are lost or late.
// Run: `swift run -c release RelayBench [--steps 200,300] [--player-loops 2]
// [--snapshots on|off|both]`.
//
// The relay (`LocalServerRelayEngine`, driven through its `LocalServerMediaEngine` API with real
// SDP offers, no WebSocket) and the publisher run in this process; the N player
// `PeerConnection`s (ICE, DTLS, SRTP decrypt) run in a child process (this binary with
// `--players`), so the CPU figure of this process is the relay's own (plus one publisher
// sending 156 packets/s) and the players' decrypt cost is shown apart. Both processes still
// share the machine's cores (and with whatever else runs: the load average is printed).
// Lost = never delivered by a player's `onRTP` (waiting until the count stops moving);
// late = delivered more than 200 ms after the publisher sent it (its CLOCK_MONOTONIC send
// instant travels in the payload), as good as lost for live video.
// `--snapshots` sets the relay's snapshot source (`Configuration.snapshots`, default on, as the
// server runs); `both` runs the steps without it and then with it, and prints the relay's CPU
// of each side by side: the snapshot source's cost is one payload copy and frame assembly per
// published video packet, whatever the number of players.
import BenchSupport
import Dispatch
import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia

// MARK: - Shared helpers

/// Reads `\n`-terminated lines from a file descriptor (one reader per descriptor, one thread).
final class LineReader {
  private let fd: Int32
  private var buffer: [UInt8] = []

  init(fd: Int32) { self.fd = fd }

  func next() -> String? {
    while true {
      if let end = buffer.firstIndex(of: 0x0A) {
        let line = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeSubrange(...end)
        return line
      }
      var chunk = [UInt8](repeating: 0, count: 65_536)
      let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else { return nil }
      buffer += chunk[..<count]
    }
  }
}

func writeLine(_ fd: Int32, _ line: String) {
  let bytes = Array((line + "\n").utf8)
  var offset = 0
  while offset < bytes.count {
    let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written > 0 else { return }
    offset += written
  }
}

func encode(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

func decode(_ text: Substring) -> String? {
  Data(base64Encoded: String(text)).map { String(decoding: $0, as: UTF8.self) }
}

/// Datagrams the UDP sockets of a process dropped so far, e.g. for a full receive buffer
/// (`/proc/net/udp` rows whose inode is one of `/proc/PID/fd`'s sockets).
func socketDrops(pid: Int32) -> Int {
  let directory = "/proc/\(pid)/fd"
  var inodes = Set<Substring>()
  for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
    guard
      let target = try? FileManager.default.destinationOfSymbolicLink(
        atPath: directory + "/" + name),
      target.hasPrefix("socket:[")
    else { continue }
    inodes.insert(Substring(target.dropFirst(8).dropLast()))
  }
  guard let table = try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8) else {
    return 0
  }
  var drops = 0
  for row in table.split(separator: "\n").dropFirst() {
    let fields = row.split(separator: " ")
    guard fields.count > 12, inodes.contains(fields[9]) else { continue }
    drops += Int(fields[12]) ?? 0
  }
  return drops
}

/// The 1-minute load average (`/proc/loadavg`): other work competing for the cores.
func loadAverage() -> String {
  let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
  return text.split(separator: " ").first.map(String.init) ?? "?"
}

/// `--player-loops K`: event loops the players share (default 2, one per core).
func playerLoopCount() -> Int {
  guard let index = CommandLine.arguments.firstIndex(of: "--player-loops"),
    index + 1 < CommandLine.arguments.count, let count = Int(CommandLine.arguments[index + 1])
  else { return 2 }
  return max(1, count)
}

// MARK: - Player process

/// One player's counters, written on its loop, read by the command thread.
final class PlayerCounter: Sendable {
  let received = Atomic<Int>(0)
  /// Packets that arrived more than `lateAfterNanoseconds` after the publisher sent them.
  let late = Atomic<Int>(0)
  let maximumLatencyNanoseconds = Atomic<Int>(0)
  let connected = Atomic<Bool>(false)
}

/// A packet later than this is as good as lost for live video (a jitter buffer has given up).
let lateAfterNanoseconds = 200_000_000
/// Where the publisher writes its send instant (8 bytes, big-endian) inside the payload.
let sendTimeOffset = 40

/// CLOCK_MONOTONIC in ns: one clock for both processes, so send and receive instants compare.
func monotonicNanoseconds() -> Int {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return time.tv_sec * 1_000_000_000 + time.tv_nsec
}

/// `--snapshots on|off|both`: which relay configurations to measure (default `on`).
func snapshotModes() -> [Bool] {
  guard let index = CommandLine.arguments.firstIndex(of: "--snapshots"),
    index + 1 < CommandLine.arguments.count
  else { return [true] }
  switch CommandLine.arguments[index + 1] {
  case "off": return [false]
  case "both": return [false, true]
  default: return [true]
  }
}

/// One step's figures, for the side-by-side comparison of `--snapshots both`.
struct StepResult {
  var players: Int
  var relayCPUPercent: Double
  /// Relay CPU per packet the publisher sent, µs (the snapshot source's work is per sent packet).
  var relayMicrosecondsPerSentPacket: Double
  var relayMicrosecondsPerDeliveredPacket: Double
  var lossAndLatePercent: Double
  var load: String
}

/// `--players`: creates player PeerConnections on request and counts what they receive.
/// Commands on stdin, replies on stdout, one line each:
/// `OFFERS k` → k × `OFFER index base64-sdp`, then `END`; `ANSWER index base64-sdp`;
/// `RESET` → `OK`; `COUNT` → `COUNT connected total minimum`; `QUIT`.
func runPlayers() {
  let loops = (0..<playerLoopCount()).map { EventLoop(label: "relaybench.players-\($0)") }
  var players: [PeerConnection] = []
  var counters: [PlayerCounter] = []
  let input = LineReader(fd: 0)
  while let line = input.next() {
    let parts = line.split(separator: " ")
    guard let command = parts.first else { continue }
    switch command {
    case "OFFERS":
      let count = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
      for _ in 0..<count {
        let index = players.count
        let loop = loops[index % loops.count]
        let connection = PeerConnection(configuration: .loopback, loop: loop)
        let counter = PlayerCounter()
        let offer = try? loop.submit { () throws -> String in
          connection.onRTP = { _, packet in
            counter.received.add(1, ordering: .relaxed)
            guard packet.count >= sendTimeOffset + 8 else { return }
            var sent = 0
            for byte in 0..<8 { sent = sent << 8 | Int(packet[sendTimeOffset + byte]) }
            let latency = monotonicNanoseconds() - sent
            if latency > lateAfterNanoseconds { counter.late.add(1, ordering: .relaxed) }
            if latency > counter.maximumLatencyNanoseconds.load(ordering: .relaxed) {
              counter.maximumLatencyNanoseconds.store(latency, ordering: .relaxed)
            }
          }
          connection.onEvent = { event in
            if case .stateChanged(.connected) = event {
              counter.connected.store(true, ordering: .relaxed)
            }
          }
          return try connection.createOffer(
            audio: nil,
            video: .init(
              direction: .recvonly, ssrc: UInt32(0x1000 + index), trackId: "v",
              vp8PayloadType: 96),
            mode: .play)
        }
        players.append(connection)
        counters.append(counter)
        writeLine(1, "OFFER \(index) \(encode(offer ?? ""))")
      }
      writeLine(1, "END")
    case "ANSWER":
      guard parts.count == 3, let index = Int(parts[1]), players.indices.contains(index),
        let sdp = decode(parts[2])
      else { continue }
      let connection = players[index]
      connection.loop.execute {
        do {
          try connection.setRemoteDescription(answer: sdp)
        } catch {
          FileHandle.standardError.write(Data("player \(index): \(error)\n".utf8))
        }
      }
    case "RESET":
      for counter in counters {
        counter.received.store(0, ordering: .relaxed)
        counter.late.store(0, ordering: .relaxed)
        counter.maximumLatencyNanoseconds.store(0, ordering: .relaxed)
      }
      writeLine(1, "OK")
    case "COUNT":
      let values = counters.map { $0.received.load(ordering: .relaxed) }
      let connected = counters.filter { $0.connected.load(ordering: .relaxed) }.count
      let late = counters.map { $0.late.load(ordering: .relaxed) }.reduce(0, +)
      let maximum = counters.map { $0.maximumLatencyNanoseconds.load(ordering: .relaxed) }.max()
      writeLine(
        1,
        "COUNT \(connected) \(values.reduce(0, +)) \(values.min() ?? 0) \(late) \(maximum ?? 0)")
    case "QUIT":
      for (index, connection) in players.enumerated() {
        loops[index % loops.count].submit { connection.close() }
      }
      return
    default: continue
    }
  }
}

// MARK: - Publisher

/// Sends synthetic VP8 RTP at 1.5 Mbit/s: 30 frames/s of 5 or 6 packets (156/s average) of
/// 1200 bytes, a key frame every 60 frames. State touched only on `loop`
/// (`@unchecked Sendable`), except `done`/`sent` which are read after `done` is signalled.
final class Publisher: @unchecked Sendable {
  static let ssrc: UInt32 = 0x5EED_0001
  static let packetSize = 1200
  let loop: EventLoop
  let connection: PeerConnection
  let done = DispatchSemaphore(value: 0)
  private(set) var sent = 0
  private var sequenceNumber: UInt16 = 1000
  private var timestamp: UInt32 = 90_000
  private var frameIndex = 0
  private var packet = [UInt8](repeating: 0xA5, count: packetSize)

  init(loop: EventLoop) {
    self.loop = loop
    connection = PeerConnection(configuration: .loopback, loop: loop)
  }

  /// Sends frames for `seconds`, then signals `done`; `sent` counts this run only.
  func run(seconds: Double) {
    loop.execute { [self] in
      sent = 0
      let start = loop.now()
      let frames = Int(seconds * 30)
      for frame in 0..<frames {
        loop.schedule(at: start + .microseconds(Int64(frame) * 33_333)) { [self] in
          sendFrame()
          if frame == frames - 1 { done.signal() }
        }
      }
    }
  }

  /// Packets in frame `frameIndex` of the stream: 5, or 6 every fifth frame.
  static func packetCount(frameIndex: Int) -> Int { frameIndex % 5 == 4 ? 6 : 5 }

  /// Writes packet `index` of `count` of frame `frameIndex` into `packet` (RTP header and VP8
  /// descriptor; the rest of the payload is left as it is).
  static func writeHeaders(
    _ packet: inout [UInt8], frameIndex: Int, index: Int, count: Int, sequenceNumber: UInt16,
    timestamp: UInt32
  ) {
    let keyFrame = frameIndex % 60 == 0
    packet[0] = 0x80
    packet[1] = (index == count - 1 ? 0x80 : 0) | 96
    packet[2] = UInt8(sequenceNumber >> 8)
    packet[3] = UInt8(sequenceNumber & 0xFF)
    for byte in 0..<4 {
      packet[4 + byte] = UInt8((timestamp >> (24 - 8 * UInt32(byte))) & 0xFF)
      packet[8 + byte] = UInt8((ssrc >> (24 - 8 * UInt32(byte))) & 0xFF)
    }
    // VP8 payload descriptor (RFC 7741 §4.2): S=1, PID 0 on a frame's first packet.
    packet[12] = index == 0 ? 0x10 : 0x00
    if index == 0 {
      // VP8 payload header (RFC 7741 §4.3, RFC 6386 §9.1): P bit, show_frame, size 1000.
      let tag: UInt32 = (keyFrame ? 0 : 1) | 1 << 4 | 1000 << 5
      packet[13] = UInt8(tag & 0xFF)
      packet[14] = UInt8((tag >> 8) & 0xFF)
      packet[15] = UInt8((tag >> 16) & 0xFF)
      if keyFrame {
        // Start code, then 640×480 (little-endian, no scaling).
        packet.replaceSubrange(16..<23, with: [0x9D, 0x01, 0x2A, 0x80, 0x02, 0xE0, 0x01])
      }
    }
  }

  private func sendFrame() {
    let count = Self.packetCount(frameIndex: frameIndex)
    for index in 0..<count {
      Self.writeHeaders(
        &packet, frameIndex: frameIndex, index: index, count: count,
        sequenceNumber: sequenceNumber, timestamp: timestamp)
      let now = monotonicNanoseconds()
      for byte in 0..<8 {
        packet[sendTimeOffset + byte] = UInt8((now >> (56 - 8 * byte)) & 0xFF)
      }
      if (try? connection.sendRTP(packet)) != nil { sent += 1 }
      sequenceNumber &+= 1
    }
    timestamp &+= 3000
    frameIndex += 1
  }
}

/// The snapshot source alone (`RelaySnapshotSource`, what the relay does per published video
/// packet when `Configuration.snapshots` is on) fed `seconds` of the publisher's stream as fast
/// as it takes it: µs per packet, best of `rounds`. The relay's own figures cannot show it:
/// it is per sent packet, while the relay's CPU grows with the players.
func snapshotSourceMicrosecondsPerPacket(seconds: Int = 60, rounds: Int = 5) -> Double {
  var packets: [[UInt8]] = []
  var packet = [UInt8](repeating: 0xA5, count: Publisher.packetSize)
  var sequenceNumber: UInt16 = 1000
  var timestamp: UInt32 = 90_000
  for frameIndex in 0..<(seconds * 30) {
    let count = Publisher.packetCount(frameIndex: frameIndex)
    for index in 0..<count {
      Publisher.writeHeaders(
        &packet, frameIndex: frameIndex, index: index, count: count,
        sequenceNumber: sequenceNumber, timestamp: timestamp)
      packets.append(packet)
      sequenceNumber &+= 1
    }
    timestamp &+= 3000
  }
  var best = Double.infinity
  var keyFrames = 0
  for _ in 0..<rounds {
    let source = RelaySnapshotSource()
    let clock = ContinuousClock.now
    for bytes in packets {
      // What the relay hands it: the parsed header's fields and a copy of the payload.
      let sequence = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
      let stamp = bytes[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
      if source.addVideo(
        sequenceNumber: sequence, timestamp: stamp, marker: bytes[1] & 0x80 != 0,
        payload: Array(bytes[12...]))
      {
        keyFrames += 1
      }
    }
    // Wall clock: this loop is one thread with nothing to wait for, and the process CPU clock
    // ticks too coarsely for a run this short; the best round is the least disturbed.
    let wall = ContinuousClock.now - clock
    let elapsed = wall.seconds
    best = min(best, elapsed * 1e6 / Double(packets.count))
    precondition(source.hasKeyFrame, "the synthetic stream's key frames reach the source")
  }
  precondition(keyFrames == rounds * (seconds * 30 / 60), "every key frame was seen")
  return best
}

// MARK: - Relay side

/// The engine, the player process and the step loop; used from the main thread only.
final class RelayBench {
  let engine: LocalServerRelayEngine
  let wake = DispatchSemaphore(value: 0)
  var events: [LocalServerMediaEvent] = []
  let child = Process()
  let toChild = Pipe()
  let fromChild = Pipe()
  let replies: LineReader
  let publisher = Publisher(loop: EventLoop(label: "relaybench.publisher"))
  var playerCount = 0

  let snapshots: Bool

  init(snapshots: Bool) throws {
    self.snapshots = snapshots
    var configuration = LocalServerRelayEngine.Configuration(
      recordsDirectory: FileManager.default.temporaryDirectory.path)
    configuration.snapshots = snapshots
    engine = LocalServerRelayEngine(configuration: configuration)
    let semaphore = wake
    engine.attach { semaphore.signal() }
    child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    child.arguments = ["--players", "--player-loops", "\(playerLoopCount())"]
    child.standardInput = toChild
    child.standardOutput = fromChild
    replies = LineReader(fd: fromChild.fileHandleForReading.fileDescriptor)
    try child.run()
  }

  /// Collects engine events until `condition` holds or `timeout` seconds pass.
  func waitEvents(timeout: Double, until condition: ([LocalServerMediaEvent]) -> Bool) -> Bool {
    let deadline = DispatchTime.now() + timeout
    while true {
      events += engine.takeEvents()
      if condition(events) { return true }
      if wake.wait(timeout: deadline) == .timedOut {
        events += engine.takeEvents()
        return condition(events)
      }
    }
  }

  func answer(for id: String) -> String? {
    for event in events {
      if case .answerReady(id, let sdp) = event { return sdp }
    }
    return nil
  }

  func connectPublisher() throws -> Bool {
    let connection = publisher.connection
    let offer = try publisher.loop.submit {
      try connection.createOffer(
        audio: nil, video: .init(ssrc: Publisher.ssrc, trackId: "v"), mode: .publish)
    }
    engine.perform(
      .createPublisher(
        .init(
          mediaSessionId: "publisher", streamName: "bench", offerSDP: offer, record: false,
          hasAudio: false, hasVideo: true, minBitrate: 0, maxBitrate: 0)))
    guard waitEvents(timeout: 10, until: { _ in answer(for: "publisher") != nil }),
      let sdp = answer(for: "publisher")
    else { return false }
    try publisher.loop.submit { try connection.setRemoteDescription(answer: sdp) }
    return waitEvents(timeout: 10) { events in
      events.contains {
        $0 == .connected(mediaSessionId: "publisher", codecs: .init(videoCodec: "VP8"))
      }
    }
  }

  /// Adds players up to `total`; returns how many the relay reports connected.
  func addPlayers(upTo total: Int) -> Int {
    let adding = total - playerCount
    writeLine(toChild.fileHandleForWriting.fileDescriptor, "OFFERS \(adding)")
    var offers: [(Int, String)] = []
    while let line = replies.next(), line != "END" {
      let parts = line.split(separator: " ")
      if parts.count == 3, parts[0] == "OFFER", let index = Int(parts[1]),
        let sdp = decode(parts[2])
      {
        offers.append((index, sdp))
      }
    }
    for (index, sdp) in offers {
      engine.perform(
        .createPlayer(
          .init(
            mediaSessionId: "player-\(index)", streamName: "bench",
            sourceMediaSessionId: "publisher", offerSDP: sdp)))
    }
    let ids = Set(offers.map { "player-\($0.0)" })
    _ = waitEvents(timeout: 60) { events in
      events.filter {
        if case .answerReady(let id, _) = $0 { return ids.contains(id) }
        if case .failed(let id, _) = $0 { return ids.contains(id) }
        return false
      }.count >= ids.count
    }
    for (index, _) in offers {
      guard let sdp = answer(for: "player-\(index)") else { continue }
      writeLine(toChild.fileHandleForWriting.fileDescriptor, "ANSWER \(index) \(encode(sdp))")
    }
    playerCount = total
    _ = waitEvents(timeout: 60) { events in connectedPlayers(events) >= total }
    return connectedPlayers(events)
  }

  func connectedPlayers(_ events: [LocalServerMediaEvent]) -> Int {
    events.filter {
      if case .connected(let id, _) = $0 { return id.hasPrefix("player-") }
      return false
    }.count
  }

  func childCommand(_ command: String) -> [Substring] {
    writeLine(toChild.fileHandleForWriting.fileDescriptor, command)
    return replies.next()?.split(separator: " ") ?? []
  }

  /// `steps`: player counts to measure, ascending.
  @discardableResult
  func run(steps: [Int]) throws -> [StepResult] {
    guard try connectPublisher() else {
      print("publisher did not connect")
      return []
    }
    var results: [StepResult] = []
    let seconds = 5.0
    let profile = publisher.loop.submit { publisher.connection.stats.protectionProfile }
    let profileName = profile.map { String(describing: $0) } ?? "?"
    print(
      "one publisher, 1200-byte VP8 RTP, 156 packets/s (1.5 Mbit/s), \(Int(seconds)) s per step;"
        + " players in child process \(child.processIdentifier)"
        + " (\(playerLoopCount()) event loops); SRTP profile \(profileName);"
        + " snapshot source \(snapshots ? "on" : "off")")
    print(
      "    N  connected  setup s  expected  received  lost %  late % (>200 ms)  max latency ms"
        + "  relay CPU %  players CPU %  relay µs/packet  socket drops relay/players  load")
    var best = 0
    for target in steps {
      let setupStart = Date()
      let connected = addPlayers(upTo: target)
      let setup = Date().timeIntervalSince(setupStart)
      _ = childCommand("RESET")
      let selfStart = cpuSeconds(pid: getpid())
      let childStart = cpuSeconds(pid: child.processIdentifier)
      let relayDropsStart = socketDrops(pid: getpid())
      let playerDropsStart = socketDrops(pid: child.processIdentifier)
      let wallStart = Date()
      publisher.run(seconds: seconds)
      publisher.done.wait()
      let sent = publisher.loop.submit { publisher.sent }
      let wall = Date().timeIntervalSince(wallStart)
      let relaySeconds = cpuSeconds(pid: getpid()) - selfStart
      let playersSeconds = cpuSeconds(pid: child.processIdentifier) - childStart
      // Wait for stragglers until the count stops moving for 1 s (at most 15 s): what arrives
      // is late, not lost.
      var reply: [Substring] = []
      for _ in 0..<15 {
        Thread.sleep(forTimeInterval: 1)
        let next = childCommand("COUNT")
        if next == reply { break }
        reply = next
      }
      let relayDrops = socketDrops(pid: getpid()) - relayDropsStart
      let playerDrops = socketDrops(pid: child.processIdentifier) - playerDropsStart
      let values = reply.dropFirst().map { Int($0) ?? 0 }
      let received = values.count == 5 ? values[1] : 0
      let late = values.count == 5 ? values[3] : 0
      let maximumLatency = values.count == 5 ? Double(values[4]) / 1e6 : 0
      let expected = sent * target
      let lost = expected > 0 ? Double(expected - received) / Double(expected) * 100 : 100
      let latePercent = expected > 0 ? Double(late) / Double(expected) * 100 : 0
      print(
        String(
          format:
            "%5d  %9d  %7.1f  %8d  %8d  %6.3f  %17.3f  %14.1f  %11.1f  %13.1f  %15.1f  %12d/%d  %@",
          target, connected, setup, expected, received, lost, latePercent, maximumLatency,
          relaySeconds / wall * 100, playersSeconds / wall * 100,
          relaySeconds * 1e6 / Double(max(1, expected)), relayDrops, playerDrops, loadAverage()))
      results.append(
        StepResult(
          players: target, relayCPUPercent: relaySeconds / wall * 100,
          relayMicrosecondsPerSentPacket: relaySeconds * 1e6 / Double(max(1, sent)),
          relayMicrosecondsPerDeliveredPacket: relaySeconds * 1e6 / Double(max(1, expected)),
          lossAndLatePercent: lost + latePercent, load: loadAverage()))
      _ = waitEvents(timeout: 0) { _ in false }
      let failures = events.filter {
        if case .failed = $0 { return true }
        return false
      }
      if !failures.isEmpty { print("       relay reported \(failures.count) failed connections") }
      if lost + latePercent < 1, connected == target { best = target } else { break }
      if setup > 60 { break }
    }
    print(
      "largest N with < 1 % of packets lost or later than 200 ms: \(best)"
        + " (machine load average now: \(loadAverage()))")
    writeLine(toChild.fileHandleForWriting.fileDescriptor, "QUIT")
    child.waitUntilExit()
    let connection = publisher.connection
    publisher.loop.submit { connection.close() }
    engine.shutdown()
    return results
  }
}

if CommandLine.arguments.contains("--players") {
  runPlayers()
} else {
  do {
    // `--steps 200,250,300` replaces the default ladder.
    var steps = [10, 25, 50, 100, 150, 200, 250, 300, 400, 500, 600, 800, 1000]
    if let index = CommandLine.arguments.firstIndex(of: "--steps"),
      index + 1 < CommandLine.arguments.count
    {
      steps = CommandLine.arguments[index + 1].split(separator: ",").compactMap { Int($0) }
    }
    var runs: [(snapshots: Bool, results: [StepResult])] = []
    for snapshots in snapshotModes() {
      runs.append((snapshots, try RelayBench(snapshots: snapshots).run(steps: steps)))
    }
    if runs.count == 2 {
      let alone = snapshotSourceMicrosecondsPerPacket()
      print(
        String(
          format:
            "snapshot source alone: %.2f µs per published video packet (best of 5 runs of 60 s"
            + " of the stream above, 9360 packets): %.2f ms of CPU a second at 156 packets/s",
          alone,
          alone * 156 / 1000))
      print("snapshot source off → on (relay process CPU; players in their own process):")
      print(
        "    N  relay CPU % off → on  µs per sent packet off → on (Δ)  µs per delivered packet"
          + " off → on  lost+late % off → on  load off/on")
      for off in runs[0].results {
        guard let on = runs[1].results.first(where: { $0.players == off.players }) else {
          continue
        }
        print(
          String(
            format:
              "%5d  %8.1f → %-8.1f  %10.1f → %-8.1f (%+.1f)  %10.2f → %-10.2f  %7.3f → %-7.3f  %@/%@",
            off.players, off.relayCPUPercent, on.relayCPUPercent,
            off.relayMicrosecondsPerSentPacket, on.relayMicrosecondsPerSentPacket,
            on.relayMicrosecondsPerSentPacket - off.relayMicrosecondsPerSentPacket,
            off.relayMicrosecondsPerDeliveredPacket, on.relayMicrosecondsPerDeliveredPacket,
            off.lossAndLatePercent, on.lossAndLatePercent, off.load, on.load))
      }
    }
  } catch {
    print("RelayBench failed: \(error)")
  }
}
