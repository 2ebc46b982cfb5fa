import FPWCSApi2Swift
import Foundation
import WCSMedia
import XCTest

@testable import ExampleSupport

/// The shared example code on its own: command lines, summaries, record checks, frame matching.
final class ExampleSupportTests: XCTestCase {
  func testArgumentsTakeOptionsFlagsAndPositionals() throws {
    let arguments = try ExampleArguments(
      [
        "movie.mp4", "--width", "320", "--fps=15", "--fec", "--no-audio", "--file", "a", "--file",
        "b",
      ],
      booleanFlags: ["fec"])
    XCTAssertEqual(arguments.positional, ["movie.mp4"])
    XCTAssertEqual(try arguments.int("width", default: 0), 320)
    XCTAssertEqual(try arguments.int("fps", default: 30), 15)
    XCTAssertEqual(try arguments.int("height", default: 480), 480)
    XCTAssertTrue(arguments.flag("fec"))
    XCTAssertFalse(arguments.flag("audio", default: true))
    XCTAssertTrue(arguments.flag("video", default: true))
    XCTAssertEqual(arguments.allValues["file"], ["a", "b"])
    let usage = "  --width W  --virtual  --no-audio\n"
    XCTAssertEqual(ExampleArguments.options(in: usage), ["width", "virtual", "no-audio"])
    XCTAssertNoThrow(try ExampleArguments(["--width", "4", "--no-audio"], usage: usage))
    XCTAssertThrowsError(try ExampleArguments(["--virtaul", "clip.mkv"], usage: usage)) { error in
      XCTAssertEqual("\(error)", "usage: unknown option --virtaul")
    }
    XCTAssertThrowsError(try ExampleArguments(["--width"]))
    XCTAssertThrowsError(try ExampleArguments(["--width", "wide"]).int("width", default: 0))
  }

  /// A terminal status ends the wait at once and becomes the summary's reason.
  func testNetworkOptionPutsTheEmulationOnTheSDKEngine() throws {
    defer { WCSApi2Environment.reset() }
    let log = ExampleLog()
    let usage = "  --stream NAME\n" + ExampleServer.usage
    XCTAssertTrue(ExampleArguments.options(in: usage).contains("network"))
    XCTAssertThrowsError(
      try ExampleNetwork.install(
        ExampleArguments(["--network", "delay=-5ms"], usage: usage), log: log)
    ) { error in
      XCTAssertEqual("\(error)", "usage: --network 'delay=-5ms': negative")
    }
    // The ideal network changes nothing.
    try ExampleNetwork.install(ExampleArguments(["--network", "none"], usage: usage), log: log)
    XCTAssertNil(ExampleNetwork.current)

    try ExampleNetwork.install(
      ExampleArguments(["--network", "loss=5%,delay=40ms"], usage: usage), log: log)
    let engine = try XCTUnwrap(WCSApi2Environment.sharedMediaBackend as? NativeMediaBackend)
    let emulation = try XCTUnwrap(engine.configuration.peerConnection.networkEmulation)
    XCTAssertEqual(emulation.spec, "loss=5%,delay=40ms")
    XCTAssertEqual(ExampleNetwork.current?.spec, "loss=5%,delay=40ms")
    // The engine's other settings stay the SDK's defaults.
    XCTAssertTrue(engine.configuration.peerConnection.allowLoopback)
  }

  func testEndEventsStopTheWaitWithTheirLine() {
    let log = ExampleLog()
    var summary = ExampleSummary()
    let ends = ["play FAILED", "session FAILED"]
    XCTAssertFalse(log.failIfEnded(ends, in: &summary))
    XCTAssertTrue(summary.succeeded)
    log.mark("play FAILED", detail: "play cam FAILED: Stream not found")
    log.mark("play FAILED", detail: "a later text is not kept")
    XCTAssertEqual(log.happened(["session FAILED", "play FAILED"]), "play FAILED")
    XCTAssertEqual(log.detail(of: "play FAILED"), "play cam FAILED: Stream not found")
    // Returns at once although the goal never comes and the timeout is an hour.
    XCTAssertFalse(log.wait(for: "play PLAYING", unless: ends, timeout: 3600, in: &summary))
    XCTAssertEqual(summary.failures, ["play cam FAILED: Stream not found"])
    var timedOut = ExampleSummary()
    XCTAssertFalse(
      log.wait(for: "play PLAYING", unless: ["session FAILED"], timeout: 0, in: &timedOut))
    XCTAssertEqual(timedOut.failures, ["did not reach play PLAYING"])
    log.mark("play PLAYING")
    var reached = ExampleSummary()
    XCTAssertTrue(log.wait(for: "play PLAYING", unless: ends, timeout: 0, in: &reached))
    XCTAssertTrue(reached.succeeded)
  }

