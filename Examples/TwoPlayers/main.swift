// TwoPlayers (iOS: WCSExample/TwoPlayers): two players side by side, each playing its own
// stream, each reporting PLAYING / STOPPED / FAILED and writing what it plays to a Y4M file
// (and, with --window, showing it in a window of its own). Without --url it starts the local
// server and publishes the two test streams itself.
import ExampleSupport
import FPWCSApi2Swift
import Foundation

let usage = """
  usage: TwoPlayers [options]

    --play1 NAME         the first player's stream (default: a test stream this example
                         publishes on the local server)
    --play2 NAME         the second player's stream (default: a second test stream)
    --duration S         seconds to play once both are PLAYING (default 4)
    --out DIR            where the played video goes (default ./example-output)
  \(PlaybackLimits.usage)
  \(ExampleWindow.usage)
  \(RunReport.usage)
  \(ExampleServer.usage)
  """

func runTwoPlayers(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  let arguments: ExampleArguments
  let duration: Double
  let limits: PlaybackLimits
  do {
    arguments = try ExampleArguments(argv, booleanFlags: ["server-log", "window"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    duration = try arguments.double("duration", default: 4)
    limits = try PlaybackLimits(arguments)
    guard duration > 0 else {
      throw ExampleError.usage("--duration wants a positive number of seconds, got \(duration)")
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  var summary = ExampleSummary()
  guard let (server, out) = ExampleServer.start("TwoPlayers", arguments: arguments, log: log)
  else { return 1 }
  defer { server.stop() }
  let suffix = UInt16.random(in: 0...UInt16.max)
  let names = [
    arguments.string("play1") ?? "two-players-a-\(suffix)",
    arguments.string("play2") ?? "two-players-b-\(suffix)",
  ]
  let own = [arguments.string("play1") == nil, arguments.string("play2") == nil]
  guard server.isLocal || !own.contains(true) else {
    log.plain("TwoPlayers: give --play1 NAME and --play2 NAME for a server of your own")
    return 64
  }
  let labels = ["player1", "player2"]
  let files = (0..<2).map { index in
    VideoFileRenderer(
      path: out + "/\(labels[index])-\(names[index]).y4m", log: log,
      event: "\(labels[index]) first frame")
  }
  let windows = (0..<2).map { index in
    ExampleWindow.open(arguments, title: "\(labels[index]): \(names[index])", log: log)
  }
  defer { windows.forEach { $0?.close() } }
  // The page follows player1's stream: its test stream (when this run publishes it) and player1.
  let report = RunReport.requested(arguments, title: "TwoPlayers: \(names[0]), \(names[1])")
  let sourcePictures = LastFrameRenderer()

  guard let session = server.createSession(log: log) else { return 1 }
  func play(_ index: Int, on session: FPWCSApi2Session) {
    let options = FPWCSApi2StreamOptions()
    options.name = names[index]
    options.display = ExampleWindow.display(files[index], and: windows[index])
    let label = labels[index]
    do {
      let stream = try session.createStream(options)
      stream.on(.fpwcsStreamStatusPlaying) { log.stream(label, $0) }
      stream.on(.fpwcsStreamStatusStopped) { log.stream(label, $0) }
      stream.on(.fpwcsStreamStatusFailed) { log.stream(label, $0) }
      try stream.play()
    } catch {
      log.streamRefused(label, names[index], error)
    }
  }
  session.on(.fpwcsSessionStatusEstablished) { rSession in
    log.session(rSession)
    guard let rSession else { return }
    for index in 0..<2 {
      if server.isLocal, own[index] {
        ExampleMedia.publishTestStream(
          names[index], on: rSession, file: nil,
          display: index == 0 && report != nil ? sourcePictures : nil, log: log
        ) { play(index, on: rSession) }
      } else {
        play(index, on: rSession)
      }
    }
  }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  let endEvents =
    labels.map { "\($0) FAILED" } + [
      "test stream FAILED", "session FAILED", "session DISCONNECTED",
    ]
  var playing = true
  for label in labels where playing {
    playing = log.wait(for: "\(label) PLAYING", unless: endEvents, timeout: 20, in: &summary)
  }
  let start = log.elapsed
  var nextSample = start + 0.5
  while playing, log.elapsed < start + duration,
    log.time(of: ExampleWindow.closedEvent) == nil, !log.failIfEnded(endEvents, in: &summary)
  {
    if let (report, _) = report, log.elapsed >= nextSample {
      nextSample += 1
      let streams = session.getStreams().filter { $0.getName() == names[0] }
      report.sampleStreams(
        at: log.elapsed, publisher: streams.first { $0.isPublished() },
        player: streams.first { !$0.isPublished() }, source: sourcePictures.lastPicture)
    }
    Thread.sleep(forTimeInterval: 0.05)
  }
  let end = log.elapsed
  for stream in session.getStreams() { try? stream.stop() }
  _ = log.wait(for: labels.map { "\($0) STOPPED" }, timeout: 5)
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  // A player that froze or decoded too little is not OK, as in Player and wcs-demo.
  var playbackFailures: [String] = []
  for index in 0..<2 {
    let label = labels[index]
    summary.add("\(label) stream", names[index])
    summary.addTime("\(label) time to PLAYING", log.time(of: "\(label) PLAYING"))
    summary.add("\(label) frames decoded", "\(files[index].frameCount)")
    if let playing = log.time(of: "\(label) PLAYING") {
      // The test streams are 30 fps; another server's stream shows its rate in its timestamps.
      let share = DecodedShare.ofDue(
        decoded: files[index].frameCount, seconds: end - playing,
        frameRate: files[index].estimatedFrameRate ?? 30)
      let freezes = files[index].freezes(from: playing, to: end)
      summary.add("\(label) decoded share", share.description)
      summary.add("\(label) freezes (no new picture > 0.5 s)", freezes.description)
      playbackFailures += limits.failures(share: share, freezes: freezes).map { "\(label): \($0)" }
    }
    if let window = windows[index] {
      summary.add("\(label) frames shown in the window", "\(window.framesShown)")
    }
    switch files[index].finish() {
    case .success(let path): summary.add("\(label) video written to", path ?? "nothing")
    case .failure(let error): summary.fail("\(error)")
    }
    if summary.succeeded, files[index].frameCount == 0 { summary.fail("\(label) played no frame") }
  }
  if summary.succeeded { playbackFailures.forEach { summary.fail($0) } }
  if let (report, path) = report { report.finish(writingTo: path, log: log, summary: &summary) }
  return summary.print(to: log)
}

exit(runTwoPlayers(Array(CommandLine.arguments.dropFirst())))
