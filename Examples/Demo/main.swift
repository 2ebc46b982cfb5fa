// wcs-demo: the main job. Publishes real media through a WCS (the bundled local server unless
// --url is given), plays it back in the same run, records it on the server, downloads the
// record, and prints a summary: times to each status, the share of frames decoded, freezes,
// loss recovery (NACK, RTX, PLI, key frames), PSNR of the played video against the source,
// audio delay, bitrates, loss, and where the files were written. An audio-only file is
// published and checked as audio.
import ExampleSupport
import FPWCSApi2Swift
import Foundation

let usage = """
  usage: wcs-demo [FILE...] [options]

  Publishes FILE (any format FFmpeg reads; else the first camera, with the first microphone; else
  /usr/share/forensics-samples/original-files/movie2/movie-hello.mp4; else the virtual camera
  and microphone), plays it back, records it and checks everything.

    --file PATH        publish this file (the same as giving FILE)
    --duration S       seconds to publish (default: the file's length, 8 for devices)
    --width W --height H --fps F   published video (default 640x360, 30 fps)
    --bitrate KBPS     video bitrate (default 0: the engine's choice)
    --codec vp8|h264   video codec to publish with (default vp8); the server relays it as is
    --out DIR          where the played video/audio and the record go (default ./demo-output)
    --virtual          use the virtual camera and microphone
    --report FILE      write an HTML page of the run: thumbnails of the sent and played video,
                       charts over time, the status timeline and the summary
    --window           also show the sent and the played video in windows (X11 or Wayland;
                       closing one ends the run)
    --min-psnr DB      fail below this mean PSNR (default 30)
    --min-decoded PCT  fail when fewer than this percent of the frames sent were decoded
                       (default 90; audio frames for an audio-only file)
    --max-freeze S     fail when the played video showed no new picture for longer than this
                       (default 2; the wait for the first picture and the end count too)
    --max-av-delay MS  fail when the played audio is further than this from the video
                       (default 60; measured as late in the run as the sound allows)
  \(ExampleServer.usage)
  """

let defaultMovie = "/usr/share/forensics-samples/original-files/movie2/movie-hello.mp4"

/// Where the published media comes from.
enum DemoInput {
  case file(String)
  case devices(camera: FPWCSApi2MediaDevice?, microphone: FPWCSApi2MediaDevice?)
  case virtual

  var description: String {
    switch self {
    case .file(let path): return "file \(path)"
    case .devices(let camera, let microphone):
      return "devices \(camera?.label ?? "none") / \(microphone?.label ?? "none")"
    case .virtual: return "virtual camera and microphone (test pattern + 440 Hz tone)"
    }
  }
}

func chooseInput(_ arguments: ExampleArguments) -> DemoInput {
  if arguments.flag("virtual") { return .virtual }
  let files = arguments.positional + (arguments.allValues["file"] ?? [])
  if let file = files.first { return .file(file) }
  // A real camera makes it a device demo (with the real microphone if there is one); a
  // microphone alone does not: the demo is about pictures compared with their source.
  let devices = WCSApi2.getMediaDevices()
  let camera = devices?.video.first { !ExampleMedia.isSynthetic($0.deviceID) }
  let microphone = devices?.audio.first { !ExampleMedia.isSynthetic($0.deviceID) }
  if camera != nil { return .devices(camera: camera, microphone: microphone) }
  if FileManager.default.fileExists(atPath: defaultMovie) { return .file(defaultMovie) }
  return .virtual
}

