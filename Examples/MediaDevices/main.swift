// MediaDevices (iOS: Swift/MediaDevices): list cameras and microphones; publish with the
// chosen devices and constraints; play with the player's own constraints; a local media test
// (getMediaAccess) with a microphone level meter; mute and unmute before or during publishing
// (keys a/v when standard input is a terminal, or --mute-during); the media transport, codecs
// stripped from the offers, the connection-quality callback of the published stream, and
// Basic-auth headers on the WebSocket (from the URL's user:password@, as the iOS example does).
import ExampleSupport
import FPWCSApi2Swift
import Foundation

let usage = """
  usage: MediaDevices [options]

  Devices:   --list (list and exit)  --camera ID|LABEL  --microphone ID|LABEL
             --file PATH (adds a file as a camera and a microphone)
  Publish:   --publish NAME  --width W --height H --fps F  --bitrate KBPS
             --audio-bitrate BPS  --fec  --stereo  --no-audio  --no-video
             --mute-audio  --mute-video (before publishing)
             --mute-during (mute at 1/3 and unmute at 2/3 of the run)
  Play:      --play NAME  --no-play-video  --play-width W  --play-height H
             --play-bitrate KBPS  --quality Q
  Test:      --test [--test-seconds S] (local camera + microphone level meter, no server)
             --window (with --test: the getMediaAccess preview in a window, X11 or Wayland)
  Streams:   --transport udp|tcp (media transport, default udp)
             --strip-codecs LIST (comma-separated codec names to remove from the offers)
             --no-connection-quality (no quality callback on the published stream)
  Connect:   --auth USER:PASSWORD (Authorization: Basic on the WebSocket upgrade; also taken
             from a --url of the form ws://user:password@host:8080)
  Run:       --duration S (default 6)  --out DIR (default ./example-output)
  Keys while running (terminal only): a = mute/unmute audio, v = mute/unmute video, q = stop
  \(ExampleServer.usage)
  """

final class Settings {
  var publishName = "stream1"
  var playName = "stream1"
  var camera: String?
  var microphone: String?
  var audioSend = true
  var audioFEC = false
  var audioStereo = false
  var audioBitrate = 0
  var videoSend = true
  var videoWidth = 640
  var videoHeight = 480
  var videoFPS = 30
  var videoBitrate = 0
  var playVideo = true
  var remoteVideoWidth = 0
  var remoteVideoHeight = 0
  var remoteVideoBitrate = 0
  var videoQuality = 0
  var transport = kFPWCSTransport.fpwcsTransportUDP
  var stripCodecs: [String] = []
}

func find(_ wanted: String?, in devices: [FPWCSApi2MediaDevice]) -> FPWCSApi2MediaDevice? {
  guard let wanted else { return devices.first }
  return devices.first { $0.deviceID == wanted || $0.label == wanted }
}

// Constraints for the published stream (the iOS toLocalMediaConstraints).
func localMediaConstraints(_ settings: Settings, _ devices: FPWCSApi2MediaDeviceList?)
  -> FPWCSApi2MediaConstraints
{
  let ret = FPWCSApi2MediaConstraints()
  if settings.audioSend {
    let audio = FPWCSApi2AudioConstraints()
    audio.useFEC = settings.audioFEC
    audio.useStereo = settings.audioStereo
    audio.bitrate = settings.audioBitrate
    // A name that matches no listed device goes to the engine as an id, which refuses it with
    // its reason, rather than silently becoming the default device.
    audio.deviceID =
      find(settings.microphone, in: devices?.audio ?? [])?.deviceID
      ?? settings.microphone
    ret.audio = audio
  }
  if settings.videoSend {
    let video = FPWCSApi2VideoConstraints()
    video.deviceID = find(settings.camera, in: devices?.video ?? [])?.deviceID ?? settings.camera
    video.minWidth = settings.videoWidth
    video.maxWidth = video.minWidth
    video.minHeight = settings.videoHeight
    video.maxHeight = video.minHeight
    video.minFrameRate = settings.videoFPS
    video.maxFrameRate = video.minFrameRate
    video.bitrate = settings.videoBitrate
    ret.video = video
  }
  return ret
}

// Constraints for the played stream (the iOS toRemoteMediaConstraints).
func remoteMediaConstraints(_ settings: Settings) -> FPWCSApi2MediaConstraints {
  let ret = FPWCSApi2MediaConstraints()
  ret.audio = FPWCSApi2AudioConstraints()
  if settings.playVideo {
    let video = FPWCSApi2VideoConstraints()
    video.minWidth = settings.remoteVideoWidth
    video.maxWidth = video.minWidth
    video.minHeight = settings.remoteVideoHeight
    video.maxHeight = video.minHeight
    video.bitrate = settings.remoteVideoBitrate
    video.quality = settings.videoQuality
    ret.video = video
  }
  return ret
}

