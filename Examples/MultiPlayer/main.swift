// MultiPlayer (the iOS TwoPlayers example's idea, for N): one stream played by N players at
// once in one process — the load and decoder test a robot wants. Without --url it starts the
// local server and publishes a test stream itself. Prints each player's PLAYING / STOPPED /
// FAILED, then per player the frames decoded and the decoder's CPU, and the process's CPU.
// --window opens one window per player; --report writes the run's page (the test stream and
// player1).
import ExampleSupport
import FPWCSApi2Swift
import Foundation
import Synchronization

let usage = """
  usage: MultiPlayer [options]

    --stream NAME        stream to play (default: the --url path; without --url, a test stream
                         this example publishes itself)
    --players N          players of the stream (default 4, 1...32)
    --file PATH          (local server only) publish this file as the test stream
    --duration S         seconds to play once every player is PLAYING (default 5)
    --min-decoded PCT    fail when a player decoded fewer frames than this percent of the best
                         player's (default 80)
    --out DIR            (unused; accepted like the other examples)
  \(ExampleWindow.usage)
  \(RunReport.usage)
  \(ExampleServer.usage)
  """

/// Frames each player rendered, from the media threads.
final class FrameCounts: Sendable {
  private let counts: Mutex<[Int]>

  init(_ players: Int) { counts = Mutex([Int](repeating: 0, count: players)) }

  func count(_ player: Int) { counts.withLock { $0[player] += 1 } }

  var values: [Int] { counts.withLock { $0 } }
}

/// Process CPU seconds so far (user + system), from getrusage(2).
func processCPUSeconds() -> Double {
  var usage = rusage()
  getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
  func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
  return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

func runMultiPlayer(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  var arguments: ExampleArguments
  let count: Int
  let duration: Double
  let minDecoded: Double
  do {
    arguments = try ExampleArguments(argv, booleanFlags: ["server-log", "window"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    count = try arguments.int("players", default: 4)
    duration = try arguments.double("duration", default: 5)
    minDecoded = try arguments.double("min-decoded", default: 80)
    guard (1...32).contains(count) else {
      throw ExampleError.usage("--players wants 1...32, got \(count)")
    }
    guard duration > 0 else {
      throw ExampleError.usage("--duration wants a positive number of seconds, got \(duration)")
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  // The iOS way: the stream name may be the --url path.
  let streamName = arguments.streamNameFromURLPath(of: argv)
  var summary = ExampleSummary()
  guard let (server, _) = ExampleServer.start("MultiPlayer", arguments: arguments, log: log)
  else { return 1 }
  defer { server.stop() }
  guard server.isLocal || streamName != nil else {
    log.plain("MultiPlayer: give --stream NAME (or the name as the --url path)")
    return 64
  }
  let name = streamName ?? "multi-test-\(UInt16.random(in: 0...UInt16.max))"

  guard let session = server.createSession(log: log) else { return 1 }
  let frames = FrameCounts(count)
  let windows = (0..<count).map { index in
    ExampleWindow.open(arguments, title: "MultiPlayer: player\(index + 1) \(name)", log: log)
  }
  defer { windows.forEach { $0?.close() } }
  let report = RunReport.requested(arguments, title: "MultiPlayer: \(name) x \(count)")
  let sourcePictures = LastFrameRenderer()
  func play(_ session: FPWCSApi2Session) {
    for index in 0..<count {
      let label = "player\(index + 1)"
      let options = FPWCSApi2StreamOptions()
      options.name = name
      options.display = ExampleWindow.display(
        VideoFrameCallbackRenderer { _ in frames.count(index) }, and: windows[index])
      do {
        let stream = try session.createStream(options)
        stream.on(.fpwcsStreamStatusPlaying) { log.stream(label, $0) }
        stream.on(.fpwcsStreamStatusStopped) { log.stream(label, $0) }
        stream.on(.fpwcsStreamStatusFailed) { log.stream(label, $0) }
        try stream.play()
      } catch {
        log.streamRefused(label, name, error)
      }
    }
  }
  let started = DispatchSemaphore(value: 0)
  session.on(.fpwcsSessionStatusEstablished) { rSession in
    log.session(rSession)
    guard let rSession else { return }
    guard server.isLocal else {
      play(rSession)
      started.signal()
      return
    }
    ExampleMedia.publishTestStream(
      name, on: rSession, file: arguments.string("file"),
      display: report != nil ? sourcePictures : nil, log: log
    ) {
      play(rSession)
      started.signal()
    }
  }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  let labels = (1...count).map { "player\($0)" }
  let endEvents =
    labels.map { "\($0) FAILED" } + [
      "test stream FAILED", "session FAILED", "session DISCONNECTED",
    ]
  var allPlaying = started.wait(timeout: .now() + 20) == .success
  if allPlaying {
    for label in labels where allPlaying {
      allPlaying = log.wait(for: "\(label) PLAYING", unless: endEvents, timeout: 20, in: &summary)
    }
  } else if !log.failIfEnded(endEvents, in: &summary) {
    summary.fail("the stream did not start")
  }
  let cpuStart = processCPUSeconds()
  let playStart = log.elapsed
  if allPlaying {
    var nextSample = playStart + 0.5
    while log.elapsed < playStart + duration, log.time(of: ExampleWindow.closedEvent) == nil,
      !log.failIfEnded(endEvents, in: &summary)
    {
      if let (report, _) = report, log.elapsed >= nextSample {
        nextSample += 1
        report.sampleStreams(at: log.elapsed, of: session, source: sourcePictures.lastPicture)
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
  }
  let playedFor = log.elapsed - playStart
  let cpu = processCPUSeconds() - cpuStart
  let stats = session.getStreams().filter { !$0.isPublished() }.map { ExampleStats.read($0) }
  for stream in session.getStreams() { try? stream.stop() }
  _ = log.wait(for: labels.map { "\($0) STOPPED" }, timeout: 5)
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  let counts = frames.values
  let best = counts.max() ?? 0
  summary.add("Stream", name)
  summary.add("Players", "\(count)")
  summary.add(
    "Players PLAYING", "\(labels.filter { log.time(of: "\($0) PLAYING") != nil }.count) / \(count)")
  for (index, label) in labels.enumerated() {
    let decodeCPU = index < stats.count ? stats[index]?.detailed?.videoDecodeCPUTime : nil
    let playing = log.time(of: "\(label) PLAYING").map { String(format: "%.3f s", $0) } ?? "never"
    summary.add(
      "\(label) frames decoded",
      "\(counts[index]) (PLAYING at \(playing), decoder CPU "
        + String(format: "%.3f s)", decodeCPU ?? 0))
    if let window = windows[index] {
      summary.add("\(label) frames shown in the window", "\(window.framesShown)")
    }
    if summary.succeeded, best > 0, Double(counts[index]) < Double(best) * minDecoded / 100 {
      summary.fail("\(label) decoded \(counts[index]) frames, under \(minDecoded) % of \(best)")
    }
  }
  summary.add(
    "Process CPU while playing",
    String(
      format: "%.2f s in %.1f s (%.0f %% of one core)", cpu, playedFor,
      100 * cpu / max(playedFor, 0.001)))
  if summary.succeeded, best == 0 { summary.fail("no frame was played") }
  if let (report, path) = report { report.finish(writingTo: path, log: log, summary: &summary) }
  return summary.print(to: log)
}

exit(runMultiPlayer(Array(CommandLine.arguments.dropFirst())))
