// StreamRecording (iOS: WCSExample/StreamRecording): publish with `record`, get the record
// name, and when the stream stops download the record over HTTP and check it (ffprobe when
// installed, else the WebM header) — where the iOS example hands the link to its player.
import ExampleSupport
import FPWCSApi2Swift
import Foundation
import Synchronization

let usage = """
  usage: StreamRecording [options]

    --stream NAME        stream name (default: the --url path as in the iOS example, else random)
    --file PATH          publish this media file (default: the virtual camera and microphone)
    --width W --height H --fps F   published video (iPad constraints; default 640x480, 30 fps)
    --duration S         seconds to record (default 4)
    --out DIR            where the record is saved (default ./example-output)
  \(ExampleServer.usage)
  """

func runStreamRecording(_ argv: [String]) -> Int32 {
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
  do {
    arguments = try ExampleArguments(argv, booleanFlags: ["server-log"], usage: usage)
    try ExampleNetwork.install(arguments, log: log)
    width = try arguments.int("width", default: 640)
    height = try arguments.int("height", default: 480)
    fps = try arguments.int("fps", default: 30)
    duration = try arguments.double("duration", default: 4)
    guard duration > 0 else {
      throw ExampleError.usage("--duration wants a positive number of seconds, got \(duration)")
    }
  } catch {
    log.plain("\(error)\n\n\(usage)")
    return 64
  }
  // As in the iOS example: scheme://host:port from the URL, the path is the stream name.
  let streamName = arguments.streamNameFromURLPath(of: argv) { path in
    (path as NSString).deletingPathExtension.replacingOccurrences(of: "/", with: "")
  }
  let name = streamName ?? "record-\(UInt16.random(in: 0...UInt16.max))"
  let file = arguments.string("file")
  var summary = ExampleSummary()
  guard let (server, out) = ExampleServer.start("StreamRecording", arguments: arguments, log: log)
  else { return 1 }
  defer { server.stop() }
  let remoteDisplay = VideoFileRenderer(path: nil, log: log, event: "first local frame")

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
  let recordName = RecordNameBox()
  session.on(.fpwcsSessionStatusEstablished) { rSession in
    log.session(rSession)
    // Publishing with record = true.
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.display = remoteDisplay
    options.record = true
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
      rSession?.disconnect()
      return
    }
    stream.on(.fpwcsStreamStatusPublishing) { rStream in
      recordName.set(rStream?.getRecordName())
      log.stream("publish", rStream)
    }
    stream.on(.fpwcsStreamStatusUnpublished) { rStream in
      recordName.set(rStream?.getRecordName())
      log.stream("publish", rStream)
    }
    stream.on(.fpwcsStreamStatusFailed) { rStream in
      log.stream("publish", rStream)
      rSession?.disconnect()
    }
    do {
      try stream.publish()
    } catch {
      log.streamRefused("publish", name, error)
      rSession?.disconnect()
    }
  }
  session.on(.fpwcsSessionStatusDisconnected) { log.session($0) }
  session.on(.fpwcsSessionStatusFailed) { log.session($0) }
  session.connect()

  // A FAILED stream or a lost session ends the run at once, with its reason.
  let endEvents = ["publish FAILED", "session FAILED", "session DISCONNECTED"]
  _ = log.wait(for: "publish PUBLISHING", unless: endEvents, timeout: 20, in: &summary)
  let start = log.elapsed
  while summary.succeeded, log.elapsed < start + duration,
    !log.failIfEnded(endEvents, in: &summary)
  {
    Thread.sleep(forTimeInterval: 0.05)
  }
  // Stop: the record is finished when the stream is unpublished.
  for stream in session.getStreams() where stream.isPublished() { try? stream.stop() }
  if log.wait(for: ["publish UNPUBLISHED"] + endEvents, timeout: 10) == nil, summary.succeeded {
    summary.fail("no UNPUBLISHED")
  }
  session.disconnect()
  _ = log.wait(for: ["session DISCONNECTED", "session FAILED"], timeout: 5)

  summary.add("Stream", name)
  summary.addTime("Time to ESTABLISHED", log.time(of: "session ESTABLISHED"))
  summary.addTime("Time to PUBLISHING", log.time(of: "publish PUBLISHING"))
  summary.add("Frames sent", "\(remoteDisplay.frameCount)")
  if let record = recordName.get(), !record.isEmpty {
    summary.add("Record name", record)
    summary.add("Record URL", server.recordsURL + record)
    do {
      let file = try RecordFile.download(
        recordName: record, recordsURL: server.recordsURL, directory: out, log: log)
      summary.add("Record path", file.path)
      summary.add("Record size", "\(file.bytes) bytes")
      summary.add(
        "Record duration",
        file.duration.map { String(format: "%.2f s (ffprobe)", $0) }
          ?? "unknown (WebM header checked)")
    } catch {
      summary.fail("\(error)")
    }
  } else if summary.succeeded {
    summary.fail("the server gave no record name")
  }
  return summary.print(to: log)
}

/// The record name, set from the SDK's callback queue and read by the main thread.
final class RecordNameBox: Sendable {
  private let value = Mutex<String?>(nil)
  func set(_ name: String?) {
    guard let name, !name.isEmpty else { return }
    value.withLock { $0 = name }
  }
  func get() -> String? { value.withLock { $0 } }
}

exit(runStreamRecording(Array(CommandLine.arguments.dropFirst())))
