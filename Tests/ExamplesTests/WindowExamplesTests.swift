import ExampleSupport
import Foundation
import XCTest

/// `--window` in the examples: under Xvfb the played video is shown; without a display the run
/// says why and goes on with its files.
final class WindowExamplesTests: XCTestCase {
  private var xvfb: Process?
  private var display = ""

  override func setUpWithError() throws {
    guard let path = RecordFile.findExecutable("Xvfb") else {
      throw XCTSkip("Xvfb is not installed (scripts/install-deps.sh test)")
    }
    guard
      let number = (400..<450).first(where: {
        !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
          && !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
      })
    else { throw XCTSkip("no free X display in :400...:449") }
    display = ":\(number)"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = [display, "-screen", "0", "1280x720x24", "-nolisten", "tcp"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    xvfb = process
    let socket = "/tmp/.X11-unix/X\(number)"
    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: socket), Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
    }
    XCTAssertTrue(FileManager.default.fileExists(atPath: socket), "Xvfb did not start")
  }

  override func tearDown() {
    xvfb?.terminate()
    xvfb?.waitUntilExit()
    xvfb = nil
  }

  /// The examples' environment: this Xvfb, and SDL's software renderer — with Mesa's llvmpipe
  /// GL an example exiting right after its window closed sometimes crashed in Mesa's teardown
  /// at process exit (a worker thread locking a mutex already destroyed).
  private var environment: [String: String] {
    ["DISPLAY": display, "SDL_RENDER_DRIVER": "software"]
  }

  private func shown(_ result: ExampleRunner.Result, _ label: String) -> [Double] {
    (result.summary[label] ?? "").split(separator: " ").compactMap { Double($0) }
  }

  /// Xvfb draws with Mesa's software GL on the same two cores as the codecs, so the decoded
  /// share is only held to half here; the window's own counts are the point.
  func testPlayerShowsThePlayedStreamInAWindow() throws {
    let out = try ExampleRunner.temporaryDirectory("player-window")
    let result = try ExampleRunner.run(
      "Player", ["--window", "--duration", "3", "--min-decoded", "50", "--out", out],
      environment: environment)
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    XCTAssertTrue(result.output.contains("window \"Player: "), result.output)
    let decoded = ExampleSummary.number(result.summary["Frames received and decoded"]) ?? 0
    let windowFrames = ExampleSummary.number(result.summary["Frames shown in the window"]) ?? 0
    XCTAssertGreaterThan(windowFrames, 10, result.output)
    XCTAssertLessThanOrEqual(windowFrames, decoded, "the window shows at most every decoded frame")
  }

  func testTwoWayStreamingShowsPreviewAndPlayedStream() throws {
    let out = try ExampleRunner.temporaryDirectory("twoway-window")
    let result = try ExampleRunner.run(
      "TwoWayStreaming", ["--window", "--duration", "3", "--min-decoded", "50", "--out", out],
      environment: environment)
    XCTAssertEqual(result.status, 0, result.output)
    let counts = shown(result, "Frames shown in the windows")
    XCTAssertEqual(counts.count, 2, result.summary["Frames shown in the windows"] ?? result.output)
    XCTAssertGreaterThan(counts.first ?? 0, 10, "local preview")
    XCTAssertGreaterThan(counts.last ?? 0, 10, "played stream")
  }

  func testDemoShowsTheSentAndThePlayedVideoInTwoWindows() throws {
    let out = try ExampleRunner.temporaryDirectory("demo-window")
    let result = try ExampleRunner.run(
      "wcs-demo",
      [
        "--virtual", "--window", "--duration", "3", "--width", "320", "--height", "240",
        "--min-decoded", "50", "--out", out,
      ], environment: environment)
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertTrue(result.output.contains("window \"sent: "), result.output)
    XCTAssertTrue(result.output.contains("window \"played: "), result.output)
    let counts = shown(result, "Frames shown in the windows")
    XCTAssertEqual(counts.count, 2, result.summary["Frames shown in the windows"] ?? result.output)
    XCTAssertGreaterThan(counts.first ?? 0, 10, "sent video")
    XCTAssertGreaterThan(counts.last ?? 0, 10, "played video")
  }

  /// Several windows in one process: one per played stream.
  func testTwoPlayersShowEachStreamInItsOwnWindow() throws {
    let out = try ExampleRunner.temporaryDirectory("two-players-window")
    // Five seconds: in three, the frames of the last playout delay, sent but not yet played at
    // the stop, left the decoded share near the 90 % the example holds each player to.
    let result = try ExampleRunner.run(
      "TwoPlayers", ["--window", "--duration", "5", "--out", out], environment: environment)
    XCTAssertEqual(result.status, 0, result.output)
    for label in ["player1", "player2"] {
      XCTAssertTrue(result.output.contains("window \"\(label): "), result.output)
      let shown = ExampleSummary.number(result.summary["\(label) frames shown in the window"])
      XCTAssertGreaterThan(shown ?? 0, 10, result.output)
    }
  }

  func testMultiPlayerOpensAWindowPerPlayer() throws {
    let result = try ExampleRunner.run(
      "MultiPlayer", ["--window", "--players", "3", "--duration", "3", "--min-decoded", "50"],
      environment: environment)
    XCTAssertEqual(result.status, 0, result.output)
    for label in ["player1", "player2", "player3"] {
      XCTAssertTrue(result.output.contains("window \"MultiPlayer: \(label) "), result.output)
      let shown = ExampleSummary.number(result.summary["\(label) frames shown in the window"])
      XCTAssertGreaterThan(shown ?? 0, 10, result.output)
    }
  }

  func testStreamerShowsItsPlayedBackStreamInAWindow() throws {
    let result = try ExampleRunner.run(
      "Streamer", ["--window", "--duration", "3"], environment: environment)
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertTrue(result.output.contains("window \"Streamer: "), result.output)
    let played = ExampleSummary.number(result.summary["Frames played"]) ?? 0
    let shown = ExampleSummary.number(result.summary["Frames shown in the window"]) ?? 0
    XCTAssertGreaterThan(shown, 10, result.output)
    XCTAssertLessThanOrEqual(shown, played, "the window shows at most every played frame")
  }

  /// The window as getMediaAccess's local preview (MediaDevices' camera test, no server).
  func testMediaDevicesShowsTheLocalPreviewInAWindow() throws {
    let result = try ExampleRunner.run(
      "MediaDevices", ["--test", "--test-seconds", "2", "--window"], environment: environment)
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertTrue(result.output.contains("window \"MediaDevices: local test\" open"), result.output)
    let camera = ExampleSummary.number(result.summary["Test camera frames"]) ?? 0
    let shown = ExampleSummary.number(result.summary["Frames shown in the window"]) ?? 0
    XCTAssertGreaterThan(shown, 10, result.output)
    XCTAssertLessThanOrEqual(shown, camera, "the window shows at most every camera frame")
  }

  func testWindowWithoutADisplayIsReportedAndTheRunGoesOn() throws {
    let out = try ExampleRunner.temporaryDirectory("player-nowindow")
    let result = try ExampleRunner.run(
      "Player", ["--window", "--duration", "1", "--min-decoded", "0", "--out", out],
      environment: ["DISPLAY": "", "WAYLAND_DISPLAY": "", "SDL_VIDEODRIVER": ""])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertTrue(
      result.output.contains("window unavailable: no display: neither DISPLAY nor WAYLAND_DISPLAY"),
      result.output)
    XCTAssertNil(result.summary["Frames shown in the window"])
  }
}
