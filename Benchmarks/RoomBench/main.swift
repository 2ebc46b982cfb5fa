// Rooms through the local server's `roomApp` (wcs-rooms-and-calls.md §A.7), SDK participants on
// 127.0.0.1 publishing the virtual camera at 640x360:
//  1. join → first decoded frame of an already-publishing participant (the time a person
//     waits to see the room): from `join` (manager already connected) to the first frame the
//     player renders, with the room's STATE and `playStream` in between;
//  2. rooms of 2, 4 and 8 participants, every participant playing every other: the local
//     server's CPU (it runs in a child process, this binary with `--server`, so its figure is
//     its own), the frames each player decodes per second, and the SDK's memory per played
//     participant (resident memory of this process after the plays minus before, divided by
//     the played streams).
// Both processes share the machine's cores (the load average is printed): at 8 participants
// the SDK side decodes 56 streams and may fall behind the source frame rate, which the decoded
// frames per second show.
// Run: `swift run -c release RoomBench [--sizes 2,4,8] [--fps 15] [--seconds 5] [--joins 5]`.
import BenchSupport
import Dispatch
import FPWCSApi2Swift
import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia

/// Resident memory of this process in bytes (`VmRSS` of `/proc/self/status`).
func residentBytes() -> Int {
  guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
    let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
    let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
  else { return 0 }
  return kib * 1024
}

func loadAverage() -> String {
  (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ")
    .prefix(3).joined(separator: " ") ?? "?"
}

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func waitUntil(_ timeout: Double, _ condition: () -> Bool) async -> Bool {
  let deadline = now() + timeout
  while !condition() {
    if now() > deadline { return false }
    try? await Task.sleep(nanoseconds: 10_000_000)
  }
  return true
}

// MARK: - The server child

if CommandLine.arguments.dropFirst().first == "--server" {
  var configuration = WCSLocalServer.Configuration()
  configuration.wsPort = 0
  configuration.httpPort = 0
  configuration.recordsDirectory = NSTemporaryDirectory() + "room-bench-\(getpid())"
  configuration.logSink = { _ in }
  do {
    let server = try WCSLocalServer.start(configuration)
    FileHandle.standardOutput.write(Data("ws: \(server.wsURL)\n".utf8))
    // Runs until the parent closes standard input.
    while readLine() != nil {}
    server.stop()
    exit(0)
  } catch {
    FileHandle.standardError.write(Data("RoomBench --server: \(error)\n".utf8))
    exit(1)
  }
}

// MARK: - Participants

/// One SDK participant: publishes the virtual camera, counts what it decodes per publisher.
final class Member: Sendable {
  let login: String
  let manager: FPWCSApi2RoomManager
  let room: FPWCSApi2Room
  private let counts = Mutex<[String: Int]>([:])

  init(_ login: String, room name: String, url: String) async throws {
    self.login = login
    let options = FPWCSApi2RoomManagerOptions()
    options.urlServer = url
    options.username = login
    options.bandwidthSampleInterval = 0
    manager = try await FPWCSApi2.connectRoomManager(options)
    let roomOptions = FPWCSApi2RoomOptions()
    roomOptions.name = name
    room = try await manager.join(roomOptions)
  }

  /// Connects only; `join(room:)` is timed by the caller.
  static func connect(_ login: String, url: String) async throws -> FPWCSApi2RoomManager {
    let options = FPWCSApi2RoomManagerOptions()
    options.urlServer = url
    options.username = login
    options.bandwidthSampleInterval = 0
    return try await FPWCSApi2.connectRoomManager(options)
  }

  func publish(fps: Int) throws -> FPWCSApi2Stream {
    try room.publish(nil, withOptions: Self.cameraOptions(fps: fps))
  }

  static func cameraOptions(fps: Int) -> FPWCSApi2StreamOptions {
    let video = FPWCSApi2VideoConstraints()
    video.deviceID = "virtual:camera"
    video.minWidth = 640
    video.maxWidth = 640
    video.minHeight = 360
    video.maxHeight = 360
    video.maxFrameRate = fps
    let constraints = FPWCSApi2MediaConstraints()
    constraints.video = video
    let options = FPWCSApi2StreamOptions()
    options.constraints = constraints
    return options
  }

  func playEveryone() throws {
    for (login, participant) in room.getParticipants() {
      let renderer = VideoFrameCallbackRenderer { [weak self] _ in
        self?.counts.withLock { $0[login, default: 0] += 1 }
      }
      try participant.play(renderer)
    }
  }

  func frames() -> [String: Int] { counts.withLock { $0 } }

  func leave() async {
    try? await room.leave()
    manager.disconnect()
  }
}

// MARK: - Main

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String, _ fallback: String) -> String {
  guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else {
    return fallback
  }
  return arguments[index + 1]
}
let sizes = option("sizes", "2,4,8").split(separator: ",").compactMap { Int($0) }
let fps = Int(option("fps", "15")) ?? 15
let seconds = Double(option("seconds", "5")) ?? 5
let joins = Int(option("joins", "5")) ?? 5

