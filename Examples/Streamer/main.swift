// Streamer (iOS: WCSExample/Streamer): publish a camera (or a file) under a stream name — taken
// from the URL path as the iOS example does, or from --stream — play it back once PUBLISHING
// (as the iOS example shows the stream the server sends back; --no-play turns that off), and
// report the statuses, bitrate and played frames until stopped. --window shows the played-back
// stream in a window, --report writes the run's HTML page.
import ExampleSupport
import FPWCSApi2Swift
import Foundation

let usage = """
  usage: Streamer [options]

    --stream NAME        stream name (default: the --url path, else a random name)
    --file PATH          publish this media file (default: the virtual camera and microphone)
    --width W --height H --fps F   published video (default 640x480, 30 fps)
    --record             ask the server to record the stream
    --codec vp8|h264     video codec to publish with (default vp8)
    --no-play            do not play the stream back (default: play it once PUBLISHING)
    --duration S         seconds to publish (default 5; 0: until Ctrl-C)
  \(ExampleWindow.usage)
  \(RunReport.usage)
  \(ExampleServer.usage)
  """

func runStreamer(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  var arguments: ExampleArguments
  let width: Int
  let height: Int
  let fps: Int
  let duration: Double
  let codec: String
  do {
    arguments = try ExampleArguments(
      argv, booleanFlags: ["record", "server-log", "play", "window"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    width = try arguments.int("width", default: 640)
    height = try arguments.int("height", default: 480)
    fps = try arguments.int("fps", default: 30)
    duration = try arguments.double("duration", default: 5)
    codec = (arguments.string("codec", default: "vp8") ?? "vp8").lowercased()
    guard ["vp8", "h264"].contains(codec) else {
      throw ExampleError.usage("--codec wants vp8 or h264, got \(codec)")
    }
    guard duration >= 0 else {
      throw ExampleError.usage("--duration wants 0 (no end) or more seconds, got \(duration)")
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  // The iOS Streamer takes the stream name from the URL path: ws://host:8080/name.
  let streamName = arguments.streamNameFromURLPath(of: argv)
  let name = streamName ?? "stream-\(UInt16.random(in: 0...UInt16.max))"
  let file = arguments.string("file")
  var summary = ExampleSummary()
  let server: ExampleServer
  do {
    server = try ExampleServer(arguments: arguments, log: log)
  } catch {
    log.plain("Streamer: \(error)")
    return 1
  }
  defer { server.stop() }
  let localDisplay = VideoFileRenderer(path: nil, log: log, event: "first local frame")
  // The newest published picture, for the report's source thumbnails.
  let localPictures = LastFrameRenderer(wrapping: localDisplay)
  let playBack = arguments.flag("play", default: true)
  let window = playBack ? ExampleWindow.open(arguments, title: "Streamer: \(name)", log: log) : nil
  defer { window?.close() }
  let report = RunReport.requested(arguments, title: "Streamer: \(name)")
  let playedDisplay = VideoFileRenderer(
    path: nil, frameRate: fps, log: log, event: "first played frame")

  // Playing the published stream back, once PUBLISHING.
  @Sendable func play(on session: FPWCSApi2Session?) {
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.display = ExampleWindow.display(playedDisplay, and: window)
    do {
      guard let stream = try session?.createStream(options) else { return }
      stream.on(.fpwcsStreamStatusPlaying) { log.stream("play", $0) }
      stream.on(.fpwcsStreamStatusStopped) { log.stream("play", $0) }
      stream.on(.fpwcsStreamStatusFailed) { log.stream("play", $0) }
      try stream.play()
    } catch {
      log.streamRefused("play", name, error)
    }
  }

  let options = FPWCSApi2SessionOptions()
  options.urlServer = server.url
  options.appKey = "defaultApp"
  let session: FPWCSApi2Session
  do {
    session = try FPWCSApi2.createSession(options)
  } catch {
    log.line("Failed to connect: \(error)")
    return 1
  }
  session.on(.fpwcsSessionStatusEstablished) { rSession in
    log.session(rSession)
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.display = localPictures
    options.record = arguments.flag("record")
    if codec == "h264" {
      options.preferredVideoCodec = "H264"
      options.stripCodecs = ["VP8"]
    }
    options.constraints = FPWCSApi2MediaConstraints(
      audio: true, videoWidth: width, videoHeight: height, videoFps: fps)
    if let file {
      ExampleMedia.useFile(file, in: options.constraints)
    }
    let stream: FPWCSApi2Stream
    do {
      guard let created = try rSession?.createStream(options) else { return }
      stream = created
    } catch {
      log.streamRefused("publish", name, error)
      return
    }
    stream.on(.fpwcsStreamStatusPublishing) { rStream in
      log.stream("publish", rStream)
      if playBack { play(on: rSession) }
    }
    stream.on(.fpwcsStreamStatusUnpublished) { rStream in
      log.stream("publish", rStream)
      // The iOS Streamer disconnects when the stream ends.
      rSession?.disconnect()
    }
    stream.on(.fpwcsStreamStatusFailed) { rStream in
      log.stream("publish", rStream)
      rSession?.disconnect()
    }
    do {
      try stream.publish()
    } catch {
      log.streamRefused("publish", name, error)
    }
  }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  // A FAILED stream or a lost session ends the run at once, with its reason.
  let endEvents =
    ["publish FAILED", "session FAILED", "session DISCONNECTED"] + (playBack ? ["play FAILED"] : [])
  _ = log.wait(for: "publish PUBLISHING", unless: endEvents, timeout: 20, in: &summary)
  if playBack {
    _ = log.wait(for: "play PLAYING", unless: endEvents, timeout: 20, in: &summary)
  }
  let publisherAtPlaying = PlaybackStats.publisherNow(
    playBack ? session.getStreams().first { $0.isPublished() } : nil)
  let start = log.elapsed
  var bitrates: [Int] = []
  var lastStats: FPWCSApi2StreamStats?
  while summary.succeeded, duration <= 0 || log.elapsed < start + duration,
    log.time(of: ExampleWindow.closedEvent) == nil, !log.failIfEnded(endEvents, in: &summary)
  {
    Thread.sleep(forTimeInterval: min(1, max(0.05, start + duration - log.elapsed)))
    let stream = session.getStreams().first { $0.isPublished() }
    if let stats = ExampleStats.read(stream) {
      bitrates.append(stats.currentVideoBitrate)
      lastStats = stats
      log.line(
        "publishing \(name): \(stats.currentVideoBitrate / 1000) kbps, \(stats.connection.packetsSent) packets"
      )
    }
    if let (report, _) = report {
      report.sampleStreams(
        at: log.elapsed, publisher: stream,
        player: session.getStreams().first { !$0.isPublished() },
        source: localPictures.lastPicture)
    }
  }
  // The counters first: a stopped stream has none. Playback stops before the publisher.
  let playback = PlaybackStats.read(
    publisher: session.getStreams().first { $0.isPublished() },
    player: session.getStreams().first { !$0.isPublished() }, atPlaying: publisherAtPlaying,
    log: log)
  for stream in session.getStreams() where !stream.isPublished() { try? stream.stop() }
  if playBack { _ = log.wait(for: ["play STOPPED"] + endEvents, timeout: 5) }
  for stream in session.getStreams() where stream.isPublished() { try? stream.stop() }
  _ = log.wait(for: ["publish UNPUBLISHED"] + endEvents, timeout: 5)
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  summary.add("Stream", name)
  summary.addTime("Time to ESTABLISHED", log.time(of: "session ESTABLISHED"))
  summary.addTime("Time to PUBLISHING", log.time(of: "publish PUBLISHING"))
  summary.add("Frames sent", "\(localDisplay.frameCount)")
  let positive = bitrates.filter { $0 > 0 }
  summary.add(
    "Video bitrate sent (mean)",
    positive.isEmpty ? "n/a" : "\(positive.reduce(0, +) / positive.count / 1000) kbps")
  if playBack {
    summary.addTime("Time to PLAYING", log.time(of: "play PLAYING"))
    summary.addTime("Time to first played frame", log.time(of: "first played frame"))
    summary.add("Frames played", "\(playedDisplay.frameCount)")
    if let window { summary.add("Frames shown in the window", "\(window.framesShown)") }
    summary.add(
      "Played video size", playedDisplay.size.map { "\($0.width)x\($0.height)" } ?? "none")
    // The share of the frames sent since PLAYING, the freezes, NACKs/PLIs on both sides.
    playback.addVideo(played: playedDisplay, start: log.time(of: "play PLAYING"), to: &summary)
  } else {
    // What the players (or the server answering them) asked of this publisher.
    RecoveryReport.add(publisher: lastStats?.detailed, player: nil, to: &summary)
  }
  if summary.succeeded, log.time(of: "publish UNPUBLISHED") == nil {
    summary.fail("no UNPUBLISHED")
  }
  if summary.succeeded, localDisplay.frameCount == 0 { summary.fail("no frame was sent") }
  if summary.succeeded, playBack, playedDisplay.frameCount == 0 {
    summary.fail("no frame was played back")
  }
  if let (report, path) = report { report.finish(writingTo: path, log: log, summary: &summary) }
  return summary.print(to: log)
}

exit(runStreamer(Array(CommandLine.arguments.dropFirst())))
