import Foundation
import Synchronization
import WCSLocalServer
import WCSMedia
import XCTest

@testable import WCSApi2

/// `playStream` of an `rtsp://` or `rtmp://` name (issue 28): the local server pulls the source
/// with libavformat and relays its H.264 as it is. The sources are real servers on 127.0.0.1 —
/// GStreamer's RTSP server and nginx-rtmp fed by `ffmpeg -re` — encoding the virtual camera's
/// pictures, so each played picture is found by its frame number and compared by PSNR.
final class PullEndToEndTests: XCTestCase {
  static let width = 320
  static let height = 240
  static let frameRate = 15
  /// Ten seconds of source.
  static let frameCount = 150

  var directory: URL!
  var processes: [Process] = []
  let log = ServerLogLines()

  override func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-pull-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDown() {
    // SIGKILL: nginx without a master process ignores SIGTERM.
    for process in processes where process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
    try? FileManager.default.removeItem(at: directory)
  }

  // MARK: - Tests

  func testRTSPSourceIsPlayedAsTheCameraPicturesSharedByItsPlayersAndAMissingMountFails()
    async throws
  {
    try XCTSkipUnless(Self.canImportGStreamerRTSP, "GStreamer's RTSP server is not installed")
    let port = try startRTSPServer()
    let url = "rtsp://127.0.0.1:\(port)/test"
    let server = try startServer()
    defer { server.stop() }
    let session = try await FPWCSApi2.connectedSession(to: server)
    defer { session.disconnect() }

    let (first, firstPictures) = try await play(url, session)
    let (second, secondPictures) = try await play(url, session)
    try await waitFor("ten pictures on each player", timeout: 20) {
      firstPictures.images.withLock { $0.count } >= 10
        && secondPictures.images.withLock { $0.count } >= 10
    }
    try assertCameraPictures(firstPictures.images.withLock { $0 })
    try assertCameraPictures(secondPictures.images.withLock { $0 })
    XCTAssertEqual(first.getStatus(), .fpwcsStreamStatusPlaying)
    XCTAssertEqual(logCount("pull \(url): opening"), 1, "one pull for both players")

    let vp8Only = FPWCSApi2StreamOptions()
    vp8Only.name = url
    vp8Only.stripCodecs = ["H264"]
    let refused = try session.createStream(vp8Only)
    try? await refused.play()
    try await waitFor("VP8-only player failed") {
      refused.getStatus() == .fpwcsStreamStatusFailed
    }
    XCTAssertEqual(refused.getInfo(), "Transcoding required, but disabled")

    // The server is there but has no such mount: RTSP 404.
    let (missing, _) = try await play("rtsp://127.0.0.1:\(port)/nope", session)
    try await waitFor("player of a missing mount failed") {
      missing.getStatus() == .fpwcsStreamStatusFailed
    }
    XCTAssertEqual(missing.getInfo(), "Rtsp stream not found")

    try first.stop()
    try second.stop()
    try await waitFor("pull stopped with its last player") {
      self.logCount("pull \(url): no players left, stopped") == 1
    }
  }

  func testRTMPSourceFromNginxIsPlayedAsTheCameraPicturesUntilItStops() async throws {
    try XCTSkipUnless(
      FileManager.default.fileExists(atPath: Self.rtmpModule), "libnginx-mod-rtmp is not installed")
    try XCTSkipUnless(FileManager.default.fileExists(atPath: "/usr/sbin/nginx"), "no nginx")
    let port = try startNginxRTMP()
    let url = "rtmp://127.0.0.1:\(port)/live/camera"
    let push = try startFFmpegPush(to: url)
    let server = try startServer()
    defer { server.stop() }
    let session = try await FPWCSApi2.connectedSession(to: server)
    defer { session.disconnect() }

    // nginx has the stream once the push's first key frame arrived: until then a pull finds
    // no stream and its player fails.
    try await waitFor("push reached nginx", timeout: 10) { self.ffprobeFinds(url) }
    let (player, pictures) = try await play(url, session)
    defer { try? player.stop() }
    try await waitFor("ten RTMP pictures", timeout: 20) {
      pictures.images.withLock { $0.count } >= 10
    }
    try assertCameraPictures(pictures.images.withLock { $0 })

    // The encoder goes away: nginx ends the stream, the pull reads its end.
    kill(push.processIdentifier, SIGKILL)
    try await waitFor("player failed with its source", timeout: 10) {
      player.getStatus() == .fpwcsStreamStatusFailed
    }
    XCTAssertEqual(player.getInfo(), "Stream failed")
  }

