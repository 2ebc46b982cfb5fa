// TwoWayStreaming (iOS: WCSExample/TwoWayStreaming and TwoWayStreamingSwift): connect, ask
// whether the stream to play is available, publish one stream, play another (or the same),
// send data from the publisher to the players and print the data events, switch camera, stop,
// disconnect — with the iOS example's status lines.
import ExampleSupport
import FPWCSApi2Swift
import Foundation
import Synchronization

let usage = """
  usage: TwoWayStreaming [options]

    --publish NAME       stream to publish (default: a random name)
    --play NAME          stream to play (default: the published one)
    --file PATH          list this media file as a second camera (the virtual camera is the
                         first), so switching camera moves to it
    --width W --height H --fps F   published video (iPad constraints; default 640x480, 15 fps)
    --duration S         seconds to stream before stopping (default 6)
    --switch-camera-at S seconds after PUBLISHING to switch camera (default: duration / 2;
                         negative: never)
    --no-available       do not ask whether the stream to play is available (default: ask
                         before publishing and once PUBLISHING, as the Available button does)
    --data TEXT          what the publisher sends to the players (default "hello"), as
                         {"message": TEXT, "sequence": N}
    --data-count N       data messages to send while playing, spread over the run (default 3;
                         0: none)
    --out DIR            where the played video goes (default ./example-output)
  \(ExampleWindow.usage)
  \(RunReport.usage)
  \(PlaybackLimits.usage)
  \(ExampleServer.usage)
  """

