import ExampleSupport
import Foundation
import WCSLocalServer
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// A terminal FAILED status (of a stream or of the session) ends an example at once with that
/// status as the reason and exit status 1, instead of keeping the session up for --duration.
final class ExamplesFailureTests: XCTestCase {
  /// Seconds of the first output line starting (after the `[  1.234] ` stamp) with `text`.
  private func stamp(_ output: String, _ text: String) -> Double? {
    for line in output.split(separator: "\n") {
      guard line.hasPrefix("["), let close = line.firstIndex(of: "]") else { continue }
      let rest = line[line.index(after: close)...].drop { $0 == " " }
      if rest.hasPrefix(text) {
        return Double(
          line[line.index(after: line.startIndex)..<close].trimmingCharacters(in: .whitespaces))
      }
    }
    return nil
  }

  /// A player that froze (a 100 kbit/s link under a video of several hundred) fails its run as
  /// wcs-demo does, instead of printing `Result: OK` beside a 4 s freeze; the limits are
  /// the same options.
  func testPlayerFailsWhenThePlayedVideoFroze() throws {
    let out = try ExampleRunner.temporaryDirectory("frozen")
    let result = try ExampleRunner.run(
      "Player",
      ["--duration", "4", "--out", out, "--network", "down:rate=200kbit"], timeout: 60)
    try assertFailedOnLimits(result)
    let lenient = try ExampleRunner.run(
      "Player", ["--max-freeze", "0", "--duration", "1", "--out", out], timeout: 30)
    XCTAssertEqual(lenient.status, 64, "--max-freeze must be positive: \(lenient.output)")
  }

  /// TwoWayStreaming plays what it publishes: a frozen playback fails its run too.
  func testTwoWayStreamingFailsWhenThePlayedVideoFroze() throws {
    let out = try ExampleRunner.temporaryDirectory("frozen-two-way")
    let result = try ExampleRunner.run(
      "TwoWayStreaming",
      [
        "--duration", "4", "--out", out, "--switch-camera-at", "-1", "--network",
        "down:rate=200kbit",
      ],
      timeout: 60)
    try assertFailedOnLimits(result)
  }

  /// The run failed on the playback limits: a freeze over 2 s or too few frames decoded (or,
  /// when the link let no frame through at all, on that).
  private func assertFailedOnLimits(
    _ result: ExampleRunner.Result, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    XCTAssertEqual(result.status, 1, result.output, file: file, line: line)
    XCTAssertEqual(result.summary["Result"], "FAILED", result.output, file: file, line: line)
    let failed = try XCTUnwrap(result.summary["FAILED"], result.output, file: file, line: line)
    if failed.contains("no frame was played") { return }
    XCTAssertTrue(
      failed.contains("the video froze for") || failed.contains("of the frames were decoded"),
      failed, file: file, line: line)
  }

  /// Playing a name nobody publishes: FAILED `Stream not found`, then the session ends at once.
  func testPlayerEndsPromptlyWhenTheStreamIsNotFound() throws {
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory = try ExampleRunner.temporaryDirectory("missing-records")
    configuration.logSink = { _ in }
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    let out = try ExampleRunner.temporaryDirectory("missing")
    let started = Date()
    let result = try ExampleRunner.run(
      "Player",
      ["--url", server.wsURL, "--stream", "no-such-stream", "--duration", "60", "--out", out],
      timeout: 50)
    let wallTime = Date().timeIntervalSince(started)
    XCTAssertEqual(result.status, 1, result.output)
    XCTAssertTrue(
      result.output.contains("] play no-such-stream FAILED: Stream not found\n"), result.output)
    XCTAssertEqual(result.summary["FAILED"], "play no-such-stream FAILED: Stream not found; ")
    XCTAssertEqual(result.summary["Result"], "FAILED")
    XCTAssertEqual(result.summary["Time to PLAYING"], "never")
    // The session closes right after FAILED (it used to wait 5 s for a STOPPED that never
    // comes), and the run is nowhere near its 60-second duration.
    let failedAt = try XCTUnwrap(stamp(result.output, "play no-such-stream FAILED"))
    let disconnectedAt = try XCTUnwrap(stamp(result.output, "session DISCONNECTED"))
    XCTAssertLessThan(disconnectedAt - failedAt, 2, result.output)
    XCTAssertLessThan(wallTime, 30, result.output)
  }

  /// A stream option the SDK refuses (`createStream` throws `WCSError.invalidOption`) fails the
  /// publish with that reason and ends the run at once (it used to print "Failed to publish"
  /// with no reason and wait 20 s for a PUBLISHING that never comes).
  func testStreamerEndsPromptlyWhenTheSDKRefusesAnOption() throws {
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory = try ExampleRunner.temporaryDirectory("refused-records")
    configuration.logSink = { _ in }
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    let started = Date()
    let result = try ExampleRunner.run(
      "Streamer",
      ["--url", server.wsURL, "--stream", "refused", "--fps", "100000", "--duration", "60"],
      timeout: 50)
    let wallTime = Date().timeIntervalSince(started)
    XCTAssertEqual(result.status, 1, result.output)
    let failure = try XCTUnwrap(result.summary["FAILED"], result.output)
    XCTAssertTrue(failure.hasPrefix("publish refused FAILED: "), failure)
    XCTAssertTrue(failure.contains("frameRate") || failure.contains("fps"), failure)
    XCTAssertEqual(result.summary["Time to PUBLISHING"], "never")
    XCTAssertLessThan(wallTime, 15, result.output)
  }