func run() async throws {
  let child = Process()
  child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
  child.arguments = ["--server"]
  let input = Pipe()
  let output = Pipe()
  child.standardInput = input
  child.standardOutput = output
  try child.run()
  defer {
    try? input.fileHandleForWriting.close()
    child.waitUntilExit()
  }
  var buffer = Data()
  while !buffer.contains(0x0A) {
    let chunk = output.fileHandleForReading.availableData
    guard !chunk.isEmpty else { throw CocoaError(.fileReadUnknown) }
    buffer.append(chunk)
  }
  let url = String(decoding: buffer, as: UTF8.self).split(separator: "\n")[0]
    .replacingOccurrences(of: "ws: ", with: "")
  print("RoomBench: local server pid \(child.processIdentifier) at \(url); 640x360 at \(fps) fps")
  print(
    "load average before: \(loadAverage()) on \(ProcessInfo.processInfo.activeProcessorCount) cores"
  )

  // 1. Join → first decoded frame of an already-publishing participant.
  let host = try await Member("host", room: "join-bench", url: url)
  let hostStream = try host.publish(fps: fps)
  guard await waitUntil(10, { hostStream.getStatus() == .fpwcsStreamStatusPublishing }) else {
    print("the host never published")
    return
  }
  try? await Task.sleep(nanoseconds: 1_000_000_000)
  // Back to back, a joiner's key-frame request can fall within the relay's one-per-second
  // limit of the previous one (KeyFrameRequestLimiter) and wait for the next key frame.
  for (label, gap) in [("1.5 s apart", 1.5), ("back to back", 0.0)] {
    var times: [Double] = []
    for index in 0..<joins {
      try? await Task.sleep(nanoseconds: UInt64(gap * 1e9))
      let manager = try await Member.connect("viewer-\(times.count)-\(index)-\(gap)", url: url)
      let firstFrame = Mutex<Double?>(nil)
      let options = FPWCSApi2RoomOptions()
      options.name = "join-bench"
      let start = now()
      let room = try await manager.join(options)
      let renderer = VideoFrameCallbackRenderer { _ in
        firstFrame.withLock { if $0 == nil { $0 = now() } }
      }
      try room.getParticipants()["host"]?.play(renderer)
      if await waitUntil(10, { firstFrame.withLock { $0 } != nil }),
        let frame = firstFrame.withLock({ $0 })
      {
        times.append((frame - start) * 1000)
      }
      try? await room.leave()
      manager.disconnect()
    }
    times.sort()
    let median = times.isEmpty ? 0 : times[times.count / 2]
    print(
      "join → first decoded frame, joins \(label): "
        + String(
          format: "median %.1f ms, min %.1f, max %.1f (%d)", median, times.first ?? 0,
          times.last ?? 0, times.count))
  }
  await host.leave()

  // 2. Rooms of N, everyone playing everyone.
  print("participants  played  server CPU  decoded fps per stream (avg/min)  SDK memory per played")
  for size in sizes {
    let room = "room-\(size)"
    var members: [Member] = []
    for index in 0..<size { members.append(try await Member("p\(index)", room: room, url: url)) }
    var streams: [FPWCSApi2Stream] = []
    for member in members { streams.append(try member.publish(fps: fps)) }
    _ = await waitUntil(15) {
      streams.allSatisfy { $0.getStatus() == .fpwcsStreamStatusPublishing }
    }
    _ = await waitUntil(10) { members.allSatisfy { $0.room.getParticipants().count == size - 1 } }
    try? await Task.sleep(nanoseconds: 500_000_000)
    let before = residentBytes()
    for member in members { try member.playEveryone() }
    let played = size * (size - 1)
    let allPlaying = await waitUntil(30) {
      members.allSatisfy { member in
        let frames = member.frames()
        return frames.count == size - 1 && frames.values.allSatisfy { $0 > 0 }
      }
    }
    if !allPlaying { print("  (not every player decoded a frame within 30 s)") }
    try? await Task.sleep(nanoseconds: 2_000_000_000)
    let after = residentBytes()
    let startFrames = members.map { $0.frames() }
    let startCPU = cpuSeconds(pid: child.processIdentifier)
    let start = now()
    try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
    let wall = now() - start
    let serverCPU = (cpuSeconds(pid: child.processIdentifier) - startCPU) / wall * 100
    var rates: [Double] = []
    for (member, first) in zip(members, startFrames) {
      for (login, count) in member.frames() {
        rates.append(Double(count - (first[login] ?? 0)) / wall)
      }
    }
    let average = rates.isEmpty ? 0 : rates.reduce(0, +) / Double(rates.count)
    print(
      String(
        format: "%12d  %6d  %8.1f %%  %14.1f / %.1f (source %d)  %10.1f MiB",
        size, played, serverCPU, average, rates.min() ?? 0, fps,
        Double(max(after - before, 0)) / Double(played) / 1_048_576))
    for member in members { await member.leave() }
    try? await Task.sleep(nanoseconds: 1_000_000_000)
  }
  print("load average after: \(loadAverage())")
}

do {
  try await run()
} catch {
  print("RoomBench: \(error)")
  exit(1)
}
