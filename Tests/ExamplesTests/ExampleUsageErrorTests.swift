import ExampleSupport
import Foundation
import XCTest

/// Command lines a new user could type by mistake: each is refused at once with a one-line
/// reason and a non-zero status, before any server or media starts.
final class ExampleUsageErrorTests: XCTestCase {
  /// `nan` and `inf` parse as `Double`s; as a duration or ratio they are a usage error (the
  /// demo used to trap converting `(nan + 2) * fps` to an `Int`).
  func testNonFiniteNumbersAreUsageErrors() throws {
    for text in ["nan", "inf", "-inf", "infinity", "NaN"] {
      let arguments = try ExampleArguments(["--duration", text])
      XCTAssertThrowsError(try arguments.double("duration", default: 1), text) { error in
        XCTAssertEqual("\(error)", "usage: --duration wants a number, got \(text)")
      }
    }
    XCTAssertEqual(
      try ExampleArguments(["--duration", "1e3"]).double("duration", default: 1), 1000)
    XCTAssertEqual(
      try ExampleArguments(["--duration", "-2.5"]).double("duration", default: 1), -2.5)
  }

  /// wcs-demo: durations that are not a positive finite number of seconds and a zero size or
  /// frame rate end with status 64 and the reason, not a crash (signal) or a run that fails
  /// later with unrelated reasons.
  func testDemoRefusesImpossibleDurationsAndSizes() throws {
    let out = try ExampleRunner.temporaryDirectory("usage-error-demo")
    let cases: [([String], String)] = [
      (["--duration", "nan"], "--duration wants a number, got nan"),
      (["--duration", "inf"], "--duration wants a number, got inf"),
      (["--duration", "0"], "--duration wants a positive number of seconds, got 0.0"),
      (["--duration", "-5"], "--duration wants a positive number of seconds, got -5.0"),
      (["--width", "0"], "--width wants a positive integer, got 0"),
      (["--fps", "0"], "--fps wants a positive integer, got 0"),
      (["--height", "-1"], "--height wants a positive integer, got -1"),
    ]
    for (arguments, reason) in cases {
      let result = try ExampleRunner.run(
        "wcs-demo", ["--virtual", "--out", out] + arguments, timeout: 30)
      XCTAssertEqual(result.status, 64, "\(arguments): \(result.output)")
      XCTAssertTrue(result.output.contains(reason), "\(arguments): \(result.output)")
      XCTAssertFalse(result.output.contains("session ESTABLISHED"), "\(arguments) ran")
    }
  }

  /// A `--file` that is missing or not media is refused before streaming starts (it used to
  /// be listed as a camera, fail only when switched to, and the run ended `Result: OK`).
  func testTwoWayStreamingAndMediaDevicesRefuseAnUnusableFile() throws {
    let out = try ExampleRunner.temporaryDirectory("usage-error-file")
    for example in ["TwoWayStreaming", "MediaDevices"] {
      for file in ["/nonexistent/clip.mp4", "/etc/passwd"] {
        let result = try ExampleRunner.run(
          example, ["--file", file, "--duration", "2", "--out", out], timeout: 30)
        XCTAssertEqual(result.status, 1, "\(example) \(file): \(result.output)")
        XCTAssertTrue(
          result.output.contains("\(example): cannot use \(file)"),
          "\(example) \(file): \(result.output)")
        XCTAssertFalse(result.output.contains("Result: OK"), "\(example) \(file)")
      }
    }
  }

  /// A play constraint the SDK refuses (`--play-width -5`) fails the run with the SDK's reason
  /// (it was swallowed by `try?`, and the summary said only "no frame was played").
  func testMediaDevicesSaysWhyPlayingWasRefused() throws {
    let out = try ExampleRunner.temporaryDirectory("usage-error-play-width")
    let result = try ExampleRunner.run(
      "MediaDevices", ["--play-width", "-5", "--duration", "1", "--out", out], timeout: 40)
    XCTAssertEqual(result.status, 1, result.output)
    let failure = try XCTUnwrap(result.summary["FAILED"], result.output)
    XCTAssertTrue(failure.hasPrefix("Failed to play: invalid options"), failure)
    XCTAssertTrue(failure.contains("got -5"), failure)
  }

  /// ScreenCapturer's `--fps` is the capture rate: 0 or less is a usage error before any
  /// display is opened (0 ran and failed late on the Y4M header).
  func testScreenCapturerRefusesANonPositiveFrameRate() throws {
    for fps in ["0", "-3"] {
      let result = try ExampleRunner.run(
        "ScreenCapturer", ["--fps", fps, "--display", ":9999", "--duration", "1"], timeout: 30)
      XCTAssertEqual(result.status, 64, result.output)
      XCTAssertTrue(
        result.output.contains("usage: --fps wants a positive integer, got \(fps)"), result.output)
    }
  }

  /// A negative `--duration` is a usage error everywhere (Streamer and Player used to run
  /// until Ctrl-C, as for 0; the others stopped at once and failed with unrelated reasons).
  func testEveryExampleRefusesANegativeDuration() throws {
    for example in [
      "MediaDevices", "Player", "ScreenCapturer", "StreamRecording", "Streamer", "TwoWayStreaming",
    ] {
      let result = try ExampleRunner.run(example, ["--duration", "-1"], timeout: 30)
      XCTAssertEqual(result.status, 64, "\(example): \(result.output)")
      XCTAssertTrue(
        result.output.hasPrefix("usage: --duration wants"), "\(example): \(result.output)")
    }
  }

  /// Player's own test stream with a name the SDK refuses: the run ends at once with the
  /// SDK's reason (it was swallowed by `try?`; the run waited 20 s for PLAYING and said only
  /// "did not reach play PLAYING").
  func testPlayerSaysWhyItsTestStreamWasRefused() throws {
    let out = try ExampleRunner.temporaryDirectory("usage-error-player-name")
    let result = try ExampleRunner.run(
      "Player", ["--stream", "", "--duration", "1", "--out", out], timeout: 15)
    XCTAssertEqual(result.status, 1, result.output)
    let failure = try XCTUnwrap(result.summary["FAILED"], result.output)
    XCTAssertTrue(failure.hasPrefix("test stream  FAILED: invalid"), failure)
  }

  /// A `--url` the SDK refuses says why in every example (three printed only "Failed to
  /// connect").
  func testEveryExampleSaysWhyTheURLWasRefused() throws {
    for example in ["Player", "StreamRecording", "Streamer", "TwoWayStreaming", "MediaDevices"] {
      let out = try ExampleRunner.temporaryDirectory("usage-error-url")
      var arguments = ["--url", "http://127.0.0.1:1/name", "--duration", "1"]
      if example != "Streamer" { arguments += ["--out", out] }
      let result = try ExampleRunner.run(example, arguments, timeout: 15)
      XCTAssertEqual(result.status, 1, "\(example): \(result.output)")
      XCTAssertTrue(
        result.output.contains(
          "Failed to connect: invalid options: urlServer must be a ws:// or wss:// URL"),
        "\(example): \(result.output)")
    }
  }
}
