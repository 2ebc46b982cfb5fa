// ImageOverlay (iOS: ImageOverlaySwift, with GPUImageDemo's custom capturer): publish video from
// an app capturer that composites a picture (a PNG, or a built-in badge) over the camera's
// frames (the virtual camera, or a media file), play the stream back, and check that the
// played frames carry the picture.
import ExampleSupport
import FPWCSApi2Swift
import Foundation

let usage = """
  usage: ImageOverlay [options]

    --image PATH         PNG to lay over the frames (default: a 128x64 badge of colour bars)
    --x X --y Y          its top-left corner in the frame, even pixels (default: bottom right,
                         16 px in)
    --opacity O          1 replaces the frame's pixels, 0 hides the picture (default 1)
    --file PATH          frames from this media file (default: the virtual camera)
    --publish NAME       stream name (default: a random name)
    --width W --height H --fps F   published video (default 640x480, 30 fps)
    --duration S         seconds to publish (default 5)
    --out DIR            where the played video goes (default ./example-output)
  \(RunReport.usage)
  \(ExampleServer.usage)
  """

func runImageOverlay(_ argv: [String]) -> Int32 {
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
  let overlay: ImageOverlay
  do {
    arguments = try ExampleArguments(argv, booleanFlags: ["server-log"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    width = try arguments.int("width", default: 640)
    height = try arguments.int("height", default: 480)
    fps = try arguments.int("fps", default: 30)
    duration = try arguments.double("duration", default: 5)
    guard duration > 0 else {
      throw ExampleError.usage("--duration wants a positive number of seconds, got \(duration)")
    }
    guard width >= 64, height >= 32, width % 2 == 0, height % 2 == 0, fps > 0 else {
      throw ExampleError.usage("--width/--height want even sizes of at least 64x32, --fps > 0")
    }
    let opacity = try arguments.double("opacity", default: 1)
    let picture: I420Image
    if let path = arguments.string("image") {
      guard let bytes = FileManager.default.contents(atPath: path) else {
        throw ExampleError.usage("--image: cannot read \(path)")
      }
      do {
        picture = try PictureFile.decodePNG(Array(bytes))
      } catch {
        throw ExampleError.usage("--image \(path): \(error)")
      }
    } else {
      picture = ImageOverlay.badge()
    }
    if arguments.string("x") != nil || arguments.string("y") != nil {
      overlay = try ImageOverlay(
        image: picture, x: try arguments.int("x", default: 0),
        y: try arguments.int("y", default: 0),
        opacity: opacity)
    } else {
      overlay = try ImageOverlay.bottomRight(of: picture, inFrame: width, height, opacity: opacity)
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  let name = arguments.string("publish") ?? "overlay-\(UInt16.random(in: 0...UInt16.max))"
  var summary = ExampleSummary()
  let capturer: OverlayVideoCapturer
  guard let (server, out) = ExampleServer.start("ImageOverlay", arguments: arguments, log: log)
  else { return 1 }
  defer { server.stop() }
  do {
    capturer = try OverlayVideoCapturer(
      overlay: overlay, source: arguments.string("file").map { .file($0) } ?? .virtualCamera,
      width: width, height: height, framesPerSecond: fps)
  } catch {
    log.plain("ImageOverlay: \(error)")
    return 1
  }
  log.line(
    "overlay \(overlay.image.width)x\(overlay.image.height) at \(overlay.x),\(overlay.y), "
      + "opacity \(overlay.opacity)")
  let playedFile = VideoFileRenderer(
    path: out + "/\(name).y4m", frameRate: fps, log: log, event: "first played frame")
  let played = LastFrameRenderer(wrapping: playedFile)
  let report = RunReport.requested(arguments, title: "ImageOverlay: \(name)")
  // The composited pictures as published (the stream's local display), for the thumbnails.
  let published = LastFrameRenderer()

  guard let session = server.createSession(log: log) else { return 1 }
  func play() {
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.display = played
    options.constraints = FPWCSApi2MediaConstraints(audio: false, video: true)
    do {
      let stream = try session.createStream(options)
      stream.on(.fpwcsStreamStatusPlaying) { log.stream("play", $0) }
      stream.on(.fpwcsStreamStatusStopped) { log.stream("play", $0) }
      stream.on(.fpwcsStreamStatusFailed) { log.stream("play", $0) }
      try stream.play()
    } catch {
      log.streamRefused("play", name, error)
    }
  }
  session.on(.fpwcsSessionStatusEstablished) { rSession in
    log.session(rSession)
    // The capturer replaces the camera (iOS: FPWCSApi2MediaConstraints(audio:videoCapturer:)).
    let constraints = FPWCSApi2MediaConstraints(audio: false, videoCapturer: capturer)
    constraints?.video?.minWidth = width
    constraints?.video?.maxWidth = width
    constraints?.video?.minHeight = height
    constraints?.video?.maxHeight = height
    constraints?.video?.minFrameRate = fps
    constraints?.video?.maxFrameRate = fps
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.constraints = constraints
    options.display = published
    do {
      let stream = try session.createStream(options)
      stream.on(.fpwcsStreamStatusPublishing) { rStream in
        log.stream("publish", rStream)
        play()
      }
      stream.on(.fpwcsStreamStatusUnpublished) { log.stream("publish", $0) }
      stream.on(.fpwcsStreamStatusFailed) { log.stream("publish", $0) }
      try stream.publish()
    } catch {
      log.streamRefused("publish", name, error)
    }
  }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  let endEvents = ["publish FAILED", "play FAILED", "session FAILED", "session DISCONNECTED"]
  _ = log.wait(for: "play PLAYING", unless: endEvents, timeout: 20, in: &summary)
  let start = log.elapsed
  var nextSample = start + 0.5
  while summary.succeeded, log.elapsed < start + duration, !log.failIfEnded(endEvents, in: &summary)
  {
    if let (report, _) = report, log.elapsed >= nextSample {
      nextSample += 1
      report.sampleStreams(at: log.elapsed, of: session, source: published.lastPicture)
    }
    Thread.sleep(forTimeInterval: 0.05)
  }
  // The newest played picture, before playback stops.
  let lastPlayed = played.lastPicture
  for stream in session.getStreams() where !stream.isPublished() { try? stream.stop() }
  _ = log.wait(for: ["play STOPPED"] + endEvents, timeout: 5)
  for stream in session.getStreams() where stream.isPublished() { try? stream.stop() }
  _ = log.wait(for: ["publish UNPUBLISHED"] + endEvents, timeout: 5)
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  summary.add("Stream", name)
  summary.add(
    "Overlay",
    "\(overlay.image.width)x\(overlay.image.height) at \(overlay.x),\(overlay.y), "
      + "opacity \(overlay.opacity)")
  summary.addTime("Time to PUBLISHING", log.time(of: "publish PUBLISHING"))
  summary.addTime("Time to PLAYING", log.time(of: "play PLAYING"))
  summary.add("Frames composited", "\(capturer.framesDelivered)")
  summary.add("Frames played", "\(playedFile.frameCount)")
  // The overlay's part of the last played picture against the picture itself (at full
  // opacity it replaced the frame's pixels, so it must come back as sent, give or take VP8).
  let visible = ImageOverlay.region(
    of: overlay.image, x: 0, y: 0, width: min(overlay.image.width, width - overlay.x) & ~1,
    height: min(overlay.image.height, height - overlay.y) & ~1)
  if overlay.opacity == 1, let lastPlayed, let visible,
    let region = ImageOverlay.region(
      of: lastPlayed, x: overlay.x, y: overlay.y, width: visible.width, height: visible.height),
    let psnr = region.psnr(to: visible)
  {
    summary.add("Overlay PSNR (last played frame)", String(format: "%.1f dB", psnr))
    if psnr < 25 { summary.fail("the overlay is not in the played frames (\(psnr) dB)") }
  }
  switch playedFile.finish() {
  case .success(let path): summary.add("Played video written to", path ?? "nothing")
  case .failure(let error): summary.fail("\(error)")
  }
  if summary.succeeded, capturer.framesDelivered == 0 { summary.fail("the capturer gave no frame") }
  if summary.succeeded, playedFile.frameCount == 0 { summary.fail("no frame was played") }
  if let (report, path) = report { report.finish(writingTo: path, log: log, summary: &summary) }
  return summary.print(to: log)
}

exit(runImageOverlay(Array(CommandLine.arguments.dropFirst())))
