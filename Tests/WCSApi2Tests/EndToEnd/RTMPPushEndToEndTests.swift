import Foundation
import Synchronization
import TestSupport
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// `rtmpUrl` re-publishing (issue 28): a stream published through the local server with
/// `FPWCSApi2StreamOptions.rtmpUrl` is pushed to that RTMP server — nginx-rtmp on 127.0.0.1 —
/// as FLV, H.264 as published and Opus as AAC. `ffmpeg` reads it back from nginx; the copy's
/// pictures are the virtual camera's (frame numbers, PSNR) and its sound the virtual
/// microphone's 440 Hz tone. The publisher learns the push's state from `rtmpStreamStatus`
/// stream events.
final class RTMPPushEndToEndTests: XCTestCase {
  static let width = 320
  static let height = 240

  private var directory: URL!
  private var processes: [Process] = []

  override func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-push-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDown() {
    for process in processes where process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
    try? FileManager.default.removeItem(at: directory)
  }

  func testH264AndOpusPublishedWithRTMPURLArePushedToNginxAsH264AndAAC() async throws {
    try XCTSkipUnless(NginxRTMP.isInstalled, "nginx with libnginx-mod-rtmp is not installed")
    let port = try PullEndToEndTests.freeTCPPort()
    processes.append(try NginxRTMP.start(directory: directory, port: port, record: true))
    let url = "rtmp://127.0.0.1:\(port)/live/pushed"
    let push = try await startPush("push", codec: "H264", to: url)
    defer { push.end() }
    let (publisher, events) = (push.publisher, push.events)
    try await waitFor("the push is live", timeout: 15) {
      events.statuses.contains { $0.status == "PUBLISHING" }
    }
    XCTAssertEqual(events.statuses.first?.rtmpUrl, url)

    // Six seconds of what nginx serves to a new viewer, copied as it is: nginx starts its
    // video at the next key frame, which the push asks for at least every 2 s.
    let copy = directory.appendingPathComponent("copy.flv")
    let reader = Process()
    reader.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    reader.arguments = [
      "-nostdin", "-loglevel", "error", "-rw_timeout", "5000000", "-i", url, "-t", "6", "-c",
      "copy", copy.path,
    ]
    reader.standardOutput = FileHandle.nullDevice
    reader.standardError = FileHandle.nullDevice
    try reader.run()
    processes.append(reader)
    try await waitFor("ffmpeg read six seconds", timeout: 20) { !reader.isRunning }
    XCTAssertEqual(reader.terminationStatus, 0)
    XCTAssertEqual(try Self.codecs(of: copy.path).sorted(), ["aac", "h264"])
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)

    let file = try MediaFileReader(path: copy.path, audioChannels: 1)
    var pictures: [I420Image] = []
    var samples: [Int16] = []
    while let sample = try file.nextSample() {
      switch sample {
      case .video(let frame):
        pictures.append(
          try XCTUnwrap(
            I420Image(
              width: frame.width, height: frame.height, y: frame.y, strideY: frame.yStride,
              u: frame.u, strideU: frame.uStride, v: frame.v, strideV: frame.vStride)))
      case .audio(let chunk):
        samples += chunk.samples
      }
    }
    // At least 4 s at 15 fps, every picture the camera's, in its order and none twice.
    XCTAssertGreaterThanOrEqual(pictures.count, 45)
    try assertCameraPictures(pictures, width: Self.width, height: Self.height)
    let numbers = pictures.compactMap(VirtualCamera.decodeFrameNumber(from:))
    XCTAssertEqual(Set(numbers).count, numbers.count, "no picture twice")
    // The tone, after the AAC encoder's start-up.
    XCTAssertGreaterThan(samples.count, 48_000 * 3)
    let steady = Array(samples.dropFirst(4800).prefix(48_000))
    XCTAssertEqual(Tone.dominantFrequency(steady, rate: 48_000), 440, accuracy: 10)
    XCTAssertGreaterThan(Tone.share(of: 440, in: steady, rate: 48_000), 0.8)