  func testSilentRTSPSourceFailsThePlayerAfterTheOpenTimeout() async throws {
    // A socket that accepts (the kernel's backlog) and never answers the RTSP OPTIONS.
    let (descriptor, port) = try Self.listeningTCPSocket()
    defer { close(descriptor) }
    let server = try startServer()
    defer { server.stop() }
    let session = try await FPWCSApi2.connectedSession(to: server)
    defer { session.disconnect() }
    let (player, _) = try await play("rtsp://127.0.0.1:\(port)/silent", session)
    try await waitFor("player failed", timeout: 15) {
      player.getStatus() == .fpwcsStreamStatusFailed
    }
    XCTAssertEqual(player.getInfo(), "Failed to connect to rtsp stream")
    XCTAssertEqual(logCount("timed out"), 1, "the open deadline ended the wait")
  }

  func testUnreachableRTSPSourceFailsThePlayerWithTheWCSReason() async throws {
    let server = try startServer()
    defer { server.stop() }
    let session = try await FPWCSApi2.connectedSession(to: server)
    defer { session.disconnect() }
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let (player, _) = try await play("rtsp://127.0.0.1:1/none", session)
    try await waitFor("player failed") { player.getStatus() == .fpwcsStreamStatusFailed }
    XCTAssertEqual(player.getInfo(), "Failed to connect to rtsp stream")
  }

  // MARK: - Helpers

  private func assertCameraPictures(
    _ pictures: [I420Image], file: StaticString = #filePath, line: UInt = #line
  ) throws {
    var numbers: [UInt32] = []
    for picture in pictures {
      XCTAssertEqual(
        [picture.width, picture.height], [Self.width, Self.height], file: file, line: line)
      let number = try XCTUnwrap(
        VirtualCamera.decodeFrameNumber(from: picture), file: file, line: line)
      XCTAssertLessThan(Int(number), Self.frameCount, file: file, line: line)
      let source = VirtualCamera(width: Self.width, height: Self.height).frame(Int(number))
      XCTAssertGreaterThan(
        try XCTUnwrap(picture.psnr(to: source), file: file, line: line), 28, "frame \(number)",
        file: file, line: line)
      numbers.append(number)
    }
    XCTAssertEqual(numbers, numbers.sorted(), "pictures in source order", file: file, line: line)
  }

  private func play(_ name: String, _ session: FPWCSApi2Session) async throws -> (
    FPWCSApi2Stream, PlayedPictures
  ) {
    let pictures = PlayedPictures()
    let options = FPWCSApi2StreamOptions()
    options.name = name
    options.display = VideoFrameCallbackRenderer { frame in
      guard let image = I420Image(frame) else { return }
      pictures.images.withLock { $0.append(image) }
    }
    let player = try session.createStream(options)
    try? await player.play()
    return (player, pictures)
  }

  func startServer() throws -> WCSLocalServer {
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory = directory.appendingPathComponent("records").path
    configuration.logSink = { [log] line in log.lines.withLock { $0.append(line) } }
    return try WCSLocalServer.start(configuration)
  }

  func logCount(_ text: String) -> Int {
    log.lines.withLock { $0.filter { $0.contains(text) }.count }
  }

  /// The virtual camera's first `frameCount` pictures as raw I420.
  func writeFrames() throws -> URL {
    let camera = VirtualCamera(width: Self.width, height: Self.height, frameRate: Self.frameRate)
    var bytes: [UInt8] = []
    for index in 0..<Self.frameCount {
      let image = camera.frame(index)
      for (plane, stride, width, rows) in [
        (image.y, image.strideY, image.width, image.height),
        (image.u, image.strideU, image.chromaWidth, image.chromaHeight),
        (image.v, image.strideV, image.chromaWidth, image.chromaHeight),
      ] {
        for row in 0..<rows { bytes += plane[row * stride..<row * stride + width] }
      }
    }
    let url = directory.appendingPathComponent("frames.yuv")
    try Data(bytes).write(to: url)
    return url
  }