func runTwoWayStreaming(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  let arguments: ExampleArguments
  let width: Int
  let height: Int
  let fps: Int
  let duration: Double
  let limits: PlaybackLimits
  let switchAt: Double
  let dataCount: Int
  do {
    arguments = try ExampleArguments(
      argv, booleanFlags: ["server-log", "window", "available"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    width = try arguments.int("width", default: 640)
    height = try arguments.int("height", default: 480)
    fps = try arguments.int("fps", default: 15)
    duration = try arguments.double("duration", default: 6)
    guard duration > 0 else {
      throw ExampleError.usage("--duration wants a positive number of seconds, got \(duration)")
    }
    switchAt = try arguments.double("switch-camera-at", default: duration / 2)
    limits = try PlaybackLimits(arguments)
    dataCount = try arguments.int("data-count", default: 3)
    guard dataCount >= 0 else {
      throw ExampleError.usage("--data-count wants 0 or more messages, got \(dataCount)")
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  let out = arguments.string("out", default: "example-output") ?? "example-output"
  let localStreamName = arguments.string("publish") ?? "stream-\(UInt16.random(in: 0...UInt16.max))"
  let remoteStreamName = arguments.string("play") ?? localStreamName
  let file = arguments.string("file")
  let askAvailable = arguments.flag("available", default: true)
  let dataText = arguments.string("data", default: "hello") ?? "hello"
  var summary = ExampleSummary()
  let server: ExampleServer
  do {
    if let file { try ExampleMedia.checkMediaFile(file) }
    try ExampleMedia.makeDirectory(out)
    server = try ExampleServer(arguments: arguments, log: log)
  } catch {
    log.plain("TwoWayStreaming: \(error)")
    return 1
  }
  defer { server.stop() }
  if let file { ExampleMedia.addFileSources([file]) }

  let localDisplay = VideoFileRenderer(path: nil, log: log, event: "first local frame")
  let remoteDisplay = VideoFileRenderer(
    path: out + "/\(remoteStreamName).y4m", frameRate: fps, log: log, event: "first remote frame")
  // --window: the local preview and the played stream each in a window of its own.
  let localWindow = ExampleWindow.open(arguments, title: "local: \(localStreamName)", log: log)
  let remoteWindow = ExampleWindow.open(arguments, title: "play: \(remoteStreamName)", log: log)
  defer {
    localWindow?.close()
    remoteWindow?.close()
  }
  let report = RunReport.requested(arguments, title: "TwoWayStreaming: \(localStreamName)")
  // The newest local picture is kept for the report's thumbnails.
  let localView = LastFrameRenderer(
    wrapping: ExampleWindow.display(localDisplay, and: localWindow))

  // The availability answers (before publishing, once PUBLISHING), the data events the player
  // receives, and the played stream (the availability checks' stream objects are in
  // `getStreams()` too).
  let availability = Mutex<(before: StreamAvailability?, publishing: StreamAvailability?)>(
    (nil, nil))
  let dataEvents = StreamDataEvents()
  let played = Mutex<FPWCSApi2Stream?>(nil)

  // Session creation and connection.
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
  // Publishing, then playing once PUBLISHING (as the iOS example does).
  func playStream() {
    let options = FPWCSApi2StreamOptions()
    options.name = remoteStreamName
    options.display = ExampleWindow.display(remoteDisplay, and: remoteWindow)
    let stream: FPWCSApi2Stream
    do {
      stream = try session.createStream(options)
    } catch {
      log.streamRefused("play", remoteStreamName, error)
      return
    }
    stream.on(.fpwcsStreamStatusPlaying) { log.stream("play", $0) }
    stream.on(.fpwcsStreamStatusNotEnoughtBandwidth) {
      log.line(ExampleText.notEnoughBandwidth($0))
    }
    stream.on(.fpwcsStreamStatusStopped) { log.stream("play", $0) }
    stream.on(.fpwcsStreamStatusFailed) { log.stream("play", $0) }
    stream.onStreamEvent { dataEvents.receive($0, stream: remoteStreamName, log: log) }
    played.withLock { $0 = stream }
    do {
      try stream.play()
    } catch {
      log.streamRefused("play", remoteStreamName, error)
    }
  }
  func publishStream() {
    let options = FPWCSApi2StreamOptions()
    options.name = localStreamName
    options.display = localView
    options.constraints = FPWCSApi2MediaConstraints(
      audio: true, videoWidth: width, videoHeight: height, videoFps: fps)
    let stream: FPWCSApi2Stream
    do {
      stream = try session.createStream(options)
    } catch {
      log.streamRefused("publish", localStreamName, error)
      return
    }
    stream.on(.fpwcsStreamStatusPublishing) { rStream in
      log.stream("publish", rStream)
      guard askAvailable else { return playStream() }
      StreamAvailability.ask(remoteStreamName, on: session, log: log) { answer in
        availability.withLock { $0.publishing = answer }
        playStream()
      }
    }
    stream.on(.fpwcsStreamStatusUnpublished) { rStream in
      log.stream("publish", rStream)
      FPWCSApi2.releaseLocalMedia(localView)
    }
    stream.on(.fpwcsStreamStatusFailed) { log.stream("publish", $0) }
    do {
      try stream.publish()
    } catch {
      log.streamRefused("publish", localStreamName, error)
    }
  }
  session.on(.fpwcsSessionStatusEstablished) { rSession in
    log.session(rSession)
    guard askAvailable else { return publishStream() }
    StreamAvailability.ask(remoteStreamName, on: session, log: log) { answer in
      availability.withLock { $0.before = answer }
      publishStream()
    }
  }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  // A FAILED stream or a lost session ends the run at once, with its reason.
  let endEvents = ["play FAILED", "publish FAILED", "session FAILED", "session DISCONNECTED"]
  _ = log.wait(for: "play PLAYING", unless: endEvents, timeout: 20, in: &summary)
  let publisherAtPlaying = PlaybackStats.publisherNow(
    session.getStreams().first { $0.isPublished() })
  let start = log.time(of: "publish PUBLISHING") ?? log.elapsed
  var switched = false
  var dataSent = 0
  var nextSample = log.elapsed + 0.5
  while log.elapsed < start + duration, summary.succeeded,
    log.time(of: ExampleWindow.closedEvent) == nil, !log.failIfEnded(endEvents, in: &summary)
  {
    if !switched, switchAt >= 0, log.elapsed >= start + switchAt {
      switched = true
      // Switching camera: every published stream of the first session.
      if let session = FPWCSApi2.getSessions().first {
        for stream in session.getStreams() where stream.isPublished() {
          log.line("Found published stream, switching camera")
          do {
            try stream.trySwitchCamera()
            log.mark("camera switched")
          } catch {
            log.line("switch camera: \(error)")
          }
        }
      } else {
        log.line("No active sessions found")
      }
    }
    // Data from the publisher, spread over the run.
    if dataSent < dataCount,
      log.elapsed >= start + duration * Double(dataSent + 1) / Double(dataCount + 1),
      let publisher = session.getStreams().first(where: { $0.isPublished() })
    {
      dataSent += 1
      let data: [String: Any] = ["message": dataText, "sequence": dataSent]
      do {
        try publisher.sendDataChecked(data)
        log.line("sent data \(StreamDataEvents.json(data))")
      } catch {
        log.line("sendData: \(error)")
      }
    }
    if let (report, _) = report, log.elapsed >= nextSample {
      nextSample += 1
      report.sampleStreams(
        at: log.elapsed, publisher: session.getStreams().first { $0.isPublished() },
        player: played.withLock { $0 }, source: localView.lastPicture)
    }
    Thread.sleep(forTimeInterval: 0.05)
  }

  // Stop playing, stop publishing, disconnect (the counters first: a stopped stream has
  // none). The published stream is the sender only when it is the one played.
  let playback = PlaybackStats.read(
    publisher: remoteStreamName == localStreamName
      ? session.getStreams().first { $0.isPublished() } : nil,
    player: played.withLock { $0 }, atPlaying: publisherAtPlaying, log: log)
  // What was sent reaches the player over the WebSocket, behind the media: wait for it.
  let dataReceived =
    remoteStreamName == localStreamName
    ? dataEvents.wait(for: dataSent, timeout: 3) : dataEvents.count
  try? played.withLock { $0 }?.stop()
  for stream in session.getStreams() where stream.isPublished() {
    try? stream.stop()
  }
  _ = log.wait(for: ["publish UNPUBLISHED"] + endEvents, timeout: 5)
  _ = log.wait(for: ["play STOPPED"] + endEvents, timeout: 5)
  log.line("Disconnect session with server \(session.getServerUrl())")
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  summary.addTime("Time to ESTABLISHED", log.time(of: "session ESTABLISHED"))
  summary.addTime("Time to PUBLISHING", log.time(of: "publish PUBLISHING"))
  summary.addTime("Time to PLAYING", log.time(of: "play PLAYING"))
  summary.addTime("Time to first remote frame", log.time(of: "first remote frame"))
  summary.add("Camera switched", log.time(of: "camera switched") != nil ? "yes" : "no")
  let answers = availability.withLock { $0 }
  if askAvailable {
    summary.add("Available before publishing", answers.before.map { "\($0)" } ?? "no answer")
    summary.add("Available once PUBLISHING", answers.publishing.map { "\($0)" } ?? "no answer")
  }
  summary.add("Data sent", "\(dataSent)")
  summary.add("Data events received", "\(dataReceived)")
  if let last = dataEvents.payloads.last { summary.add("Last data event", last) }
  summary.add("Frames sent", "\(localDisplay.frameCount)")
  if let localWindow, let remoteWindow {
    summary.add(
      "Frames shown in the windows",
      "\(localWindow.framesShown) local, \(remoteWindow.framesShown) played")
  }
  summary.add("Frames received and decoded", "\(remoteDisplay.frameCount)")
  // A run that froze or decoded too little is not OK, as in wcs-demo.
  let playbackFailures = playback.addVideo(
    played: remoteDisplay, start: log.time(of: "play PLAYING"),
    frameRate: remoteStreamName == localStreamName ? Double(fps) : nil, limits: limits,
    to: &summary)
  summary.add(
    "Statuses",
    ["publish UNPUBLISHED", "play STOPPED", "session DISCONNECTED"].filter {
      log.time(of: $0) != nil
    }.joined(separator: ", "))
  switch remoteDisplay.finish() {
  case .success(let path): summary.add("Played video written to", path ?? "nothing")
  case .failure(let error): summary.fail("\(error)")
  }
  if summary.succeeded, remoteDisplay.frameCount == 0 { summary.fail("no frame was played") }
  if summary.succeeded, log.time(of: "session DISCONNECTED") == nil {
    summary.fail("no DISCONNECTED")
  }
  if summary.succeeded { playbackFailures.forEach { summary.fail($0) } }
  // Playing its own stream, the program knows what the answers and the events must be.
  if summary.succeeded, remoteStreamName == localStreamName {
    if askAvailable, answers.publishing?.available != true {
      summary.fail("the published stream was not available once PUBLISHING")
    }
    if dataReceived < dataSent {
      summary.fail("\(dataReceived) of the \(dataSent) data messages arrived")
    }
  }
  if let (report, path) = report { report.finish(writingTo: path, log: log, summary: &summary) }
  return summary.print(to: log)
}

exit(runTwoWayStreaming(Array(CommandLine.arguments.dropFirst())))
