import BenchSupport
import Foundation
import Synchronization
import WCSMedia

/// `Tests/Interop/aiortc_media_peer.py` as a child process speaking JSON lines (see the
/// script's docstring); every read is bounded in time.
final class AiortcPeer: Sendable {
  static let script = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Tests/Interop/aiortc_media_peer.py").path

  private let process = Process()
  private let input = Pipe()
  private let lines = Mutex<[Data]>([])
  private let arrived = DispatchSemaphore(value: 0)

  init(mode: String, width: Int, height: Int) throws {
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", Self.script, mode, "\(width)", "\(height)"]
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let handle = output.fileHandleForReading
    Thread.detachNewThread { [self] in
      var buffer = Data()
      while true {
        let chunk = handle.availableData
        if chunk.isEmpty { break }
        buffer.append(chunk)
        while let newline = buffer.firstIndex(of: 0x0A) {
          let line = Data(buffer[buffer.startIndex..<newline])
          buffer.removeSubrange(buffer.startIndex...newline)
          lines.withLock { $0.append(line) }
          arrived.signal()
        }
      }
      arrived.signal()
    }
  }

  func send(_ object: [String: Any]) {
    guard var data = try? JSONSerialization.data(withJSONObject: object) else { return }
    data.append(0x0A)
    try? input.fileHandleForWriting.write(contentsOf: data)
  }

  /// The next line with `key` (or `event` == key), skipping others; nil after `timeout` s.
  func read(_ key: String, timeout: Double) -> [String: Any]? {
    let deadline = DispatchTime.now() + timeout
    while true {
      // Lines before the one asked for (state events, stale replies) are dropped.
      while let line = lines.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
        guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else {
          continue
        }
        if object[key] != nil || object["event"] as? String == key { return object }
      }
      if arrived.wait(timeout: deadline) == .timedOut { return nil }
      if !process.isRunning, lines.withLock({ $0.isEmpty }) { return nil }
    }
  }

  func answer(_ offer: String) -> String? {
    send(["offer": offer])
    return read("answer", timeout: 20)?["answer"] as? String
  }

  func report() -> [String: Any]? {
    send(["cmd": "report"])
    return read("report", timeout: 10)
  }

  func close() {
    send(["cmd": "close"])
    let deadline = Date().addingTimeInterval(3)
    while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    if process.isRunning { process.terminate() }
  }
}

/// One connection of ours answered by aiortc, with its state changes marked in `events`
/// under `name` ("publish"/"play" → "<name> connected", "<name> failed").
func connect(
  _ direction: MediaConnectionRequest.Direction, name: String, backend: NativeMediaBackend,
  settings: RunSettings, renderer: (any VideoRenderer)?, events: Events
) -> (NativeMediaConnection, AiortcPeer)? {
  let request = MediaConnectionRequest(
    direction: direction, audio: .init(),
    video: direction == .publish
      ? .init(maxWidth: settings.width, maxHeight: settings.height, maxFrameRate: settings.fps)
      : .init(),
    renderer: renderer)
  guard
    let connection = try? backend.makeConnection(
      request,
      onStateChange: { state in
        if state == .connected { events.mark("\(name) connected") }
        if state.isFailed { events.mark("\(name) failed") }
      }) as? NativeMediaConnection,
    let peer = try? AiortcPeer(
      mode: direction == .publish ? "receive" : "send", width: settings.width,
      height: settings.height)
  else { return nil }
  guard let offer = wait(timeout: 10, { connection.createOffer(completion: $0) }),
    case .success(let sdp) = offer, let answer = peer.answer(sdp),
    let applied = wait(timeout: 10, { connection.setRemoteAnswer(answer, completion: $0) }),
    case .success = applied
  else {
    peer.close()
    connection.close()
    return nil
  }
  // From here on it is ICE and DTLS alone (aiortc's start-up, about a second of Python
  // imports, is not the connection's).
  events.mark(name)
  return (connection, peer)
}