  func testSummaryPrintsAndParsesBack() {
    var summary = ExampleSummary()
    summary.addTime("Time to PLAYING", 0.25)
    summary.addTime("Time to first frame", nil)
    summary.add("PSNR", "41.50 dB mean")
    summary.fail("no record")
    let output = """
      [  0.100] session ESTABLISHED
      == Summary ==
        Time to PLAYING:     0.250 s
        Time to first frame: never
        PSNR:                41.50 dB mean
        FAILED: no record
        Result: FAILED
      == End ==
      """
    let parsed = ExampleSummary.parse(output)
    XCTAssertEqual(parsed["Time to PLAYING"], "0.250 s")
    XCTAssertEqual(parsed["Time to first frame"], "never")
    XCTAssertEqual(ExampleSummary.number(parsed["PSNR"]), 41.5)
    XCTAssertEqual(parsed["FAILED"], "no record; ")
    XCTAssertNil(ExampleSummary.number(parsed["Time to first frame"]))
    // Signed figures, as the demo's audio delay prints them.
    XCTAssertEqual(ExampleSummary.number("+13 ms (audio behind video)"), 13)
    XCTAssertEqual(ExampleSummary.number("-21 ms (audio ahead of video)"), -21)
    XCTAssertFalse(summary.succeeded)
    XCTAssertEqual(
      summary.entries.map(\.label), ["Time to PLAYING", "Time to first frame", "PSNR"])
  }

  func testRecordCheckRejectsAFileThatIsNotWebM() throws {
    let path = NSTemporaryDirectory() + "not-a-record-\(UUID().uuidString).webm"
    try Data("<html>404</html>".utf8).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    XCTAssertThrowsError(try RecordFile.check(path: path, bytes: 16))
  }

  /// Played frames that are the source's frames 10... with RTP timestamps at 30 fps match
  /// exactly (PSNR capped at 99 dB), each at its timestamp.
  func testFrameMatchingFollowsRTPTimestamps() throws {
    let camera = VirtualCamera(width: 64, height: 48, frameRate: 30)
    let source = SourceMedia(
      frames: (0..<40).map { (Double($0) / 30, camera.frame($0 * 7)) }, audio: [], audioStart: 0,
      frameRate: 30)
    let played = (10..<30).map { index in
      VideoFileRenderer.Kept(
        rtpTimestamp: 1_000_000 &+ UInt32(index * 3000), arrival: 1 + Double(index) / 30,
        picture: camera.frame(index * 7))
    }
    let report = try XCTUnwrap(VideoQualityReport.compare(played: played, source: source))
    XCTAssertEqual(report.matchedFrames, 20)
    XCTAssertEqual(report.matchedAtTimestamp, 20)
    XCTAssertEqual(report.meanPSNR, 99)
    XCTAssertEqual(report.videoOffset ?? 0, 1, accuracy: 1e-9)
  }

  /// A screencast-like source, still but for a small mark that appears and moves well into the
  /// played run: the played frames are placed by the mark, not by the still frames before it
  /// (which match any still source frame equally).
  func testFrameMatchingOfAStillSceneIsPlacedByItsFewMovingPixels() throws {
    let still = VirtualCamera(width: 64, height: 48, frameRate: 30).frame(0)
    func frame(_ index: Int) -> I420Image {
      var picture = still
      if index >= 40 {
        for row in 2..<4 {
          for column in 0..<2 { picture.y[row * picture.strideY + (index - 40) * 2 + column] = 255 }
        }
      }
      return picture
    }
    let source = SourceMedia(
      frames: (0..<60).map { (Double($0) / 30, frame($0)) }, audio: [], audioStart: 0,
      frameRate: 30)
    let played = (10..<60).map { index in
      VideoFileRenderer.Kept(
        rtpTimestamp: 1_000_000 &+ UInt32(index * 3000), arrival: 1 + Double(index) / 30,
        picture: frame(index))
    }
    let report = try XCTUnwrap(VideoQualityReport.compare(played: played, source: source))
    XCTAssertEqual(report.matchedFrames, 50)
    XCTAssertEqual(report.matchedAtTimestamp, 50)
    XCTAssertEqual(report.meanPSNR, 99)
    XCTAssertEqual(report.videoOffset ?? 0, 1, accuracy: 1e-9)
  }

  func testAudioLevelMeter() {
    XCTAssertEqual(AudioLevel.rms([Int16](repeating: 0, count: 960)), 0)
    XCTAssertEqual(AudioLevel.rms([Int16](repeating: 16384, count: 960)), 0.5, accuracy: 1e-9)
    XCTAssertEqual(AudioLevel.meter(0), "[....................] -60 dBFS")
    XCTAssertEqual(AudioLevel.meter(1), "[####################] 0 dBFS")
  }
}
