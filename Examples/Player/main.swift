// Player (iOS: WCSExample/Player): connect and play a stream at once, report PLAYING /
// NOT_ENOUGH_BANDWIDTH / STOPPED / FAILED, and write what plays to Y4M and WAV files. Without
// --url it starts the local server and publishes a test stream there, so there is something to
// play.
import ExampleSupport
import FPWCSApi2Swift
import Foundation

let usage = """
  usage: Player [options]

    --stream NAME        stream to play (default: the --url path; without --url, a test stream
                         this example publishes itself)
    --file PATH          (local server only) publish this file as the test stream
    --duration S         seconds to play (default 5; 0: until the stream stops)
    --mute-audio         mute playback (the iOS example mutes when the volume is ~0)
    --speaker            also play the audio on the default sound output (PulseAudio, else ALSA;
                         the iOS example's setLoudspeakerStatus)
    --speaker-sink NAME  play the audio on this PulseAudio sink or ALSA PCM instead
    --out DIR            where the played video and audio go (default ./example-output)
  \(ExampleWindow.usage)
  \(RunReport.usage)
  \(PlaybackLimits.usage)
  \(ExampleServer.usage)
  """

func runPlayer(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  var arguments: ExampleArguments
  let duration: Double
  let limits: PlaybackLimits
  do {
    arguments = try ExampleArguments(
      argv, booleanFlags: ["mute-audio", "server-log", "speaker", "window"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    duration = try arguments.double("duration", default: 5)
    limits = try PlaybackLimits(arguments)
    guard duration >= 0 else {
      throw ExampleError.usage("--duration wants 0 (no end) or more seconds, got \(duration)")
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  let streamName = arguments.streamNameFromURLPath(of: argv)
  var summary = ExampleSummary()
  guard let (server, out) = ExampleServer.start("Player", arguments: arguments, log: log)
  else { return 1 }
  defer { server.stop() }
  guard server.isLocal || streamName != nil else {
    log.plain("Player: give --stream NAME (or the name as the --url path)")
    return 64
  }
  let name = streamName ?? "player-test-\(UInt16.random(in: 0...UInt16.max))"
  let remoteDisplay = VideoFileRenderer(
    path: out + "/\(name).y4m", log: log, event: "first remote frame")
  let window = ExampleWindow.open(arguments, title: "Player: \(name)", log: log)
  let report = RunReport.requested(arguments, title: "Player: \(name)")
  let sourcePictures = LastFrameRenderer()
  defer { window?.close() }
  let audio = PlayedAudioRecorder(path: out + "/\(name).wav", log: log)
  audio.install()
  if arguments.flag("mute-audio") { FPWCSApi2.getAudioManager().muteAudio() }

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
  let speaker: MediaConnectionRequest.AudioOutput? =
    arguments.string("speaker-sink").map { .device($0) }
    ?? (arguments.flag("speaker") ? .defaultDevice : nil)
  func play(_ session: FPWCSApi2Session?) {
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.display = ExampleWindow.display(remoteDisplay, and: window)
    let stream: FPWCSApi2Stream
    do {
      guard let created = try session?.createStream(options) else { return }
      stream = created
    } catch {
      log.streamRefused("play", name, error)
      return
    }
    stream.on(.fpwcsStreamStatusPlaying) { rStream in
      log.stream("play", rStream)
      guard let speaker else { return }
      // Opened once playing, so a missing sound system is reported and the stream plays on.
      do {
        try rStream?.setAudioOutput(speaker)
        log.line("audio on the sound output (\(speaker))")
      } catch {
        log.line("sound output unavailable: \(error)")
      }
    }
    stream.on(.fpwcsStreamStatusNotEnoughtBandwidth) {
      log.line(ExampleText.notEnoughBandwidth($0))
    }
    stream.on(.fpwcsStreamStatusStopped) { log.stream("play", $0) }
    stream.on(.fpwcsStreamStatusFailed) { log.stream("play", $0) }
    do {
      try stream.play()
    } catch {
      log.streamRefused("play", name, error)
    }
  }
  session.on(.fpwcsSessionStatusEstablished) { rSession in
    log.session(rSession)
    guard server.isLocal else {
      play(rSession)
      return
    }
    // Something to play on the fresh local server: a test stream from this session.
    guard let rSession else { return }
    ExampleMedia.publishTestStream(
      name, on: rSession, file: arguments.string("file"),
      display: report != nil ? sourcePictures : nil, log: log
    ) { play(rSession) }
  }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  // A FAILED stream or a lost session ends the run at once (a FAILED stream never resumes).
  let endEvents = ["play FAILED", "test stream FAILED", "session FAILED", "session DISCONNECTED"]
  let playing = log.wait(for: "play PLAYING", unless: endEvents, timeout: 20, in: &summary)
  let publisherAtPlaying =
    playing ? PlaybackStats.publisherNow(session.getStreams().first { $0.isPublished() }) : nil
  if playing {
    let start = log.elapsed
    var nextSample = start + 0.5
    while duration <= 0 || log.elapsed < start + duration, log.time(of: "play STOPPED") == nil,
      log.time(of: ExampleWindow.closedEvent) == nil
    {
      if log.failIfEnded(endEvents, in: &summary) { break }
      if let (report, _) = report, log.elapsed >= nextSample {
        nextSample += 1
        report.sampleStreams(at: log.elapsed, of: session, source: sourcePictures.lastPicture)
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
  }
  // The local test stream is the sender whose frames the player should get.
  let playback = PlaybackStats.read(
    publisher: session.getStreams().first { $0.isPublished() },
    player: session.getStreams().first { !$0.isPublished() }, atPlaying: publisherAtPlaying,
    log: log)
  var bitrate = 0
  for stream in session.getStreams() where !stream.isPublished() {
    bitrate = ExampleStats.read(stream)?.currentVideoBitrate ?? 0
    try? stream.stop()
  }
  _ = log.wait(for: ["play STOPPED"] + endEvents, timeout: 5)
  // The local test stream ends as UNPUBLISHED, not FAILED by the disconnect.
  if session.getStreams().contains(where: { $0.isPublished() }) {
    for stream in session.getStreams() where stream.isPublished() { try? stream.stop() }
    _ = log.wait(for: ["test stream UNPUBLISHED"] + endEvents, timeout: 5)
  }
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  summary.add("Stream", name)
  summary.addTime("Time to ESTABLISHED", log.time(of: "session ESTABLISHED"))
  summary.addTime("Time to PLAYING", log.time(of: "play PLAYING"))
  summary.addTime("Time to first remote frame", log.time(of: "first remote frame"))
  summary.add("Frames received and decoded", "\(remoteDisplay.frameCount)")
  if let window { summary.add("Frames shown in the window", "\(window.framesShown)") }
  // A run that froze or decoded too little is not OK, as in wcs-demo.
  let playbackFailures = playback.addVideo(
    played: remoteDisplay, start: log.time(of: "play PLAYING"), limits: limits, to: &summary)
  summary.add("Audio blocks played", "\(audio.blockCount) x 20 ms")
  summary.add("Video bitrate received", "\(bitrate / 1000) kbps")
  switch remoteDisplay.finish() {
  case .success(let path): summary.add("Played video written to", path ?? "nothing")
  case .failure(let error): summary.fail("\(error)")
  }
  switch audio.finish() {
  case .success(let path): summary.add("Played audio written to", path ?? "nothing")
  case .failure(let error): summary.fail("\(error)")
  }
  if summary.succeeded, remoteDisplay.frameCount == 0 { summary.fail("no frame was played") }
  if summary.succeeded { playbackFailures.forEach { summary.fail($0) } }
  if let (report, path) = report { report.finish(writingTo: path, log: log, summary: &summary) }
  return summary.print(to: log)
}

exit(runPlayer(Array(CommandLine.arguments.dropFirst())))
