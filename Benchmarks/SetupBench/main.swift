import BenchSupport
// Stream setup through the bundled local server, timed where an app sees it (FPWCSApi2 status
// callbacks, the first decoded frame at the renderer): one publisher (virtual camera 640x360 at
// 30 fps and microphone), then N players in sessions of their own calling `play()` at once on
// its stream. Everything runs in this process on 127.0.0.1. Each round prints the publisher's
// times and a line per player; the first round of the process also pays the process-wide
// set-up (`PeerConnection.prepareSecurity`, started when the first session is created).
// Run: `swift run -c release SetupBench [--players 8] [--rounds 3]`. Under loss, run it in a
// network namespace (`unshare -n`, `ip link set lo up`) whose nftables input hook drops UDP at
// random (`meta l4proto udp numgen random mod 100 < 10 drop`), e.g. with `--players 1
// --rounds 10` for ten setups.
import Dispatch
import FPWCSApi2Swift
import Foundation
import Synchronization
import WCSLocalServer

/// First instants of named events, from any thread.
final class Marks: Sendable {
  private let times = Mutex<[String: ContinuousClock.Instant]>([:])

  func mark(_ name: String) {
    let now = ContinuousClock.now
    times.withLock { if $0[name] == nil { $0[name] = now } }
  }

  func time(_ name: String) -> ContinuousClock.Instant? { times.withLock { $0[name] } }

  /// Waits for every name (or any of `failures`) for up to `timeout` seconds.
  func wait(for names: [String], failures: [String] = [], timeout: Double) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while ContinuousClock.now < deadline {
      let (done, failed) = times.withLock { times in
        (names.allSatisfy { times[$0] != nil }, failures.contains { times[$0] != nil })
      }
      if failed { return false }
      if done { return true }
      usleep(500)
    }
    return false
  }
}

/// Marks its first frame.
final class FirstFrameRenderer: VideoRenderer {
  let marks: Marks
  let name: String

  init(marks: Marks, name: String) {
    self.marks = marks
    self.name = name
  }

  func render(_ frame: VideoFrame) { marks.mark(name) }
}

func milliseconds(_ from: ContinuousClock.Instant?, _ to: ContinuousClock.Instant?) -> String {
  guard let from, let to else { return "    –" }
  return String(format: "%5.1f", from.duration(to: to).milliseconds)
}

func median(_ values: [Double]) -> Double? {
  guard !values.isEmpty else { return nil }
  return values.sorted()[values.count / 2]
}

func value(_ from: ContinuousClock.Instant?, _ to: ContinuousClock.Instant?) -> Double? {
  guard let from, let to else { return nil }
  return from.duration(to: to).milliseconds
}

/// A connected session, or `nil` (reported) when it did not reach ESTABLISHED in 5 s.
func connectedSession(url: String, marks: Marks, name: String) -> FPWCSApi2Session? {
  let options = FPWCSApi2SessionOptions()
  options.urlServer = url
  options.appKey = "defaultApp"
  guard let session = try? FPWCSApi2.createSession(options) else { return nil }
  session.on(.fpwcsSessionStatusEstablished) { _ in marks.mark(name + ".established") }
  session.on(.fpwcsSessionStatusFailed) { _ in marks.mark(name + ".failed") }
  marks.mark(name + ".connect")
  session.connect()
  guard marks.wait(for: [name + ".established"], failures: [name + ".failed"], timeout: 5) else {
    print("\(name): session did not reach ESTABLISHED")
    return nil
  }
  return session
}

struct RoundFigures {
  var publishing: Double?
  var playing: [Double] = []
  var firstFrame: [Double] = []
}