/// One run against aiortc, two legs at once: we publish the virtual camera to an aiortc that
/// decodes it, and play the test pattern (same size, same frame-number band) another aiortc
/// sends. aiortc negotiates RTX, NACK and PLI as a browser does.
func runAgainstAiortc(settings: RunSettings) -> [LegResult] {
  var publishLeg = LegResult(leg: "aiortc-publish")
  var playLeg = LegResult(leg: "aiortc-play")
  let loop = EventLoop(label: "LossBench-aiortc")
  defer { loop.shutdown() }
  let backend = NativeMediaBackend(
    configuration: NativeMediaBackend.Configuration(
      loop: loop, peerConnection: settings.peerConnection))
  let events = Events()
  let sentLog = FrameLog()
  let playedLog = FrameLog()
  guard
    let (publisher, publishPeer) = connect(
      .publish, name: "publish", backend: backend, settings: settings,
      renderer: sentLog.renderer, events: events)
  else {
    publishLeg.failure = "publish offer/answer failed"
    return [publishLeg, playLeg]
  }
  defer {
    publishPeer.close()
    publisher.close()
  }
  guard
    let (player, playPeer) = connect(
      .play, name: "play", backend: backend, settings: settings, renderer: playedLog.renderer,
      events: events)
  else {
    playLeg.failure = "play offer/answer failed"
    return [publishLeg, playLeg]
  }
  defer {
    playPeer.close()
    player.close()
  }
  if events.wait(for: ["publish connected", "publish failed"], timeout: 20) != "publish connected" {
    publishLeg.failure = "publish connection did not connect"
  }
  if events.wait(for: ["play connected", "play failed"], timeout: 20) != "play connected" {
    playLeg.failure = "play connection did not connect"
  }
  publishLeg.toPublishing = events.seconds(from: "publish", to: "publish connected")
  playLeg.toPlaying = events.seconds(from: "play", to: "play connected")

  let end = ContinuousClock.now + .milliseconds(Int(settings.seconds * 1000))
  while ContinuousClock.now < end {
    if let failed = events.wait(for: ["publish failed", "play failed"], timeout: 0.1) {
      publishLeg.failure = publishLeg.failure ?? (failed == "publish failed" ? failed : nil)
      playLeg.failure = playLeg.failure ?? (failed == "play failed" ? failed : nil)
      break
    }
  }
  let endTime = ContinuousClock.now
  let sentNumbers = sentLog.numbers
  let aiortcSent = (playPeer.report()?["video_sent"] as? NSNumber)?.intValue ?? 0
  Thread.sleep(forTimeInterval: 0.6)

  // Publish leg: what aiortc decoded of what we sent.
  if let report = publishPeer.report() {
    let received = FrameLog()
    received.add(
      numbers: (report["numbers_seen"] as? [NSNumber] ?? []).map { UInt32(truncating: $0) })
    publishLeg.count(sent: sentNumbers, received: received.numbers)
    let reportTime = ContinuousClock.now
    func age(_ key: String) -> Double? { (report[key] as? NSNumber)?.doubleValue }
    // aiortc gives ages at its report: the gap since its last new picture, measured back to
    // the end of the run, may be the longest one.
    let endGap = age("last_frame_age").map { $0 - (reportTime - endTime).seconds }
    publishLeg.longestGap = max(age("longest_gap") ?? 0, endGap ?? 0)
    publishLeg.plisSent = (report["plis_sent"] as? NSNumber)?.intValue
    if let firstAge = age("first_frame_age"), let connected = events.time("publish connected") {
      publishLeg.firstFrame = (reportTime - connected).seconds - firstAge
    }
  } else {
    publishLeg.failure = publishLeg.failure ?? "aiortc sent no report"
  }
  publishLeg.addCounters(receiver: nil, sender: publisher.detailed())

  // Play leg: what we decoded of aiortc's pattern (numbers 0 ..< video_sent).
  let aiortcNumbers = Set((0..<UInt32(max(0, aiortcSent))).map { $0 })
  playLeg.count(sent: aiortcNumbers, received: playedLog.numbers)
  playLeg.longestGap = playedLog.longestGap(until: endTime)
  if let connected = events.time("play connected"), let first = playedLog.firstArrival {
    playLeg.firstFrame = (first - connected).seconds
  }
  playLeg.addCounters(receiver: player.detailed(), sender: nil)
  if publishLeg.failure == nil, publishLeg.decoded == 0 {
    publishLeg.failure = "aiortc decoded no picture"
  }
  if playLeg.failure == nil, playLeg.decoded == 0 { playLeg.failure = "no picture decoded" }
  return [publishLeg, playLeg]
}
