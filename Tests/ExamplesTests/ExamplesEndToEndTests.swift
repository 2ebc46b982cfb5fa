import ExampleSupport
import Foundation
import WCSLocalServer
import XCTest

/// Every example run end to end against the local server (started by the example itself, or by
/// the test for the Streamer/Player pair), with short durations; the checks read the summary
/// each example prints.
final class ExamplesEndToEndTests: XCTestCase {
  static let movie = "/usr/share/forensics-samples/original-files/movie2/movie-hello.mp4"

  private func number(_ summary: [String: String], _ label: String) -> Double? {
    ExampleSummary.number(summary[label])
  }

  private func assertSucceeded(
    _ result: ExampleRunner.Result, file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertEqual(result.status, 0, result.output, file: file, line: line)
    XCTAssertEqual(result.summary["Result"], "OK", result.output, file: file, line: line)
  }

  /// The main job on a 3-second cut of the real movie: every status reached, frames decoded,
  /// PSNR against the source ≥ 30 dB, an audio delay measured, and a record ffprobe reads.
  func testDemoPublishesPlaysAndRecordsTheMovie() throws {
    try XCTSkipUnless(
      FileManager.default.fileExists(atPath: Self.movie),
      "forensics-samples-files is not installed (scripts/install-deps.sh test)")
    let out = try ExampleRunner.temporaryDirectory("demo")
    let result = try ExampleRunner.run(
      "wcs-demo",
      [Self.movie, "--duration", "3", "--width", "320", "--height", "180", "--out", out])
    assertSucceeded(result)
    let summary = result.summary
    XCTAssertEqual(summary["Input"], "file \(Self.movie)")
    let established = try XCTUnwrap(number(summary, "Time to ESTABLISHED"), result.output)
    let publishing = try XCTUnwrap(number(summary, "Time to PUBLISHING"), result.output)
    let playing = try XCTUnwrap(number(summary, "Time to PLAYING"), result.output)
    let firstFrame = try XCTUnwrap(number(summary, "Time to first decoded frame"), result.output)
    XCTAssertLessThanOrEqual(established, publishing)
    XCTAssertLessThanOrEqual(publishing, playing)
    XCTAssertLessThanOrEqual(playing, firstFrame)
    XCTAssertGreaterThan(number(summary, "Frames received and decoded") ?? 0, 30, result.output)
    XCTAssertEqual(summary["Played video size"], "320x180")
    XCTAssertGreaterThanOrEqual(number(summary, "PSNR played vs source") ?? 0, 30, result.output)
    XCTAssertNotNil(number(summary, "Audio delay"), result.output)
    XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/played.y4m"))
    XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/played.wav"))
    let recordPath = try XCTUnwrap(summary["Record path"], result.output)
    XCTAssertTrue(FileManager.default.fileExists(atPath: recordPath))
    if RecordFile.findExecutable("ffprobe") != nil {
      let duration = try XCTUnwrap(number(summary, "Record duration"), result.output)
      XCTAssertGreaterThan(duration, 2.0, result.output)
      XCTAssertLessThan(duration, 4.5, result.output)
    }
  }

