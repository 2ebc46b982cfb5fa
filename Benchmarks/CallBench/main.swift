// SIP call figures through the local server's WebRTC–SIP gateway, everything on 127.0.0.1:
//  1. the bridge core's CPU per call (Opus ↔ PCMU transcoding, and Opus pass-through), one
//     call-second of audio each way per call, at 10 and 50 calls, on one thread;
//  2. call setup (`call()` → ESTABLISHED) against an auto-answering Debian baresip;
//  3. `--calls N` concurrent calls, each to a baresip of its own: this process's CPU (the SDK
//     sessions' Opus encode/decode included) and the relay loop thread's, per call.
// `--onsets [--trials 200]` instead: the delay the bridge core adds to a tone's onset, each
// way, transcoding and pass-through (ToneOnset.swift), median and p95.
// Run: `swift run -c release CallBench [--rounds 10] [--calls 10] [--seconds 10]`.
// Parts 2 and 3 are skipped without /usr/bin/baresip (`scripts/install-deps.sh test`).
import BenchSupport
import FPWCSApi2Swift
import Foundation
import Synchronization
import TestSupport
import WCSCodecs
import WCSLocalServer
import WCSMedia
import WCSProtocols

/// One line to standard output, unbuffered (a crash loses nothing printed before).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func option(_ name: String, _ fallback: Int) -> Int {
  let arguments = CommandLine.arguments
  guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count,
    let value = Int(arguments[index + 1]), value > 0
  else { return fallback }
  return value
}

func packet(_ payload: [UInt8], pt: UInt8, sequence: Int, timestamp: Int) -> [UInt8] {
  let header = RTPHeader(
    payloadType: pt, sequenceNumber: UInt16(truncatingIfNeeded: sequence),
    timestamp: UInt32(truncatingIfNeeded: timestamp), ssrc: 0x5157)
  return (try? RTPPacket(header: header, payload: payload).serialized()) ?? []
}

// MARK: 1. bridge core

/// One second of a 440 Hz tone as 50 Opus packets and as 50 PCMU packets.
func toneSecond() throws -> (opus: [[UInt8]], pcmu: [[UInt8]]) {
  let encoder = try OpusEncoder()
  var opus: [[UInt8]] = []
  var pcmu: [[UInt8]] = []
  for frame in 0..<50 {
    let samples48 = (0..<960).map { index in
      Int16(8000 * sin(2 * Double.pi * 440 * Double(frame * 960 + index) / 48_000))
    }
    opus.append(
      packet(
        try encoder.encode(PCMAudioFrame(samples: samples48, channels: 1)), pt: 111,
        sequence: frame, timestamp: frame * 960))
    let samples8 = stride(from: 0, to: 960, by: 6).map { samples48[$0] }
    pcmu.append(
      packet(G711.encode(samples8, law: .muLaw), pt: 0, sequence: frame, timestamp: frame * 160))
  }
  return (opus, pcmu)
}

func benchBridge(calls: Int, codec: CallMediaBridge.SIPCodec, seconds: Int) throws -> Double {
  let tone = try toneSecond()
  var bridges = try (0..<calls).map { _ in
    var bridge = try CallMediaBridge(webRTCPayloadType: 111, webRTCSSRC: 1, sipSSRC: 2)
    bridge.setSIPCodec(codec)
    return bridge
  }
  let fromSIP: [[UInt8]]
  if case .opus = codec {
    fromSIP = tone.opus.map { bytes in
      var copy = bytes
      copy[1] = 109
      return copy
    }
  } else {
    fromSIP = tone.pcmu
  }
  let start = clockSeconds(CLOCK_THREAD_CPUTIME_ID)
  var sent = 0
  for _ in 0..<seconds {
    for index in 0..<50 {
      for call in bridges.indices {
        if bridges[call].receiveFromWebRTC(tone.opus[index]) != nil { sent += 1 }
        sent += bridges[call].receiveFromSIP(fromSIP[index]).count
      }
    }
  }
  let cpu = clockSeconds(CLOCK_THREAD_CPUTIME_ID) - start
  guard sent >= calls * seconds * 95 else { fatalError("bridge sent \(sent) packets only") }
  return cpu / Double(seconds)
}

if CommandLine.arguments.contains("--onsets") {
  let trials = option("trials", 200)
  say("bridge core, mouth-to-ear delay added (tone onset), \(trials) trials each:")
  for (name, codec) in [
    ("Opus <-> PCMU", CallMediaBridge.SIPCodec.g711(.muLaw)), ("Opus pass-through", .opus(109)),
  ] {
    for direction in [OnsetDirection.webRTCToSIP, .sipToWebRTC] {
      let delays = try onsetDelays(codec: codec, direction: direction, trials: trials)
      say(
        String(
          format: "  %@ %@: median %.2f ms, p95 %.2f ms (min %.2f, max %.2f)",
          name.padding(toLength: 17, withPad: " ", startingAt: 0), direction.description,
          quantile(delays, 0.5), quantile(delays, 0.95), delays.min() ?? 0, delays.max() ?? 0))
    }
  }
  exit(0)
}