func runMediaDevices(_ argv: [String]) -> Int32 {
  let log = ExampleLog()
  if argv.contains("--help") {
    log.plain(usage)
    return 0
  }
  let settings = Settings()
  let arguments: ExampleArguments
  let duration: Double
  let testSeconds: Double
  do {
    arguments = try ExampleArguments(
      argv,
      booleanFlags: [
        "list", "fec", "stereo", "mute-audio", "mute-video", "mute-during", "test", "server-log",
        "connection-quality", "window",
      ], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    duration = try arguments.double("duration", default: 6)
    guard duration > 0 else {
      throw ExampleError.usage("--duration wants a positive number of seconds, got \(duration)")
    }
    testSeconds = try arguments.double("test-seconds", default: 2)
    settings.videoWidth = try arguments.int("width", default: 640)
    settings.videoHeight = try arguments.int("height", default: 480)
    settings.videoFPS = try arguments.int("fps", default: 30)
    settings.videoBitrate = try arguments.int("bitrate", default: 0)
    settings.audioBitrate = try arguments.int("audio-bitrate", default: 0)
    settings.remoteVideoWidth = try arguments.int("play-width", default: 0)
    settings.remoteVideoHeight = try arguments.int("play-height", default: 0)
    settings.remoteVideoBitrate = try arguments.int("play-bitrate", default: 0)
    settings.videoQuality = try arguments.int("quality", default: 0)
    switch arguments.string("transport", default: "udp")?.lowercased() {
    case "udp": settings.transport = .fpwcsTransportUDP
    case "tcp": settings.transport = .fpwcsTransportTCP
    case let other:
      throw ExampleError.usage("--transport wants udp or tcp, got \(other ?? "nothing")")
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  settings.publishName =
    arguments.string("publish") ?? "stream-\(UInt16.random(in: 0...UInt16.max))"
  settings.playName = arguments.string("play") ?? settings.publishName
  settings.camera = arguments.string("camera")
  settings.microphone = arguments.string("microphone")
  settings.audioFEC = arguments.flag("fec")
  settings.audioStereo = arguments.flag("stereo")
  settings.audioSend = arguments.flag("audio", default: true)
  settings.videoSend = arguments.flag("video", default: true)
  settings.playVideo = arguments.flag("play-video", default: true)
  settings.stripCodecs = (arguments.string("strip-codecs") ?? "").split(separator: ",").map {
    $0.trimmingCharacters(in: .whitespaces)
  }.filter { !$0.isEmpty }
  let qualityCalculation = arguments.flag("connection-quality", default: true)
  let out = arguments.string("out", default: "example-output") ?? "example-output"
  if let file = arguments.string("file") {
    do {
      try ExampleMedia.checkMediaFile(file)
    } catch {
      log.plain("MediaDevices: \(error)")
      return 1
    }
    ExampleMedia.addFileSources([file])
  }
  var summary = ExampleSummary()

  // List devices (viewDidLoad): the first of each is the default.
  let localDevices = WCSApi2.getMediaDevices()
  log.plain("Cameras:")
  for device in localDevices?.video ?? [] { log.plain("  \(device.deviceID)  \(device.label)") }
  log.plain("Microphones:")
  for device in localDevices?.audio ?? [] { log.plain("  \(device.deviceID)  \(device.label)") }
  log.plain("Resolutions: " + FPWCSApi2.getSupportedVideoResolutions().joined(separator: " "))
  summary.add("Cameras", "\(localDevices?.video.count ?? 0)")
  summary.add("Microphones", "\(localDevices?.audio.count ?? 0)")
  if arguments.flag("list") { return summary.print(to: log) }

  // Local camera and microphone test.
  if arguments.flag("test") {
    let files = VideoFileRenderer(path: nil, log: log, event: "first test frame")
    // The iOS example's local preview view: a window, when asked for and a display is there.
    let window = ExampleWindow.open(arguments, title: "MediaDevices: local test", log: log)
    defer { window?.close() }
    let localDisplay = ExampleWindow.display(files, and: window)
    let constraints = localMediaConstraints(settings, localDevices)
    do {
      try WCSApi2.getMediaAccess(constraints, localDisplay)
    } catch {
      summary.fail("getMediaAccess: \(error)")
    }
    let meter = MicrophoneLevelMeter.start(deviceID: constraints.audio?.deviceID)
    let start = log.elapsed
    var levels: [Double] = []
    while log.elapsed < start + testSeconds {
      Thread.sleep(forTimeInterval: 0.5)
      let level = meter?.current ?? 0
      levels.append(level)
      log.line("microphone \(AudioLevel.meter(level)), camera frames \(files.frameCount)")
      if log.time(of: ExampleWindow.closedEvent) != nil { break }
    }
    meter?.stop()
    WCSApi2.releaseLocalMedia(display: localDisplay)
    summary.add("Test camera frames", "\(files.frameCount)")
    if let window { summary.add("Frames shown in the window", "\(window.framesShown)") }
    summary.add("Test microphone level", AudioLevel.meter(levels.max() ?? 0))
    if files.frameCount == 0 { summary.fail("the camera test showed no frame") }
    if meter == nil { summary.add("Test microphone", "no level for this device") }
    return summary.print(to: log)
  }

  let server: ExampleServer
  do {
    try ExampleMedia.makeDirectory(out)
    server = try ExampleServer(arguments: arguments, log: log)
  } catch {
    log.plain("MediaDevices: \(error)")
    return 1
  }
  defer { server.stop() }
  let localDisplay = VideoFileRenderer(path: nil, log: log, event: "first local frame")
  let remoteDisplay = VideoFileRenderer(
    path: out + "/\(settings.playName).y4m", log: log, event: "first remote frame")

  // Session creation and connection.
  // Basic authorization from --auth or the URL's user:password@ (which leaves the URL).
  let credentials = BasicAuthorization(url: server.url, credentials: arguments.string("auth"))
  let options = FPWCSApi2SessionOptions()
  options.urlServer = credentials.url
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
  if let header = credentials.header {
    log.line("connecting with Authorization: Basic for user \(credentials.user ?? "")")
    session.connect(withHeaders: ["Authorization": header])
  } else {
    session.connect()
  }
  guard
    log.wait(for: ["session ESTABLISHED", "session FAILED"], timeout: 10) == "session ESTABLISHED"
  else {
    summary.fail("no ESTABLISHED")
    return summary.print(to: log)
  }

  // Publishing with the local constraints; mute switches work before publishing too.
  let publishOptions = FPWCSApi2StreamOptions()
  publishOptions.name = settings.publishName
  publishOptions.display = localDisplay
  publishOptions.constraints = localMediaConstraints(settings, localDevices)
  publishOptions.transport = settings.transport
  publishOptions.stripCodecs = settings.stripCodecs
  let publishStream: WCSStream
  do {
    publishStream = try session.createStream(publishOptions)
  } catch {
    summary.fail("Failed to publish: \(error)")
    return summary.print(to: log)
  }
  publishStream.on(.fpwcsStreamStatusPublishing) { log.stream("publish", $0) }
  // The quality class of the published stream, printed when it changes (the iOS label).
  let quality = ConnectionQualityLog(log: log)
  if qualityCalculation {
    publishStream.enableConnectionQualityCalculation(true)
    publishStream.onConnectionQualityCallback { quality.update($0, client: $1, server: $2) }
  }
  publishStream.on(.fpwcsStreamStatusUnpublished) { log.stream("publish", $0) }
  publishStream.on(.fpwcsStreamStatusFailed) { log.stream("publish", $0) }
  if arguments.flag("mute-audio") { publishStream.muteAudio() }
  if arguments.flag("mute-video") { publishStream.muteVideo() }
  do {
    try publishStream.publish()
  } catch {
    summary.fail("Failed to publish: \(error)")
  }
  // A FAILED stream or a lost session ends the run at once, with its reason.
  var endEvents = ["publish FAILED", "session FAILED", "session DISCONNECTED"]
  _ = log.wait(for: "publish PUBLISHING", unless: endEvents, timeout: 15, in: &summary)

  // Playing with the remote constraints; remote mute events are printed.
  let playOptions = FPWCSApi2StreamOptions()
  playOptions.name = settings.playName
  playOptions.display = remoteDisplay
  playOptions.constraints = remoteMediaConstraints(settings)
  playOptions.transport = settings.transport
  playOptions.stripCodecs = settings.stripCodecs
  var playStream: WCSStream?
  if summary.succeeded {
    do {
      playStream = try session.createStream(playOptions)
    } catch {
      // Refused options (e.g. a negative --play-width) say why instead of "no frame was played".
      summary.fail("Failed to play: \(error)")
    }
  }
  if let playStream {
    endEvents.append("play FAILED")
    playStream.on(.fpwcsStreamStatusPlaying) { rStream in
      log.stream("play", rStream)
      log.line("audio muted by publisher: \(rStream?.getAudioState()?.muted ?? false)")
    }
    playStream.on(.fpwcsStreamStatusStopped) { log.stream("play", $0) }
    playStream.on(.fpwcsStreamStatusFailed) { log.stream("play", $0) }
    playStream.onStreamEvent { event in
      guard let event else { return }
      log.line("stream event: \(event.type)")
      log.mark("event " + event.type)
    }
    do {
      try playStream.play()
    } catch {
      summary.fail("Failed to play: \(error)")
    }
    _ = log.wait(for: "play PLAYING", unless: endEvents, timeout: 15, in: &summary)
  }
  let publisherAtPlaying = PlaybackStats.publisherNow(publishStream.stream)

  // Run; mute and unmute by key or on schedule.
  // The iOS switches: the stream's local mute state decides what the key does.
  @Sendable func toggleAudio() {
    if publishStream.stream.isAudioMuted() {
      publishStream.unmuteAudio()
      log.line("audio unmuted")
    } else {
      publishStream.muteAudio()
      log.line("audio muted")
    }
  }
  @Sendable func toggleVideo() {
    if publishStream.stream.isVideoMuted() {
      publishStream.unmuteVideo()
      log.line("video unmuted")
    } else {
      publishStream.muteVideo()
      log.line("video muted")
    }
  }
  let keys = KeyReader.start { key in
    switch key {
    case "a": toggleAudio()
    case "v": toggleVideo()
    case "q": log.mark("quit")
    default: break
    }
  }
  if keys != nil { log.line("keys: a = mute/unmute audio, v = mute/unmute video, q = stop") }
  let start = log.elapsed
  var mutedDuring = false
  var unmutedDuring = false
  while summary.succeeded, log.elapsed < start + duration, log.time(of: "quit") == nil,
    !log.failIfEnded(endEvents, in: &summary)
  {
    if arguments.flag("mute-during") {
      if !mutedDuring, log.elapsed >= start + duration / 3 {
        mutedDuring = true
        publishStream.muteAudio()
        publishStream.muteVideo()
        log.line("muted audio and video while publishing")
      }
      if !unmutedDuring, log.elapsed >= start + 2 * duration / 3 {
        unmutedDuring = true
        publishStream.unmuteAudio()
        publishStream.unmuteVideo()
        log.line("unmuted audio and video")
      }
    }
    Thread.sleep(forTimeInterval: 0.05)
  }
  keys?.stop()
  let playStats = ExampleStats.read(session.getStreams().first { !$0.isPublished() })
  let playback = PlaybackStats.read(
    publisher: settings.playName == settings.publishName ? publishStream.stream : nil,
    player: session.getStreams().first { !$0.isPublished() }?.stream,
    atPlaying: publisherAtPlaying, log: log)
  for stream in session.getStreams() { try? stream.stop() }
  _ = log.wait(for: ["publish UNPUBLISHED"] + endEvents, timeout: 5)
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  summary.addTime("Time to ESTABLISHED", log.time(of: "session ESTABLISHED"))
  summary.addTime("Time to PUBLISHING", log.time(of: "publish PUBLISHING"))
  summary.addTime("Time to PLAYING", log.time(of: "play PLAYING"))
  summary.add("Frames sent", "\(localDisplay.frameCount)")
  summary.add("Frames received and decoded", "\(remoteDisplay.frameCount)")
  if settings.playVideo {
    playback.addVideo(played: remoteDisplay, start: log.time(of: "play PLAYING"), to: &summary)
  }
  summary.add(
    "Played video size", remoteDisplay.size.map { "\($0.width)x\($0.height)" } ?? "none")
  summary.add("Video bitrate received", "\((playStats?.currentVideoBitrate ?? 0) / 1000) kbps")
  let events = ["audioMuted", "audioUnmuted", "videoMuted", "videoUnmuted"].filter {
    log.time(of: "event " + $0) != nil
  }
  summary.add("Stream events", events.isEmpty ? "none" : events.joined(separator: ", "))
  summary.add("Transport", settings.transport == .fpwcsTransportTCP ? "TCP" : "UDP")
  summary.add(
    "Stripped codecs",
    settings.stripCodecs.isEmpty ? "none" : settings.stripCodecs.joined(separator: ","))
  summary.add("Authorization", credentials.user.map { "Basic, user \($0)" } ?? "none")
  if qualityCalculation { summary.add("Connection quality", quality.summary) }
  switch remoteDisplay.finish() {
  case .success(let path): summary.add("Played video written to", path ?? "nothing")
  case .failure(let error): summary.fail("\(error)")
  }
  if summary.succeeded, settings.playVideo, settings.videoSend, !arguments.flag("mute-video"),
    remoteDisplay.frameCount == 0
  {
    summary.fail("no frame was played")
  }
  return summary.print(to: log)
}

exit(runMediaDevices(Array(CommandLine.arguments.dropFirst())))
