// ScreenCapturer (iOS: Swift/ScreenCapturer + its broadcast extension): publish the screen (X11,
// works under Xvfb) and, as a separate stream, audio from the microphone or a file — then play
// the screen stream back to show it arrives.
import ExampleSupport
import FPWCSApi2Swift
import Foundation

let usage = """
  usage: ScreenCapturer [options]

    --display :N         X display to capture (default $DISPLAY)
    --fps F              screen frames per second (default 10)
    --stream NAME        screen stream name (default: random); the audio stream is NAME-audio
    --audio-file PATH    publish this file's audio (default: the microphone)
    --no-audio           no audio stream
    --no-play            do not play the screen stream back
    --duration S         seconds to publish (default 4)
    --out DIR            where the played screen goes (default ./example-output)
  \(ExampleServer.usage)
  """

func runScreenCapturer(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  let arguments: ExampleArguments
  let fps: Int
  let duration: Double
  do {
    arguments = try ExampleArguments(argv, booleanFlags: ["server-log"], usage: usage)
    fps = try arguments.int("fps", default: 10)
    duration = try arguments.double("duration", default: 4)
    guard duration > 0 else {
      throw ExampleError.usage("--duration wants a positive number of seconds, got \(duration)")
    }
    // The capture rate, not only a constraint: 0 would mean a frame every 1/0 s.
    guard fps > 0 else { throw ExampleError.usage("--fps wants a positive integer, got \(fps)") }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  let name = arguments.string("stream") ?? "screen-\(UInt16.random(in: 0...UInt16.max))"
  let out = arguments.string("out", default: "example-output") ?? "example-output"
  let sendAudio = arguments.flag("audio", default: true)
  let play = arguments.flag("play", default: true)
  var summary = ExampleSummary()
  let capturer: ScreenVideoCapturer
  let server: ExampleServer
  do {
    try ExampleMedia.makeDirectory(out)
    capturer = try ScreenVideoCapturer(
      display: arguments.string("display"), framesPerSecond: Double(fps))
    server = try ExampleServer(arguments: arguments, log: log)
  } catch {
    log.plain("ScreenCapturer: \(error)")
    return 1
  }
  defer { server.stop() }
  log.line(
    "screen \(capturer.width)x\(capturer.height)"
      + (capturer.usesSharedMemory ? " (MIT-SHM)" : " (GetImage)"))
  let sent = VideoFileRenderer(path: nil, log: log, event: "first screen frame")
  let played = VideoFileRenderer(
    path: out + "/\(name).y4m", frameRate: fps, log: log, event: "first played frame")

  let options = FPWCSApi2SessionOptions()
  options.urlServer = server.url
  options.appKey = "defaultApp"
  let session: WCSSession
  do {
    session = try WCSSession(options)
  } catch {
    log.line("Failed to connect: \(error)")
    return 1
  }
  session.on(.fpwcsSessionStatusEstablished) { log.session($0) }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()
  guard
    log.wait(for: ["session ESTABLISHED", "session FAILED"], timeout: 10) == "session ESTABLISHED"
  else {
    summary.fail("no ESTABLISHED")
    return summary.print(to: log)
  }

  // The screen: video only, from the app capturer.
  let screenOptions = FPWCSApi2StreamOptions()
  screenOptions.name = name
  screenOptions.display = sent
  let constraints = FPWCSApi2MediaConstraints(audio: false, videoCapturer: capturer)
  constraints?.video?.minWidth = capturer.width
  constraints?.video?.maxWidth = capturer.width
  constraints?.video?.minHeight = capturer.height
  constraints?.video?.maxHeight = capturer.height
  constraints?.video?.minFrameRate = fps
  constraints?.video?.maxFrameRate = fps
  screenOptions.constraints = constraints
  let screenStream: WCSStream
  do {
    screenStream = try session.createStream(screenOptions)
  } catch {
    summary.fail("Failed to publish the screen: \(error)")
    return summary.print(to: log)
  }
  screenStream.on(.fpwcsStreamStatusPublishing) { log.stream("screen", $0) }
  screenStream.on(.fpwcsStreamStatusUnpublished) { log.stream("screen", $0) }
  screenStream.on(.fpwcsStreamStatusFailed) { log.stream("screen", $0) }
  do {
    try screenStream.publish()
  } catch {
    log.streamRefused("screen", name, error)
  }

  // The audio: a separate stream from the microphone or a file.
  if sendAudio {
    let audioOptions = FPWCSApi2StreamOptions()
    audioOptions.name = name + "-audio"
    let audio = FPWCSApi2MediaConstraints(audio: true, video: false)
    if let file = arguments.string("audio-file") {
      audio?.audio?.deviceID = ExampleMedia.fileDeviceID(file)
    }
    audioOptions.constraints = audio
    do {
      let audioStream = try session.createStream(audioOptions)
      audioStream.on(.fpwcsStreamStatusPublishing) { log.stream("audio", $0) }
      audioStream.on(.fpwcsStreamStatusUnpublished) { log.stream("audio", $0) }
      audioStream.on(.fpwcsStreamStatusFailed) { log.stream("audio", $0) }
      try audioStream.publish()
    } catch {
      log.streamRefused("audio", name + "-audio", error)
    }
  }
  // A FAILED stream or a lost session ends the run at once, with its reason.
  var endEvents = ["screen FAILED", "session FAILED", "session DISCONNECTED"]
  if sendAudio { endEvents.append("audio FAILED") }
  _ = log.wait(for: "screen PUBLISHING", unless: endEvents, timeout: 15, in: &summary)
  if sendAudio, summary.succeeded {
    _ = log.wait(for: "audio PUBLISHING", unless: endEvents, timeout: 15, in: &summary)
  }
  if play, summary.succeeded {
    let playOptions = FPWCSApi2StreamOptions()
    playOptions.name = name
    playOptions.display = played
    playOptions.constraints = FPWCSApi2MediaConstraints(audio: false, video: true)
    do {
      let playStream = try session.createStream(playOptions)
      playStream.on(.fpwcsStreamStatusPlaying) { log.stream("play", $0) }
      playStream.on(.fpwcsStreamStatusStopped) { log.stream("play", $0) }
      playStream.on(.fpwcsStreamStatusFailed) { log.stream("play", $0) }
      try playStream.play()
    } catch {
      log.streamRefused("play", name, error)
    }
  }
  if play { endEvents.append("play FAILED") }
  let start = log.elapsed
  while summary.succeeded, log.elapsed < start + duration,
    !log.failIfEnded(endEvents, in: &summary)
  {
    Thread.sleep(forTimeInterval: 0.05)
  }
  let playback = PlaybackStats.read(
    publisher: screenStream.stream,
    player: play ? session.getStreams().first { !$0.isPublished() }?.stream : nil, log: log)
  for stream in session.getStreams() { try? stream.stop() }
  _ = log.wait(for: ["screen UNPUBLISHED"] + endEvents, timeout: 5)
  if sendAudio { _ = log.wait(for: ["audio UNPUBLISHED"] + endEvents, timeout: 5) }
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  summary.add("Screen", "\(capturer.width)x\(capturer.height) at \(fps) fps")
  summary.addTime("Time to ESTABLISHED", log.time(of: "session ESTABLISHED"))
  summary.addTime("Time to PUBLISHING (screen)", log.time(of: "screen PUBLISHING"))
  summary.addTime("Time to PUBLISHING (audio)", log.time(of: "audio PUBLISHING"))
  summary.addTime("Time to PLAYING", log.time(of: "play PLAYING"))
  summary.add("Screen frames sent", "\(sent.frameCount)")
  summary.add("Frames received and decoded", "\(played.frameCount)")
  if play {
    playback.addVideo(
      played: played, start: log.time(of: "play PLAYING"), frameRate: Double(fps), to: &summary)
  }
  switch played.finish() {
  case .success(let path): summary.add("Played screen written to", path ?? "nothing")
  case .failure(let error): summary.fail("\(error)")
  }
  if summary.succeeded, sent.frameCount == 0 { summary.fail("no screen frame was sent") }
  if summary.succeeded, play, played.frameCount == 0 {
    summary.fail("no screen frame was played")
  }
  return summary.print(to: log)
}

exit(runScreenCapturer(Array(CommandLine.arguments.dropFirst())))