say("bridge core, one thread, CPU per second of two-way audio:")
for (name, codec) in [
  ("Opus <-> PCMU", CallMediaBridge.SIPCodec.g711(.muLaw)), ("Opus pass-through", .opus(109)),
] {
  for calls in [10, 50] {
    let cpu = try benchBridge(calls: calls, codec: codec, seconds: 5)
    say(
      String(
        format: "  %@ %3d calls: %6.1f ms CPU/s (%.2f %% of a core per call)",
        name.padding(toLength: 17, withPad: " ", startingAt: 0), calls, cpu * 1000,
        cpu * 100 / Double(calls)))
  }
}

// MARK: 2, 3. real calls through the gateway

func makeCall(_ session: FPWCSApi2Session, _ callee: String) throws -> FPWCSApi2Call {
  let options = FPWCSApi2CallOptions()
  options.callee = callee
  let constraints = FPWCSApi2MediaConstraints()
  let audio = FPWCSApi2AudioConstraints()
  audio.deviceID = NativeMediaDevices.virtualMicrophoneID
  constraints.audio = audio
  options.localConstraints = constraints
  return try session.createCall(options)
}

/// CPU seconds of this process's threads named `prefix`… (Linux keeps 15 characters).
func threadCPUSeconds(named prefix: String) -> Double {
  let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
  var total = 0.0
  for task in tasks {
    guard
      let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
      name.hasPrefix(prefix),
      let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { continue }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12])
    else { continue }
    total += (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }
  return total
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

guard BaresipProcess.isInstalled else {
  say("baresip is not installed: setup and concurrent calls skipped")
  exit(0)
}
var configuration = WCSLocalServer.Configuration()
configuration.wsPort = 0
configuration.httpPort = 0
configuration.recordsDirectory =
  FileManager.default.temporaryDirectory.appendingPathComponent("callbench-\(getpid())").path
configuration.sipGateway = SIPGatewayConfiguration()
configuration.signaling.calls.maxCallsPerSession = max(8, option("calls", 10))
configuration.logSink = { line in
  if ProcessInfo.processInfo.environment["CALLBENCH_LOG"] != nil {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }
}
let server = try WCSLocalServer.start(configuration)
defer { server.stop() }
let options = FPWCSApi2SessionOptions()
options.urlServer = server.wsURL
options.sipLogin = "1001"
options.sipDomain = "127.0.0.1"
options.sipOutboundProxy = "127.0.0.1"
options.sipPort = 5060
let session = try FPWCSApi2.createSession(options)
session.connect()

let rounds = option("rounds", 10)
let first = try BaresipProcess(user: "bench", answer: true)
defer { first.stop() }
var setups: [Double] = []
for round in 0..<rounds {
  let call = try makeCall(session, "sip:bench@127.0.0.1:\(first.port)")
  let start = ContinuousClock.now
  do {
    try await call.connect()
  } catch {
    say("setup call \(round) failed: \(error)")
    first.stop()
    exit(1)
  }
  setups.append(start.duration(to: .now).milliseconds)
  call.hangup()
  while call.getStatus() != .fpwcsCallStatusFinish { try await Task.sleep(for: .milliseconds(5)) }
  if round == 0 { say(String(format: "setup, first call of the process: %.1f ms", setups[0])) }
}
say(
  String(
    format: "setup call() -> ESTABLISHED, %d calls: median %.1f ms, min %.1f, max %.1f", rounds,
    median(setups), setups.min() ?? 0, setups.max() ?? 0))

let count = option("calls", 10)
let seconds = option("seconds", 10)
var peers = [first]
for _ in 1..<max(1, count) { peers.append(try BaresipProcess(user: "bench", answer: true)) }
defer { for peer in peers.dropFirst() { peer.stop() } }
var calls: [FPWCSApi2Call] = []
for peer in peers.prefix(count) {
  let call = try makeCall(session, "sip:bench@127.0.0.1:\(peer.port)")
  try await call.connect()
  calls.append(call)
}
try await Task.sleep(for: .seconds(1))
let processStart = cpuSeconds(pid: getpid())
let relayStart = threadCPUSeconds(named: "wcs-local-serve")
let before = server.sipLegStatistics()
try await Task.sleep(for: .seconds(seconds))
let after = server.sipLegStatistics()
let process = (cpuSeconds(pid: getpid()) - processStart) / Double(seconds)
let relay = (threadCPUSeconds(named: "wcs-local-serve") - relayStart) / Double(seconds)
let toSIP = zip(after, before).map { $0.packetsToSIP - $1.packetsToSIP }.reduce(0, +)
let toWebRTC = zip(after, before).map { $0.packetsToWebRTC - $1.packetsToWebRTC }.reduce(0, +)
say(
  String(
    format:
      "%d concurrent Opus <-> PCMU calls: process %.1f %% of a core (%.2f %% per call, SDK side included), relay loop %.1f %%; packets/s per call to SIP %.1f, to WebRTC %.1f",
    count, process * 100, process * 100 / Double(count), relay * 100,
    Double(toSIP) / Double(seconds * count), Double(toWebRTC) / Double(seconds * count)))
for call in calls { call.hangup() }
try await Task.sleep(for: .milliseconds(500))
session.disconnect()