  /// A 2-second file with video and no sound: published for the file's length (no
  /// --duration), video only, no audio delay to measure; an MP3 (sound, no video) is published
  /// and checked as audio: audio frames decoded, a record with an audio track, no video lines.
  func testDemoPublishesAVideoOnlyFileAndAnAudioOnlyMP3() throws {
    let ffmpeg = try XCTUnwrap(RecordFile.findExecutable("ffmpeg"), "no ffmpeg")
    let out = try ExampleRunner.temporaryDirectory("demo-video-only")
    let silent = out + "/video-only.mp4"
    let tone = out + "/audio-only.mp3"
    for (inputs, path) in [
      (["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "2"], silent),
      (["-f", "lavfi", "-i", "sine=frequency=440:duration=2"], tone),
    ] {
      let maker = Process()
      maker.executableURL = URL(fileURLWithPath: ffmpeg)
      maker.arguments = ["-v", "error", "-y"] + inputs + [path]
      try maker.run()
      maker.waitUntilExit()
      XCTAssertEqual(maker.terminationStatus, 0, "ffmpeg made \(path)")
    }
    let result = try ExampleRunner.run(
      "wcs-demo",
      // In 2 s the frames before the first key frame after PLAYING and those in flight at the
      // stop (about 3 + 3 on a clean loopback) are over 10 % of the frames sent.
      [silent, "--width", "320", "--height", "240", "--out", out, "--min-decoded", "75"])
    assertSucceeded(result)
    XCTAssertTrue(
      result.output.contains("publishing 2.0 s"), "the file's length, not 8 s: \(result.output)")
    XCTAssertEqual(
      result.summary["Audio delay"], "n/a (needs a file source with sound)", result.output)
    XCTAssertGreaterThan(number(result.summary, "Frames received and decoded") ?? 0, 20)
    XCTAssertNotNil(number(result.summary, "Frames decoded"), result.output)

    let audioOnly = try ExampleRunner.run("wcs-demo", [tone, "--out", out + "/mp3"])
    assertSucceeded(audioOnly)
    let summary = audioOnly.summary
    XCTAssertEqual(summary["Input"], "file \(tone) (audio only)", audioOnly.output)
    // About 100 Opus frames of 20 ms in 2 s, nearly all decoded on a clean loopback.
    let decoded = try XCTUnwrap(number(summary, "Audio frames decoded"), audioOnly.output)
    XCTAssertGreaterThan(decoded, 80, audioOnly.output)
    XCTAssertGreaterThan(number(summary, "Audio blocks played") ?? 0, 80, audioOnly.output)
    XCTAssertEqual(summary["Record tracks"], "audio", audioOnly.output)
    XCTAssertEqual(summary["Audio delay"], "n/a (no video to measure against)", audioOnly.output)
    for videoLine in ["PSNR played vs source", "Frames decoded", "Played video size", "PLIs"] {
      XCTAssertNil(summary[videoLine], "\(videoLine) in \(audioOnly.output)")
    }
  }

  /// Thresholds no run can meet fail it with the reasons, whatever the PSNR: a freeze limit
  /// below one frame interval (the wait for the first picture is longer) and 100 % decoded
  /// (the frames before the first key frame after PLAYING cannot be decoded).
  func testDemoFailsOnFreezesAndTheDecodedShare() throws {
    let out = try ExampleRunner.temporaryDirectory("demo-limits")
    let result = try ExampleRunner.run(
      "wcs-demo",
      [
        "--virtual", "--duration", "1", "--width", "160", "--height", "96", "--out", out,
        "--max-freeze", "0.01", "--min-decoded", "100",
      ])
    XCTAssertEqual(result.status, 1, result.output)
    XCTAssertEqual(result.summary["Result"], "FAILED", result.output)
    let failed = try XCTUnwrap(result.summary["FAILED"], result.output)
    XCTAssertTrue(failed.contains("the video froze for"), result.output)
    XCTAssertTrue(failed.contains("(more than 0.01 s)"), result.output)
    let decoded = try XCTUnwrap(number(result.summary, "Frames decoded"), result.output)
    let sent = try XCTUnwrap(number(result.summary, "Frames sent"), result.output)
    XCTAssertGreaterThan(decoded, 0, result.output)
    XCTAssertEqual(
      failed.contains("of the frames were decoded"), decoded < sent,
      "\(decoded) of \(sent): \(failed)")
    // The pictures that did arrive are still good: only the share and the freeze failed.
    XCTAssertGreaterThanOrEqual(number(result.summary, "PSNR played vs source") ?? 0, 30)
    XCTAssertNotNil(result.summary["NACKs (player)"], result.output)
    XCTAssertNotNil(result.summary["Key frames"], result.output)

    let refused = try ExampleRunner.run("wcs-demo", ["--virtual", "--min-decoded", "101"])
    XCTAssertEqual(refused.status, 64, refused.output)
    XCTAssertTrue(refused.output.contains("--min-decoded wants a percent"), refused.output)
  }

  /// The main job with the virtual devices: frames compared by the frame number they carry.
  func testDemoWithVirtualDevicesMatchesFrameNumbers() throws {
    let out = try ExampleRunner.temporaryDirectory("demo-virtual")
    let result = try ExampleRunner.run(
      "wcs-demo",
      [
        "--virtual", "--duration", "2", "--width", "320", "--height", "240", "--out", out,
        "--min-decoded", "75",
      ])
    assertSucceeded(result)
    XCTAssertEqual(
      result.summary["Frame matching"]?.hasPrefix("virtual camera frame number"), true,
      result.output)
    XCTAssertGreaterThanOrEqual(number(result.summary, "PSNR played vs source") ?? 0, 30)
  }

  /// TwoWayStreaming: publish, play the same stream, switch to the file camera, stop,
  /// disconnect.
  func testTwoWayStreamingSwitchesCameraAndStops() throws {
    let out = try ExampleRunner.temporaryDirectory("twoway")
    // The frames sent between PLAYING and the first key frame (a few of a 3 s run) are not
    // decodable: the bar of the other short runs here.
    var arguments = [
      "--duration", "3", "--width", "320", "--height", "240", "--min-decoded", "75", "--out", out,
    ]
    let haveMovie = FileManager.default.fileExists(atPath: Self.movie)
    if haveMovie { arguments += ["--file", Self.movie] }
    let result = try ExampleRunner.run("TwoWayStreaming", arguments)
    assertSucceeded(result)
    XCTAssertNotNil(number(result.summary, "Time to PLAYING"), result.output)
    XCTAssertGreaterThan(number(result.summary, "Frames received and decoded") ?? 0, 10)
    XCTAssertEqual(
      result.summary["Statuses"], "publish UNPUBLISHED, play STOPPED, session DISCONNECTED")
    if haveMovie { XCTAssertEqual(result.summary["Camera switched"], "yes", result.output) }
    XCTAssertTrue(result.output.contains("Found published stream, switching camera"))
  }

  /// StreamRecording: the record is downloaded over HTTP and lasts about as long as the
  /// stream was published.
  func testStreamRecordingDownloadsAValidRecord() throws {
    let out = try ExampleRunner.temporaryDirectory("recording")
    let result = try ExampleRunner.run(
      "StreamRecording", ["--duration", "2", "--width", "320", "--height", "240", "--out", out])
    assertSucceeded(result)
    XCTAssertEqual(result.summary["Record URL"]?.hasPrefix("http://127.0.0.1:"), true)
    let path = try XCTUnwrap(result.summary["Record path"], result.output)
    let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
    XCTAssertGreaterThan(size ?? 0, 1000)
    if RecordFile.findExecutable("ffprobe") != nil {
      let duration = try XCTUnwrap(number(result.summary, "Record duration"), result.output)
      XCTAssertGreaterThan(duration, 1.0, result.output)
      XCTAssertLessThan(duration, 3.5, result.output)
    }
  }

  /// MediaDevices: devices listed, publish with FEC/stereo, mute and unmute while publishing;
  /// the player sees all four mute events.
  func testMediaDevicesMutesDuringPublishing() throws {
    let out = try ExampleRunner.temporaryDirectory("devices")
    let result = try ExampleRunner.run(
      "MediaDevices",
      [
        "--duration", "3", "--mute-during", "--fec", "--stereo", "--width", "320", "--height",
        "240", "--out", out,
      ])
    assertSucceeded(result)
    XCTAssertGreaterThanOrEqual(number(result.summary, "Cameras") ?? 0, 1)
    XCTAssertGreaterThanOrEqual(number(result.summary, "Microphones") ?? 0, 1)
    XCTAssertEqual(
      result.summary["Stream events"], "audioMuted, audioUnmuted, videoMuted, videoUnmuted",
      result.output)
    XCTAssertGreaterThan(number(result.summary, "Frames received and decoded") ?? 0, 0)
  }

  /// MediaDevices' local media test: camera frames without a server, and a microphone level
  /// (the virtual microphone's tone is about -15 dBFS).
  func testMediaDevicesLocalTestShowsCameraAndMicrophoneLevel() throws {
    let result = try ExampleRunner.run("MediaDevices", ["--test", "--test-seconds", "1"])
    assertSucceeded(result)
    XCTAssertGreaterThan(number(result.summary, "Test camera frames") ?? 0, 0, result.output)
    let level = try XCTUnwrap(result.summary["Test microphone level"], result.output)
    XCTAssertTrue(level.contains("#"), level)
    XCTAssertFalse(level.hasSuffix("-60 dBFS"), level)
  }

  /// Streamer and Player against one server the test starts, both through `--url` with the
  /// stream name in the URL path, as the iOS examples take it.
  func testStreamerAndPlayerThroughOneServer() throws {
    var configuration = WCSLocalServer.Configuration()
    configuration.wsPort = 0
    configuration.httpPort = 0
    configuration.recordsDirectory = try ExampleRunner.temporaryDirectory("pair-records")
    configuration.logSink = { _ in }
    let server = try WCSLocalServer.start(configuration)
    defer { server.stop() }
    let base = server.wsURL.hasSuffix("/") ? String(server.wsURL.dropLast()) : server.wsURL
    let name = "pair-\(UInt16.random(in: 0...UInt16.max))"
    // --no-play: the Streamer's own playback (StreamerExampleTests) would take the key frame
    // the server asks for first, and the Player's PLI would wait out the server's interval.
    let streamer = try ExampleRunner.Running(
      "Streamer",
      [
        "--url", base + "/" + name, "--duration", "6", "--width", "320", "--height", "240",
        "--no-play",
      ])
    let deadline = Date().addingTimeInterval(20)
    while server.streamCount == 0 || !streamer.output.contains("PUBLISHING"), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
    }
    XCTAssertTrue(streamer.output.contains("publish \(name) PUBLISHING"), streamer.output)
    let out = try ExampleRunner.temporaryDirectory("player")
    let player = try ExampleRunner.run(
      "Player", ["--url", base + "/" + name, "--duration", "3", "--out", out])
    let published = streamer.wait(timeout: 30)
    assertSucceeded(player)
    assertSucceeded(published)
    XCTAssertEqual(player.summary["Stream"], name)
    XCTAssertGreaterThan(number(player.summary, "Frames received and decoded") ?? 0, 10)
    XCTAssertGreaterThan(number(player.summary, "Audio blocks played") ?? 0, 10)
    XCTAssertGreaterThan(number(published.summary, "Frames sent") ?? 0, 30)
    // The sender is another program: the share is against the rate the RTP timestamps show
    // (the Streamer's default 30 fps, give or take its capture jitter over 3 s, which on a
    // loaded machine moves a 3 s estimate by up to a few percent).
    let share = try XCTUnwrap(player.summary["Frames decoded"], player.output)
    let rate = share.components(separatedBy: " due at ").last.flatMap(ExampleSummary.number)
    XCTAssertEqual(rate ?? 0, 30, accuracy: 1.5, share)
    XCTAssertNotNil(player.summary["Freezes (no new picture > 0.5 s)"], player.output)
    XCTAssertNil(player.summary["NACKs (publisher)"], "no publisher in the Player's run")
    XCTAssertEqual(
      published.summary["PLIs"]?.hasPrefix("publisher received "), true, published.output)
  }

  /// Player's test stream from a clip without sound: published video only (it used to fail on
  /// the file's missing microphone), played, no audio blocks.
  func testPlayerPlaysAVideoOnlyFile() throws {
    let ffmpeg = try XCTUnwrap(RecordFile.findExecutable("ffmpeg"), "no ffmpeg")
    let out = try ExampleRunner.temporaryDirectory("player-video-only")
    let clip = out + "/video-only.webm"
    let maker = Process()
    maker.executableURL = URL(fileURLWithPath: ffmpeg)
    maker.arguments = [
      "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "4", clip,
    ]
    try maker.run()
    maker.waitUntilExit()
    XCTAssertEqual(maker.terminationStatus, 0, "ffmpeg made \(clip)")
    let result = try ExampleRunner.run(
      // Four seconds, not two: the frames of the last playout delay (200 ms) are sent but not
      // yet played when the run stops, a tenth of a two-second run against the 90 % it needs.
      "Player", ["--file", clip, "--duration", "4", "--out", out])
    assertSucceeded(result)
    XCTAssertGreaterThan(number(result.summary, "Frames received and decoded") ?? 0, 10)
    XCTAssertEqual(number(result.summary, "Audio blocks played"), 0, result.output)
  }

  /// ScreenCapturer under Xvfb: the screen is published, with a separate audio stream, and
  /// played back.
  func testScreenCapturerPublishesXvfbScreen() throws {
    guard let xvfb = RecordFile.findExecutable("Xvfb") else {
      throw XCTSkip("Xvfb is not installed (scripts/install-deps.sh test)")
    }
    guard
      let display = (90..<140).first(where: {
        !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
          && !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
      })
    else { throw XCTSkip("no free X display in :90...:139") }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: xvfb)
    process.arguments = [":\(display)", "-screen", "0", "320x240x24", "-nolisten", "tcp"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
      process.terminate()
      process.waitUntilExit()
    }
    let socket = "/tmp/.X11-unix/X\(display)"
    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: socket), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
    }
    XCTAssertTrue(FileManager.default.fileExists(atPath: socket), "Xvfb did not start")
    let out = try ExampleRunner.temporaryDirectory("screen")
    let result = try ExampleRunner.run(
      "ScreenCapturer", ["--display", ":\(display)", "--duration", "2", "--out", out])
    assertSucceeded(result)
    XCTAssertEqual(result.summary["Screen"], "320x240 at 10 fps")
    XCTAssertNotNil(number(result.summary, "Time to PUBLISHING (audio)"), result.output)
    XCTAssertGreaterThan(number(result.summary, "Screen frames sent") ?? 0, 5)
    XCTAssertGreaterThan(number(result.summary, "Frames received and decoded") ?? 0, 3)
  }
}