func runDemo(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") || argv.contains("-h") {
    log.plain(usage)
    return 0
  }
  let arguments: ExampleArguments
  let width: Int
  let height: Int
  let fps: Int
  let bitrate: Int
  let minPSNR: Double
  let maxAVDelay: Double
  let limits: PlaybackLimits
  let codec: String
  do {
    arguments = try ExampleArguments(
      argv, booleanFlags: ["virtual", "server-log", "window"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    width = try arguments.int("width", default: 640)
    height = try arguments.int("height", default: 360)
    fps = try arguments.int("fps", default: 30)
    bitrate = try arguments.int("bitrate", default: 0)
    minPSNR = try arguments.double("min-psnr", default: 30)
    maxAVDelay = try arguments.double("max-av-delay", default: 60) / 1000
    limits = try PlaybackLimits(arguments)
    codec = (arguments.string("codec", default: "vp8") ?? "vp8").lowercased()
    guard ["vp8", "h264"].contains(codec) else {
      throw ExampleError.usage("--codec wants vp8 or h264, got \(codec)")
    }
    for (name, value) in [("width", width), ("height", height), ("fps", fps)] where value <= 0 {
      throw ExampleError.usage("--\(name) wants a positive integer, got \(value)")
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  let out = arguments.string("out", default: "demo-output") ?? "demo-output"
  var summary = ExampleSummary()

  let input = chooseInput(arguments)
  var duration: Double
  // A file with sound and no pictures is published and checked as audio only.
  var audioOnly = false
  do {
    if case .file(let path) = input {
      guard FileManager.default.fileExists(atPath: path) else {
        throw ExampleError.failed("no such file \(path)")
      }
      duration = ExampleMedia.fileDuration(path).flatMap { $0 > 0 ? $0 : nil } ?? 8
      if let tracks = ExampleMedia.fileTracks(path) {
        guard tracks.video || tracks.audio else {
          throw ExampleError.failed("\(path) has neither a video nor an audio stream")
        }
        audioOnly = !tracks.video
      }
    } else {
      duration = 8
    }
    duration = try arguments.double("duration", default: duration)
    guard duration > 0 else {
      throw ExampleError.usage("--duration wants a positive number of seconds, got \(duration)")
    }
    try ExampleMedia.makeDirectory(out)
  } catch {
    log.plain("wcs-demo: \(error)")
    if case .usage = error as? ExampleError { return 64 }
    return 1
  }
  let files = arguments.positional + (arguments.allValues["file"] ?? [])
  if files.count > 1 { log.line("publishing the first of \(files.count) files") }
  log.line(
    "input: \(input.description)\(audioOnly ? " (audio only)" : ""), publishing "
      + "\(String(format: "%.1f", duration)) s")
  summary.add("Input", input.description + (audioOnly ? " (audio only)" : ""))

  let server: ExampleServer
  do {
    server = try ExampleServer(arguments: arguments, log: log)
  } catch {
    log.plain("wcs-demo: \(error)")
    return 1
  }
  defer { server.stop() }
  summary.add("Server", server.url + (server.isLocal ? " (local, in-process)" : ""))

  // The checks look at the first seconds only; keeping a whole long run's pictures in memory
  // would take duration × fps × W×H×1.5 bytes (2.5 GB for a minute of 720p).
  let keptSeconds = min(duration, 30) + 2
  let playedAudio = PlayedAudioRecorder(
    path: out + "/played.wav", keepSeconds: keptSeconds, log: log)
  let audioCaptured = playedAudio.install()
  let played = VideoFileRenderer(
    path: out + "/played.y4m", frameRate: fps,
    keepPictures: Int(keptSeconds * Double(min(fps, 1000))),
    log: log, event: "first decoded frame")
  let sent = VideoFileRenderer(path: nil, log: log, event: "first sent frame")
  let report = RunReport.requested(arguments, title: "wcs-demo: \(input.description)")

  // 1. Connect.
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
  session.on(.fpwcsSessionStatusEstablished) { log.session($0) }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  func finish(_ summary: inout ExampleSummary) -> Int32 {
    session.disconnect()
    _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)
    if let (report, path) = report { report.finish(writingTo: path, log: log, summary: &summary) }
    return summary.print(to: log)
  }

  guard
    log.wait(for: ["session ESTABLISHED", "session FAILED"], timeout: 10) == "session ESTABLISHED"
  else {
    summary.fail("session did not reach ESTABLISHED")
    return finish(&summary)
  }

  // 2. Publish with recording.
  let streamName = "demo-\(UInt32.random(in: 0...UInt32.max))"
  let constraints = FPWCSApi2MediaConstraints()
  let audio = FPWCSApi2AudioConstraints()
  let video = FPWCSApi2VideoConstraints()
  video.minWidth = width
  video.maxWidth = width
  video.minHeight = height
  video.maxHeight = height
  video.minFrameRate = fps
  video.maxFrameRate = fps
  video.bitrate = bitrate
  var publishesAudio = true
  switch input {
  case .file(let path):
    audio.deviceID = ExampleMedia.fileDeviceID(path)
    video.deviceID = ExampleMedia.fileDeviceID(path)
    publishesAudio = ExampleMedia.fileTracks(path)?.audio ?? true
  case .devices(let camera, let microphone):
    audio.deviceID = microphone?.deviceID
    video.deviceID = camera?.deviceID
  case .virtual:
    break
  }
  constraints.audio = publishesAudio ? audio : nil
  constraints.video = audioOnly ? nil : video

  // --window: what is sent and what plays back, side by side on the desktop.
  let sentWindow =
    audioOnly ? nil : ExampleWindow.open(arguments, title: "sent: \(streamName)", log: log)
  let playedWindow =
    audioOnly ? nil : ExampleWindow.open(arguments, title: "played: \(streamName)", log: log)
  defer {
    sentWindow?.close()
    playedWindow?.close()
  }
  let publishOptions = FPWCSApi2StreamOptions()
  publishOptions.name = streamName
  // The newest sent picture is kept for the report's thumbnails.
  let sentPictures = LastFrameRenderer(wrapping: ExampleWindow.display(sent, and: sentWindow))
  publishOptions.display = sentPictures
  publishOptions.constraints = constraints
  publishOptions.record = true
  publishOptions.preferredVideoCodec = codec == "h264" ? "H264" : "VP8"
  let publishStream: FPWCSApi2Stream
  do {
    publishStream = try session.createStream(publishOptions)
  } catch {
    summary.fail("Failed to publish: \(error)")
    return finish(&summary)
  }
  publishStream.on(.fpwcsStreamStatusPublishing) { log.stream("publish", $0) }
  publishStream.on(.fpwcsStreamStatusUnpublished) { log.stream("publish", $0) }
  publishStream.on(.fpwcsStreamStatusFailed) { log.stream("publish", $0) }
  do {
    try publishStream.publish()
  } catch {
    summary.fail("Failed to publish: \(error)")
    return finish(&summary)
  }
  // A FAILED stream or a lost session ends the run at once, with its reason.
  var endEvents = ["publish FAILED", "session FAILED", "session DISCONNECTED"]
  guard log.wait(for: "publish PUBLISHING", unless: endEvents, timeout: 15, in: &summary) else {
    return finish(&summary)
  }

  // 3. Play the same stream back.
  let playOptions = FPWCSApi2StreamOptions()
  playOptions.name = streamName
  playOptions.display = ExampleWindow.display(played, and: playedWindow)
  let playStream: FPWCSApi2Stream
  do {
    playStream = try session.createStream(playOptions)
  } catch {
    summary.fail("Failed to play: \(error)")
    return finish(&summary)
  }
  playStream.on(.fpwcsStreamStatusPlaying) { log.stream("play", $0) }
  playStream.on(.fpwcsStreamStatusStopped) { log.stream("play", $0) }
  playStream.on(.fpwcsStreamStatusFailed) { log.stream("play", $0) }
  playStream.on(.fpwcsStreamStatusNotEnoughtBandwidth) {
    log.line(ExampleText.notEnoughBandwidth($0))
  }
  do {
    try playStream.play()
  } catch {
    summary.fail("Failed to play: \(error)")
  }
  endEvents.append("play FAILED")
  _ = log.wait(for: "play PLAYING", unless: endEvents, timeout: 15, in: &summary)
  // What was sent before the player joined never reaches it: the share counts from here.
  let publisherAtPlaying = PlaybackStats.publisherNow(publishStream)

  // 4. Let it run, sampling the counters every second.
  let publishStart = log.time(of: "publish PUBLISHING") ?? log.elapsed
  var publishStats: FPWCSApi2StreamStats?
  var playStats: FPWCSApi2StreamStats?
  var sentBitrates: [Int] = []
  var receivedBitrates: [Int] = []
  var samples = 0
  while summary.succeeded, log.elapsed < publishStart + duration,
    log.time(of: ExampleWindow.closedEvent) == nil, !log.failIfEnded(endEvents, in: &summary)
  {
    Thread.sleep(forTimeInterval: min(1, max(0.05, publishStart + duration - log.elapsed)))
    publishStats = ExampleStats.read(publishStream) ?? publishStats
    playStats = ExampleStats.read(playStream) ?? playStats
    if let (report, _) = report {
      report.sample(at: log.elapsed, publisher: publishStats, player: playStats)
      samples += 1
      if samples % 2 == 1 {
        report.thumbnails(
          at: log.elapsed, source: sentPictures.lastPicture, played: playStream.lastPlayedPicture)
      }
    }
    if let rate = publishStats?.currentVideoBitrate, rate > 0 { sentBitrates.append(rate) }
    if let rate = playStats?.currentVideoBitrate, rate > 0 { receivedBitrates.append(rate) }
    log.line(
      "sent \(sent.frameCount) frames, decoded \(played.frameCount), audio blocks "
        + "\(playedAudio.blockCount)")
  }

  // 5. Stop: the player gets STOPPED, the publisher UNPUBLISHED with the record name. The
  // counters are read first: a stopped stream has no connection left to read.
  let playback = PlaybackStats.read(
    publisher: publishStream, player: playStream, atPlaying: publisherAtPlaying, log: log)
  let recordNameAtPublish = publishStream.getRecordName()
  do {
    try publishStream.stop()
  } catch {
    summary.fail("stopping the published stream: \(error)")
  }
  if log.wait(for: ["publish UNPUBLISHED"] + endEvents, timeout: 10) == nil {
    summary.fail("publishing did not reach UNPUBLISHED")
  }
  if log.wait(for: ["play STOPPED"] + endEvents, timeout: 5) == nil {
    try? playStream.stop()
    _ = log.wait(for: ["play STOPPED"] + endEvents, timeout: 5)
  }
  let recordName = publishStream.getRecordName() ?? recordNameAtPublish
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  // 6. Files and checks.
  let playedVideoPath = played.finish()
  let playedAudioPath = playedAudio.finish()
  var record: RecordFile?
  if let recordName, !recordName.isEmpty {
    do {
      record = try RecordFile.download(
        recordName: recordName, recordsURL: server.recordsURL, directory: out, log: log)
    } catch {
      summary.fail("\(error)")
    }
  } else {
    summary.fail("the server gave no record name")
  }

  var quality: VideoQualityReport?
  var audioDelay: AudioDelayReport?
  var earlyAudioDelay: AudioDelayReport?
  let kept = played.keptFrames
  let playedSize = played.size
  switch input {
  case .file(let path):
    if let size = playedSize, !audioOnly {
      do {
        let source = try SourceMedia.decode(
          path: path, width: size.width, height: size.height,
          seconds: min(duration, keptSeconds + 10) + 1)
        quality = VideoQualityReport.compare(played: kept, source: source)
        let keptAudio = playedAudio.kept
        if let offset = quality?.videoOffset, let start = keptAudio.start, !source.audio.isEmpty {
          // Lip sync acts once the first SRs are in, within about a second of playback: measure
          // as late as possible (up to 4 s in), in the latest window whose sound is distinctive
          // enough to match one place of the source (a steady tone matches anywhere).
          let playedSeconds = Double(keptAudio.samples.count) / 48_000
          let latest = max(1.0, min(4.0, playedSeconds - 1.0))
          var candidates: [AudioDelayReport] = []
          for windowStart in stride(from: latest, through: 1.0, by: -0.5) {
            guard
              let report = AudioDelayReport.measure(
                played: keptAudio.samples, playedStart: start, source: source,
                videoOffset: offset, windowStart: windowStart)
            else { continue }
            candidates.append(report)
            if report.distinctness >= 0.15 { break }
          }
          // A steady tone matches every period alike: when every window repeats, there is
          // no delay to give (nor to fail on).
          let distinct = candidates.filter { !$0.periodic }
          audioDelay =
            distinct.first { $0.distinctness >= 0.15 }
            ?? distinct.max { $0.distinctness < $1.distinctness } ?? candidates.first
          if let audioDelay, !audioDelay.periodic, audioDelay.windowStart != 1.0 {
            earlyAudioDelay = AudioDelayReport.measure(
              played: keptAudio.samples, playedStart: start, source: source, videoOffset: offset)
          }
        }
      } catch {
        summary.fail("\(error)")
      }
    }
  case .virtual:
    quality = VideoQualityReport.compareVirtual(played: kept, frameRate: fps)
  case .devices:
    break
  }

  // 7. Summary.
  func since(_ event: String) -> Double? { log.time(of: event) }
  summary.addTime("Time to ESTABLISHED", since("session ESTABLISHED"))
  summary.addTime("Time to PUBLISHING", since("publish PUBLISHING"))
  summary.addTime("Time to PLAYING", since("play PLAYING"))
  var playbackFailures: [String] = []
  if audioOnly {
    // Audio only: the share of the Opus frames sent that were decoded stands for the frames.
    let share = DecodedShare.ofSent(
      decoded: playback.player?.audioFramesDecoded ?? 0, sent: playback.audioFramesSent ?? 0,
      basis: playback.sentBasis)
    summary.add("Audio frames decoded", share.description)
    if playback.publisher != nil, playback.player != nil {
      playbackFailures += limits.failures(share: share, freezes: nil, kind: "audio frames")
    }
    RecoveryReport.add(
      publisher: playback.publisher, player: playback.player, video: false, to: &summary)
  } else {
    summary.addTime("Time to first decoded frame", since("first decoded frame"))
    summary.add("Frames sent", "\(playback.publisher?.framesSent ?? sent.frameCount)")
    summary.add("Frames received and decoded", "\(played.frameCount)")
    if let sentWindow, let playedWindow {
      summary.add(
        "Frames shown in the windows",
        "\(sentWindow.framesShown) sent, \(playedWindow.framesShown) played")
    }
    // Decoded out of what the publisher encoded (out of what the frame rate made due over
    // the playing time with another engine), whatever the PSNR of the frames that arrived.
    playbackFailures += playback.addVideo(
      played: played, start: since("play PLAYING"), frameRate: Double(fps), limits: limits,
      to: &summary)
    summary.add("Played video size", playedSize.map { "\($0.width)x\($0.height)" } ?? "none")
  }
  if audioOnly {
  } else if let quality {
    summary.add(
      "PSNR played vs source",
      String(
        format: "%.2f dB mean, %.2f dB min over %d frames", quality.meanPSNR, quality.minPSNR,
        quality.matchedFrames))
    summary.add(
      "Frame matching",
      "\(quality.method); \(quality.matchedAtTimestamp)/\(quality.matchedFrames) at the timestamp-predicted frame"
    )
    if quality.meanPSNR < minPSNR {
      summary.fail(String(format: "PSNR %.2f dB is below %.1f dB", quality.meanPSNR, minPSNR))
    }
  } else {
    summary.add(
      "PSNR played vs source",
      "n/a (\(playedSize == nil ? "no video played" : "no reference for this input"))")
    if case .devices = input {
    } else {
      summary.fail("no played frame could be compared with the source")
    }
  }
  if let audioDelay, audioDelay.periodic {
    summary.add("Audio delay", "n/a (periodic audio)")
    summary.add(
      "Audio delay method",
      String(
        format: "the source repeats within the search window (a steady tone): every period "
          + "matches alike (match %.2f better than any other lag)", audioDelay.distinctness))
  } else if let audioDelay, audioDelay.ambiguous {
    // Several lags match about as well: the best one is chance, nothing to pass or fail on.
    summary.add("Audio delay", "n/a (no lag matches better than the others)")
    summary.add(
      "Audio delay method",
      String(
        format: "cross-correlation peaks within %.2f of each other", audioDelay.distinctness))
  } else if let audioDelay {
    summary.add(
      "Audio delay",
      String(
        format: "%+.0f ms (audio %@ video; correlation %.2f)", audioDelay.delay * 1000,
        audioDelay.delay >= 0 ? "behind" : "ahead of", audioDelay.correlation))
    summary.add("Audio delay method", audioDelay.method)
    summary.add(
      "Audio delay window",
      String(
        format: "%.1f s into playback (match %.2f better than any other lag)",
        audioDelay.windowStart, audioDelay.distinctness))
    if let earlyAudioDelay {
      summary.add(
        "Audio delay at 1 s",
        String(
          format: "%+.0f ms (match %.2f better than any other lag)", earlyAudioDelay.delay * 1000,
          earlyAudioDelay.distinctness))
    }
    if abs(audioDelay.delay) > maxAVDelay {
      summary.fail(
        String(
          format: "audio is %.0f ms %@ video (more than %.0f ms)", abs(audioDelay.delay) * 1000,
          audioDelay.delay >= 0 ? "behind" : "ahead of", maxAVDelay * 1000))
    }
  } else {
    summary.add(
      "Audio delay",
      "n/a (\(!audioCaptured ? "not the native engine" : audioOnly ? "no video to measure against" : "needs a file source with sound"))"
    )
  }
  summary.add("Audio blocks played", "\(playedAudio.blockCount) x 20 ms")
  func kbps(_ values: [Int]) -> String {
    guard !values.isEmpty else { return "n/a" }
    return "\(values.reduce(0, +) / values.count / 1000) kbps"
  }
  if !audioOnly {
    summary.add("Video bitrate sent (mean)", kbps(sentBitrates))
    summary.add("Video bitrate received (mean)", kbps(receivedBitrates))
  }
  if let stats = playback.playerConnection ?? playStats?.connection {
    let lostPercent =
      stats.packetsReceived > 0
      ? Double(max(0, stats.packetsLost)) * 100
        / Double(stats.packetsReceived + UInt64(max(0, stats.packetsLost))) : 0
    summary.add(
      "Packets received / lost",
      "\(stats.packetsReceived) / \(stats.packetsLost) (\(String(format: "%.2f", lostPercent)) % loss)"
    )
  }
  if let stats = publishStats?.connection {
    summary.add("Packets sent", "\(stats.packetsSent) (\(stats.bytesSent / 1000) kB)")
  }
  if let recordName { summary.add("Record name", recordName) }
  if let record {
    summary.add("Record path", record.path)
    summary.add("Record size", "\(record.bytes) bytes")
    summary.add(
      "Record duration",
      record.duration.map { String(format: "%.2f s (ffprobe)", $0) }
        ?? "unknown (WebM header checked; no ffprobe)")
    if let recorded = record.duration, recorded < 0.5 {
      summary.fail("the record lasts only \(recorded) s")
    }
    if let tracks = ExampleMedia.fileTracks(record.path) {
      summary.add(
        "Record tracks",
        [tracks.video ? "video" : nil, tracks.audio ? "audio" : nil].compactMap { $0 }
          .joined(separator: " + "))
      if audioOnly, publishesAudio, !tracks.audio { summary.fail("the record has no audio track") }
    }
  }
  switch playedVideoPath {
  case .success(let path) where audioOnly && path == nil: break
  case .success(let path): summary.add("Played video written to", path ?? "nothing (no frames)")
  case .failure(let error): summary.fail("\(error)")
  }
  switch playedAudioPath {
  case .success(let path): summary.add("Played audio written to", path ?? "nothing (no audio)")
  case .failure(let error): summary.fail("\(error)")
  }
  if since("session ESTABLISHED") == nil { summary.fail("no ESTABLISHED") }
  if since("play PLAYING") == nil { summary.fail("no PLAYING") }
  if played.frameCount == 0, !audioOnly { summary.fail("no video frame was decoded") }
  for failure in playbackFailures { summary.fail(failure) }
  if playedAudio.blockCount == 0, audioCaptured, publishesAudio {
    summary.fail("no audio was played")
  }
  if let (report, path) = report { report.finish(writingTo: path, log: log, summary: &summary) }
  return summary.print(to: log)
}

exit(runDemo(Array(CommandLine.arguments.dropFirst())))
