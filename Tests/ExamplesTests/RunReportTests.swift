import ExampleSupport
import Foundation
import WCSMedia
import XCTest

/// `wcs-demo --report`: the page is self-contained and renders in headless Chromium — its
/// charts, thumbnails and timeline are in the DOM Chromium builds, and its screenshot shows
/// them (the series' colours, not a blank page).
final class RunReportTests: XCTestCase {
  static let chromium = "/usr/bin/chromium"

  private func runChromium(_ arguments: [String], output: String) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.chromium)
    process.arguments =
      ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"] + arguments
    FileManager.default.createFile(atPath: output, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
    defer { try? handle.close() }
    process.standardOutput = handle
    process.standardError = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(60)
    while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    if process.isRunning { process.terminate() }
    process.waitUntilExit()
    return process.terminationStatus
  }

  private func count(_ needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
  }

  /// The `<svg class="chart">` element labelled `name`, "" when there is none.
  private func chart(_ name: String, in text: String) -> String {
    guard let start = text.range(of: "aria-label=\"\(name)\""),
      let end = text.range(of: "</svg>", range: start.upperBound..<text.endIndex)
    else { return "" }
    return String(text[start.lowerBound..<end.upperBound])
  }

  func testDemoReportRendersInHeadlessChromium() throws {
    guard FileManager.default.isExecutableFile(atPath: Self.chromium) else {
      throw XCTSkip("chromium is not installed (scripts/install-deps.sh test)")
    }
    let out = try ExampleRunner.temporaryDirectory("report")
    let page = out + "/report.html"
    let result = try ExampleRunner.run(
      "wcs-demo", ["--virtual", "--duration", "4", "--out", out, "--report", page])
    // The page is written whatever the run's verdict (a slow machine may miss a limit).
    XCTAssertNotNil(result.summary["Result"], result.output)
    XCTAssertEqual(result.summary["Report written to"], page, result.output)
    let html = try String(contentsOfFile: page, encoding: .utf8)
    XCTAssertFalse(html.contains("<script"), "no script")
    XCTAssertFalse(html.contains("src=\"http"), "nothing fetched")
    XCTAssertFalse(html.contains("href=\"http"), "nothing linked")

    // The DOM Chromium built from it.
    let profile = out + "/chromium-profile"
    let dom = out + "/dom.html"
    XCTAssertEqual(
      try runChromium(["--user-data-dir=\(profile)", "--dump-dom", "file://\(page)"], output: dom),
      0)
    let tree = try String(contentsOfFile: dom, encoding: .utf8)
    XCTAssertEqual(count("<svg class=\"chart\"", in: tree), 5, "five charts")
    XCTAssertGreaterThanOrEqual(count("<polyline class=\"series\"", in: tree), 5, "series drawn")
    // The played stream's video jitter buffer, its target and the audio playout delay.
    let delays = chart("Jitter-buffer delay", in: tree)
    XCTAssertEqual(count("<polyline class=\"series\"", in: delays), 3, delays)
    XCTAssertFalse(delays.contains("not measured"), delays)
    XCTAssertGreaterThanOrEqual(count("class=\"thumb source\"", in: tree), 1)
    XCTAssertEqual(
      count("class=\"thumb source\"", in: tree), count("class=\"thumb played\"", in: tree),
      "source and played side by side")
    XCTAssertGreaterThanOrEqual(count("<circle class=\"event\"", in: tree), 5, "status timeline")
    XCTAssertTrue(tree.contains("PUBLISHING") && tree.contains("PLAYING"))
    XCTAssertGreaterThan(count("<tr>", in: tree), 10, "summary table")

    // Its screenshot: the sent-bitrate line's colour (#1f77b4) and the thumbnails' colours.
    let shot = out + "/shot.png"
    XCTAssertEqual(
      try runChromium(
        [
          "--user-data-dir=\(profile)", "--window-size=1000,1400", "--screenshot=\(shot)",
          "file://\(page)",
        ], output: out + "/shot.log"), 0)
    let picture = try PictureFile.decodePNG(Array(try Data(contentsOf: URL(fileURLWithPath: shot))))
    XCTAssertEqual([picture.width, picture.height], [1000, 1400])
    let luma = picture.y
    let mean = Double(luma.reduce(0) { $0 + Int($1) }) / Double(luma.count)
    let variance = luma.reduce(0.0) { $0 + pow(Double($1) - mean, 2) } / Double(luma.count)
    XCTAssertGreaterThan(variance, 100, "not blank (luma variance \(variance))")
    // #1f77b4 in BT.601 limited range: Y 97, U 165, V 104 (±6 for antialiasing).
    var blue = 0
    for row in 0..<picture.chromaHeight {
      for x in 0..<picture.chromaWidth {
        let u = Int(picture.u[row * picture.strideU + x])
        let v = Int(picture.v[row * picture.strideV + x])
        if abs(u - 165) < 7, abs(v - 104) < 7 { blue += 1 }
      }
    }
    XCTAssertGreaterThan(blue, 40, "the sent-bitrate line is drawn (\(blue) chroma samples)")
  }

  /// The examples' `--report`: the same page, from their own samples.
  func testPlayerAndTwoWayStreamingWriteReports() throws {
    try assertExamplesWriteReports(["Player", "TwoWayStreaming"])
  }

  /// Streamer (its own stream played back) and MultiPlayer (the test stream and player1).
  func testStreamerAndMultiPlayerWriteReports() throws {
    try assertExamplesWriteReports(["Streamer", "MultiPlayer"])
  }

  /// TwoPlayers (player1's stream) and ImageOverlay (the composited stream played back).
  func testTwoPlayersAndImageOverlayWriteReports() throws {
    try assertExamplesWriteReports(["TwoPlayers", "ImageOverlay"])
  }

  private func assertExamplesWriteReports(_ examples: [String]) throws {
    for example in examples {
      let out = try ExampleRunner.temporaryDirectory("report-\(example)")
      let page = out + "/report.html"
      // Streamer writes no files, so it has no --out. TwoPlayers checks the decoded share:
      // the bar of the other 3 s runs (the frames before the first key frame count).
      let result = try ExampleRunner.run(
        example,
        ["--duration", "3", "--report", page] + (example == "Streamer" ? [] : ["--out", out])
          + (example == "TwoPlayers" ? ["--min-decoded", "75"] : []))
      XCTAssertEqual(result.status, 0, result.output)
      XCTAssertEqual(result.summary["Report written to"], page, result.output)
      let html = try String(contentsOfFile: page, encoding: .utf8)
      XCTAssertEqual(count("<svg class=\"chart\"", in: html), 5, example)
      XCTAssertGreaterThanOrEqual(count("<polyline class=\"series\"", in: html), 4, example)
      // ImageOverlay publishes video only: no audio playout line.
      XCTAssertEqual(
        count("<polyline class=\"series\"", in: chart("Jitter-buffer delay", in: html)),
        example == "ImageOverlay" ? 2 : 3, example)
      XCTAssertGreaterThanOrEqual(count("class=\"thumb source\"", in: html), 1, example)
      XCTAssertGreaterThanOrEqual(count("class=\"thumb played\"", in: html), 1, example)
      XCTAssertTrue(html.contains("PLAYING"), example)
    }
  }
}