  static var canImportGStreamerRTSP: Bool {
    let check = Process()
    check.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    check.arguments = [
      "-c",
      "import gi; gi.require_version('GstRtspServer', '1.0'); from gi.repository import GstRtspServer",
    ]
    check.standardOutput = FileHandle.nullDevice
    check.standardError = FileHandle.nullDevice
    guard (try? check.run()) != nil else { return false }
    check.waitUntilExit()
    return check.terminationStatus == 0
  }

  /// Starts Tests/Interop/rtsp_server.py on the frames; returns its port.
  private func startRTSPServer() throws -> Int {
    try startInteropServer(
      "rtsp_server.py",
      [try writeFrames().path, "\(Self.width)", "\(Self.height)", "\(Self.frameRate)"])
  }

  /// Starts the Python script `name` of Tests/Interop with `arguments`; returns the port it
  /// prints on its first line.
  func startInteropServer(_ name: String, _ arguments: [String]) throws -> Int {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Interop/\(name)")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [script.path] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    processes.append(process)
    var line = Data()
    while true {
      let byte = output.fileHandleForReading.readData(ofLength: 1)
      guard let first = byte.first else { throw CocoaError(.fileReadUnknown) }
      if first == UInt8(ascii: "\n") { break }
      line.append(first)
    }
    return try XCTUnwrap(Int(String(decoding: line, as: UTF8.self)))
  }

  static let rtmpModule = NginxRTMP.module

  /// nginx in the foreground with only an RTMP `live` application on a free loopback port.
  func startNginxRTMP() throws -> Int {
    let port = try Self.freeTCPPort()
    processes.append(try NginxRTMP.start(directory: directory, port: port))
    return port
  }

  /// `ffmpeg -re`: the frames as constrained baseline H.264 (a key frame a second) and a tone
  /// as AAC, in FLV to `url`.
  @discardableResult
  private func startFFmpegPush(to url: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = [
      "-nostdin", "-loglevel", "error", "-re", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s",
      "\(Self.width)x\(Self.height)", "-r", "\(Self.frameRate)", "-i", try writeFrames().path,
      "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-shortest", "-c:v", "libx264",
      "-profile:v", "baseline", "-preset", "ultrafast", "-tune", "zerolatency", "-g",
      "\(Self.frameRate)", "-b:v", "2M", "-c:a", "aac", "-f", "flv", url,
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    processes.append(process)
    return process
  }

  /// Whether `ffprobe` finds an H.264 stream at `url` within two seconds.
  func ffprobeFinds(_ url: String) -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
    process.arguments = [
      "-v", "error", "-rw_timeout", "2000000", "-select_streams", "v", "-show_entries",
      "stream=codec_name", "-of", "csv=p=0", url,
    ]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return text.contains("h264")
  }

  static func freeTCPPort() throws -> Int {
    let (descriptor, port) = try boundTCPSocket()
    close(descriptor)
    return port
  }

  /// A socket listening on a free loopback port that nobody accepts on.
  static func listeningTCPSocket() throws -> (Int32, Int) {
    let (descriptor, port) = try boundTCPSocket()
    guard listen(descriptor, 4) == 0 else {
      close(descriptor)
      throw POSIXError(.EADDRINUSE)
    }
    return (descriptor, port)
  }

  private static func boundTCPSocket() throws -> (Int32, Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
      }
    }
    guard bound else {
      close(descriptor)
      throw POSIXError(.EADDRINUSE)
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
  }
}

/// The pictures one player rendered, in order.
final class PlayedPictures: Sendable {
  let images = Mutex<[I420Image]>([])
}

/// What the local server logged.
final class ServerLogLines: Sendable {
  let lines = Mutex<[String]>([])
}