    // As nginx received it from the start: both tracks begin together, placed by their RTP
    // clocks from the first key frame on.
    try publisher.stop()
    let received = directory.appendingPathComponent("pushed.flv").path
    try await waitFor("nginx closed its recording", timeout: 10) {
      (try? Self.firstPacketTimes(of: received))?.count == 2
    }
    let starts = try Self.firstPacketTimes(of: received)
    XCTAssertEqual(starts["video"] ?? -1, 0, accuracy: 0.001)
    // Audio starts with the first packet received after the key frame's first (20 ms apart).
    XCTAssertEqual(starts["audio"] ?? -1, 0, accuracy: 0.1)
  }

  func testABrokenRTMPConnectionIsReportedAndThePushResumesWhenTheServerIsBack() async throws {
    try XCTSkipUnless(NginxRTMP.isInstalled, "nginx with libnginx-mod-rtmp is not installed")
    let port = try PullEndToEndTests.freeTCPPort()
    let nginx = try NginxRTMP.start(directory: directory, port: port)
    processes.append(nginx)
    let url = "rtmp://127.0.0.1:\(port)/live/resumed"
    let push = try await startPush("push-broken", codec: "H264", to: url)
    defer { push.end() }
    let (publisher, events) = (push.publisher, push.events)
    try await waitFor("the push is live", timeout: 15) {
      events.statuses.contains { $0.status == "PUBLISHING" }
    }

    // The server goes away mid-stream: the next writes fail, the push says so and retries.
    kill(nginx.processIdentifier, SIGKILL)
    nginx.waitUntilExit()
    try await waitFor("the broken connection reported", timeout: 15) {
      events.statuses.contains { $0.status == "FAILED" }
    }
    let failure = try XCTUnwrap(events.statuses.first { $0.status == "FAILED" })
    XCTAssertEqual(failure.info, "Failed by RTMP writer error")
    XCTAssertEqual(failure.willRetry, true)
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)

    // Back on the same port before the retries run out: the push is live again.
    processes.append(try NginxRTMP.start(directory: directory, port: port))
    try await waitFor("the push is live again", timeout: 15) {
      events.statuses.filter { $0.status == "PUBLISHING" }.count == 2
    }
    // Its first video waits for a key frame: which stream ffprobe meets first varies.
    XCTAssertEqual(Self.probedCodecs(url).sorted(), ["aac", "h264"], "nginx serves it")
  }

  func testASilentRTMPServerTimesOutWithoutStallingThePublication() async throws {
    // A socket that accepts (the kernel's backlog) and never answers the RTMP handshake.
    let (descriptor, port) = try PullEndToEndTests.listeningTCPSocket()
    defer { close(descriptor) }
    let url = "rtmp://127.0.0.1:\(port)/live/silent"
    let push = try await startPush("push-silent", codec: "H264", to: url)
    defer { push.end() }
    let (publisher, events) = (push.publisher, push.events)
    let started = Date()
    // While the push waits for the handshake, the relay serves a player as usual.
    try assertPlayable(publisher, push.session)
    XCTAssertTrue(events.statuses.isEmpty, "still connecting")
    try await waitFor("the connect timed out", timeout: 15) { !events.statuses.isEmpty }
    XCTAssertEqual(Date().timeIntervalSince(started), 5, accuracy: 1.5, "the connect timeout")
    XCTAssertEqual(events.statuses.first?.info, "Failed by RTMP writer error")
    XCTAssertEqual(events.statuses.first?.willRetry, true)
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)
  }

  func testVP8PublishedWithRTMPURLIsNotPushedAndThePublisherIsToldWhy() async throws {
    let url = "rtmp://127.0.0.1:1/live/vp8"
    let push = try await startPush("push-vp8", codec: "VP8", to: url)
    defer { push.end() }
    let (publisher, events) = (push.publisher, push.events)
    try await waitFor("the push refused") { !events.statuses.isEmpty }
    let status = try XCTUnwrap(events.statuses.first)
    XCTAssertEqual(status.status, "FAILED")
    XCTAssertEqual(status.info, "Transcoding required, but disabled")
    XCTAssertEqual(status.willRetry, false)
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)
    try assertPlayable(publisher, push.session)
  }

  func testUnreachableRTMPURLFailsThePushAfterItsRetriesAndThePublicationGoesOn() async throws {
    // Port 1 on loopback: nothing listens, each connect is refused at once.
    let url = "rtmp://127.0.0.1:1/live/nobody"
    let push = try await startPush("push-refused", codec: "H264", to: url)
    defer { push.end() }
    let (publisher, events) = (push.publisher, push.events)
    // Three attempts, 1 s and 2 s apart.
    try await waitFor("the push given up", timeout: 15) {
      events.statuses.contains { $0.willRetry == false }
    }
    let statuses = events.statuses
    XCTAssertEqual(statuses.map(\.status), ["FAILED", "FAILED", "FAILED"])
    XCTAssertEqual(statuses.map(\.willRetry), [true, true, false])
    XCTAssertEqual(Set(statuses.map(\.info)), ["Failed by RTMP writer error"])
    XCTAssertEqual(publisher.getStatus(), .fpwcsStreamStatusPublishing)
    try assertPlayable(publisher, push.session)
  }

  func testRTMPURLOfAHostOutsideThePullPolicyIsRefusedAndThePublicationGoesOn() async throws {
    let url = "rtmp://rtmp.example.com/live/out"
    let push = try await startPush("push-host", codec: "H264", to: url)
    defer { push.end() }
    let (publisher, events) = (push.publisher, push.events)
    try await waitFor("the push refused") { !events.statuses.isEmpty }
    XCTAssertEqual(
      events.statuses.first?.info,
      "Pushing to host rtmp.example.com is not allowed (pullSourceHosts)")
    try await waitFor("publishing") { publisher.getStatus() == .fpwcsStreamStatusPublishing }
  }

  // MARK: - Helpers

  /// What the publisher heard of its push.
  final class PushEvents: Sendable {
    struct Status: Equatable {
      var rtmpUrl: String?
      var status: String?
      var info: String?
      var willRetry: Bool?
    }
    private let received = Mutex<[Status]>([])
    var statuses: [Status] { received.withLock { $0 } }

    func add(_ event: FPWCSApi2StreamEvent) {
      guard event.type == "rtmpStreamStatus", let payload = event.payloadJSON else { return }
      let status = Status(
        rtmpUrl: payload["rtmpUrl"]?.stringValue, status: payload["status"]?.stringValue,
        info: payload["info"]?.stringValue, willRetry: payload["willRetry"]?.boolValue)
      received.withLock { $0.append(status) }
    }
  }

  /// A local server, a session to it and a publisher of the virtual devices in `codec` with
  /// `rtmpUrl` = `url`; `end()` stops them.
  struct Push {
    let server: WCSLocalServer
    let session: FPWCSApi2Session
    let publisher: FPWCSApi2Stream
    let events: PushEvents

    func end() {
      try? publisher.stop()
      session.disconnect()
      server.stop()
    }
  }

  private func startPush(_ label: String, codec: String, to url: String) async throws -> Push {
    let server = try WCSLocalServer.startForTest(label)
    let session = try await FPWCSApi2.connectedSession(to: server)
    let (publisher, events) = try await publish(session, codec: codec, rtmpUrl: url)
    return Push(server: server, session: session, publisher: publisher, events: events)
  }

  private func publish(_ session: FPWCSApi2Session, codec: String, rtmpUrl: String) async throws
    -> (FPWCSApi2Stream, PushEvents)
  {
    let options = FPWCSApi2StreamOptions()
    options.name = "push-\(UUID().uuidString.prefix(6).lowercased())"
    options.constraints = .virtualDevices(width: Self.width, height: Self.height, frameRate: 15)
    options.rtmpUrl = rtmpUrl
    options.preferredVideoCodec = codec
    options.stripCodecs = [codec == "H264" ? "VP8" : "H264"]
    let publisher = try session.createStream(options)
    let events = PushEvents()
    publisher.onStreamEvent { event in if let event { events.add(event) } }
    try await publisher.publish()
    return (publisher, events)
  }

  /// The publication is unharmed: a player of it gets the camera's pictures.
  private func assertPlayable(_ publisher: FPWCSApi2Stream, _ session: FPWCSApi2Session) throws {
    let pictures = Mutex<[I420Image]>([])
    let options = FPWCSApi2StreamOptions()
    options.name = publisher.getName()
    options.display = VideoFrameCallbackRenderer { frame in
      guard let image = I420Image(frame) else { return }
      pictures.withLock { $0.append(image) }
    }
    let player = try session.createStream(options)
    try player.play()
    defer { try? player.stop() }
    wait("five played pictures") { pictures.withLock { $0.count } >= 5 }
    try assertCameraPictures(
      pictures.withLock { Array($0.prefix(5)) }, width: Self.width, height: Self.height)
  }

  /// The first packet time of each stream kind of a file (`video`, `audio`), by ffprobe.
  private static func firstPacketTimes(of path: String) throws -> [String: Double] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
    process.arguments = [
      "-v", "error", "-read_intervals", "%+#40", "-show_entries", "packet=codec_type,pts_time",
      "-of", "csv=p=0", path,
    ]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    var times: [String: Double] = [:]
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: ",").map(String.init)
      guard fields.count == 2, let time = Double(fields[1]), times[fields[0]] == nil else {
        continue
      }
      times[fields[0]] = time
    }
    return times
  }

  /// The codecs ffprobe finds at a live `url` within five seconds.
  private static func probedCodecs(_ url: String) -> [String] {
    (try? codecs(of: url, extraArguments: ["-rw_timeout", "5000000"])) ?? []
  }

  /// The codec of each stream of a file, by ffprobe.
  private static func codecs(of path: String, extraArguments: [String] = []) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
    process.arguments =
      ["-v", "error"] + extraArguments + [
        "-show_entries", "stream=codec_name", "-of", "csv=p=0", path,
      ]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return text.split(separator: "\n").map(String.init)
  }
}