func round(_ index: Int, url: String, players: Int) -> RoundFigures {
  var figures = RoundFigures()
  let marks = Marks()
  let streamName = "setup-\(index)-\(UInt32.random(in: 0...UInt32.max))"
  guard let publisher = connectedSession(url: url, marks: marks, name: "pub") else {
    return figures
  }
  defer { publisher.disconnect() }
  let video = FPWCSApi2VideoConstraints()
  video.minWidth = 640
  video.maxWidth = 640
  video.minHeight = 360
  video.maxHeight = 360
  video.minFrameRate = 30
  video.maxFrameRate = 30
  let constraints = FPWCSApi2MediaConstraints()
  constraints.audio = FPWCSApi2AudioConstraints()
  constraints.video = video
  let publishOptions = FPWCSApi2StreamOptions()
  publishOptions.name = streamName
  publishOptions.constraints = constraints
  guard let stream = try? publisher.createStream(publishOptions) else { return figures }
  stream.on(.fpwcsStreamStatusPublishing) { _ in marks.mark("pub.publishing") }
  stream.on(.fpwcsStreamStatusFailed) { _ in marks.mark("pub.failed") }
  marks.mark("pub.publish")
  guard (try? stream.publish()) != nil,
    marks.wait(for: ["pub.publishing"], failures: ["pub.failed"], timeout: 15)
  else {
    print("round \(index): the stream did not reach PUBLISHING")
    return figures
  }
  figures.publishing = value(marks.time("pub.publish"), marks.time("pub.publishing"))
  print(
    "round \(index): connect → ESTABLISHED \(milliseconds(marks.time("pub.connect"), marks.time("pub.established"))) ms,"
      + " publish() → PUBLISHING \(milliseconds(marks.time("pub.publish"), marks.time("pub.publishing"))) ms"
  )

  // Every player's session first, so the players' play() calls really come together.
  let sessions = (0..<players).compactMap {
    connectedSession(url: url, marks: marks, name: "p\($0)")
  }
  defer { for session in sessions { session.disconnect() } }
  var streams: [FPWCSApi2Stream] = []
  for (player, session) in sessions.enumerated() {
    let options = FPWCSApi2StreamOptions()
    options.name = streamName
    options.display = FirstFrameRenderer(marks: marks, name: "p\(player).frame")
    guard let playStream = try? session.createStream(options) else { continue }
    playStream.on(.fpwcsStreamStatusPlaying) { _ in marks.mark("p\(player).playing") }
    playStream.on(.fpwcsStreamStatusFailed) { _ in marks.mark("p\(player).failed") }
    streams.append(playStream)
  }
  for (player, playStream) in streams.enumerated() {
    marks.mark("p\(player).play")
    if (try? playStream.play()) == nil { marks.mark("p\(player).failed") }
  }
  _ = marks.wait(for: streams.indices.map { "p\($0).frame" }, timeout: 10)
  print("  player  play() → PLAYING  PLAYING → first frame  play() → first frame (ms)")
  for player in streams.indices {
    let play = marks.time("p\(player).play")
    let playing = marks.time("p\(player).playing")
    let frame = marks.time("p\(player).frame")
    print(
      "  \(String(format: "%6d", player))  \(milliseconds(play, playing))            "
        + "\(milliseconds(playing, frame))                  \(milliseconds(play, frame))")
    if let playing = value(play, playing) { figures.playing.append(playing) }
    if let first = value(playing, frame) { figures.firstFrame.append(first) }
  }
  for playStream in streams { try? playStream.stop() }
  return figures
}

let players = option("players", default: 8)
let rounds = option("rounds", default: 3)
var configuration = WCSLocalServer.Configuration()
configuration.wsPort = 0
configuration.httpPort = 0
configuration.recordsDirectory = NSTemporaryDirectory() + "setup-bench-\(getpid())"
configuration.logSink = { _ in }
let server: WCSLocalServer
do {
  server = try WCSLocalServer.start(configuration)
} catch {
  print("SetupBench: the local server did not start: \(error)")
  exit(1)
}
var all: [RoundFigures] = []
for index in 1...rounds { all.append(round(index, url: server.wsURL, players: players)) }
server.stop()

func summary(_ label: String, _ values: [Double], goal: Double) {
  guard let median = median(values), let worst = values.max() else {
    print("\(label): no sample")
    return
  }
  print(
    String(
      format: "%@: median %.1f ms, max %.1f ms over %d (goal on a clean loopback ≤ %.0f ms)",
      label, median, worst,
      values.count, goal))
}
summary("publish() → PUBLISHING", all.compactMap(\.publishing), goal: 40)
summary("play() → PLAYING, every player", all.flatMap(\.playing), goal: 40)
summary("PLAYING → first decoded frame, every player", all.flatMap(\.firstFrame), goal: 100)