  /// `--speaker` with no sound system (PulseAudio's socket missing, and on this machine no ALSA
  /// card): the reason is one status line, the stream plays on, and libasound prints nothing of
  /// its own ("ALSA lib pcm.c:...: Unknown PCM default").
  func testSpeakerWithoutASoundSystemSaysSoOnceAndPlaysOn() throws {
    let previous = ProcessInfo.processInfo.environment["PULSE_SERVER"]
    setenv("PULSE_SERVER", "unix:/nonexistent/wcs-no-pulse", 1)
    defer {
      if let previous { setenv("PULSE_SERVER", previous, 1) } else { unsetenv("PULSE_SERVER") }
    }
    let out = try ExampleRunner.temporaryDirectory("no-speaker")
    let result = try ExampleRunner.run(
      "Player", ["--speaker", "--duration", "2", "--min-decoded", "75", "--out", out],
      timeout: 50)
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    XCTAssertFalse(result.output.contains("ALSA lib"), result.output)
    let speakerLines = result.output.split(separator: "\n").filter {
      $0.contains("sound output")
    }
    XCTAssertEqual(speakerLines.count, 1, result.output)
  }

  /// A `--camera` that matches no listed device is refused by the engine with its name (it used
  /// to fall back to the default camera silently and publish that).
  func testMediaDevicesRefusesAnUnknownCamera() throws {
    let out = try ExampleRunner.temporaryDirectory("unknown-camera")
    let result = try ExampleRunner.run(
      "MediaDevices", ["--camera", "no-such-camera", "--duration", "30", "--out", out],
      timeout: 50)
    XCTAssertEqual(result.status, 1, result.output)
    let failure = try XCTUnwrap(result.summary["FAILED"], result.output)
    XCTAssertTrue(failure.contains("unknown camera no-such-camera"), failure)
  }

  /// The server dies while Streamer publishes and Player plays (60-second runs): the SDK fails
  /// both streams (`Stopped by session disconnect`) and both examples end at once with that
  /// reason.
  func testStreamerAndPlayerEndPromptlyWhenTheServerDies() throws {
    let serverURL = ExampleRunner.buildDirectory.appendingPathComponent("wcs-local-server")
    guard FileManager.default.isExecutableFile(atPath: serverURL.path) else {
      throw XCTSkip("\(serverURL.path) is not built (run `swift build --build-tests`)")
    }
    let records = try ExampleRunner.temporaryDirectory("dying-records")
    let server = Process()
    server.executableURL = serverURL
    server.arguments = ["--ws-port", "0", "--http-port", "0", "--records", records]
    let printed = Pipe()
    server.standardOutput = printed
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer {
      if server.isRunning { kill(server.processIdentifier, SIGKILL) }
      server.waitUntilExit()
    }
    // The first line is `ws: ws://127.0.0.1:PORT/`.
    var text = ""
    while !text.contains("\n") {
      let data = printed.fileHandleForReading.availableData
      if data.isEmpty { break }
      text += String(decoding: data, as: UTF8.self)
    }
    let wsLine = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("ws: ") }, text)
    var base = String(wsLine.dropFirst("ws: ".count))
    if base.hasSuffix("/") { base.removeLast() }
    let name = "dying-\(UInt16.random(in: 0...UInt16.max))"

    let streamer = try ExampleRunner.Running(
      "Streamer",
      ["--url", base + "/" + name, "--duration", "60", "--width", "320", "--height", "240"])
    var deadline = Date().addingTimeInterval(20)
    while !streamer.output.contains("publish \(name) PUBLISHING"), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
    }
    let out = try ExampleRunner.temporaryDirectory("dying")
    let player = try ExampleRunner.Running(
      "Player", ["--url", base + "/" + name, "--duration", "60", "--out", out])
    deadline = Date().addingTimeInterval(20)
    while !player.output.contains("play \(name) PLAYING"), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
    }
    XCTAssertTrue(player.output.contains("play \(name) PLAYING"), player.output)
    XCTAssertEqual(kill(server.processIdentifier, SIGKILL), 0)

    // Well inside the 60-second duration; the runner kills (status 15) what is still running.
    let played = player.wait(timeout: 30)
    let published = streamer.wait(timeout: 30)
    XCTAssertEqual(played.status, 1, played.output)
    XCTAssertEqual(
      played.summary["FAILED"], "play \(name) FAILED: Stopped by session disconnect; ",
      played.output)
    XCTAssertEqual(published.status, 1, published.output)
    XCTAssertEqual(
      published.summary["FAILED"], "publish \(name) FAILED: Stopped by session disconnect; ",
      published.output)
  }
}
