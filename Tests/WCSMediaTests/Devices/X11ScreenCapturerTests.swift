import Dispatch
import Foundation
import Synchronization
import WCSMedia
import XCTest

/// Screen capture from an Xvfb server the test starts on a free display number.
final class X11ScreenCapturerTests: XCTestCase {
  private var xvfb: ChildProcess?
  private var display = ""

  override func setUpWithError() throws {
    guard let xvfbPath = ChildProcess.find("Xvfb") else {
      throw XCTSkip("Xvfb is not installed (apt-get install xvfb x11-xserver-utils)")
    }
    guard ChildProcess.find("xsetroot") != nil else {
      throw XCTSkip("xsetroot is not installed (apt-get install x11-xserver-utils)")
    }
    let free = (90..<190).first { n in
      !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)")
        && !FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock")
    }
    let number = try XCTUnwrap(free, "a free X display number between :90 and :189")
    display = ":\(number)"
    xvfb = try ChildProcess(
      xvfbPath, [display, "-screen", "0", "640x480x24", "-nolisten", "tcp", "-noreset"])
    let up = waitUntil(timeout: 10) {
      (try? X11ScreenCapturer(display: display)) != nil
    }
    XCTAssertTrue(up, "Xvfb \(display) accepted a connection within 10 s")
  }

  override func tearDown() {
    xvfb?.terminate()
    xvfb = nil
  }

  private func setRoot(_ colour: String) throws {
    let path = try XCTUnwrap(ChildProcess.find("xsetroot"))
    let tool = try ChildProcess(path, ["-display", display, "-solid", colour])
    XCTAssertEqual(tool.waitForExit(timeout: 5), 0, "xsetroot -solid \(colour) succeeded")
  }

  /// Mean of a plane over its central quarter.
  private func centreMean(_ plane: [UInt8], stride: Int, width: Int, height: Int) -> Double {
    var sum = 0
    var count = 0
    for row in height / 4..<3 * height / 4 {
      for x in width / 4..<3 * width / 4 {
        sum += Int(plane[row * stride + x])
        count += 1
      }
    }
    return Double(sum) / Double(max(1, count))
  }

  private func assertColour(
    _ image: I420Image, y: Double, u: Double, v: Double, _ name: String,
    line: UInt = #line
  ) {
    XCTAssertEqual([image.width, image.height], [640, 480], line: line)
    let cw = image.chromaWidth
    let ch = image.chromaHeight
    XCTAssertEqual(
      centreMean(image.y, stride: image.strideY, width: 640, height: 480), y, accuracy: 2,
      "\(name) Y", line: line)
    XCTAssertEqual(
      centreMean(image.u, stride: image.strideU, width: cw, height: ch), u, accuracy: 2,
      "\(name) U", line: line)
    XCTAssertEqual(
      centreMean(image.v, stride: image.strideV, width: cw, height: ch), v, accuracy: 2,
      "\(name) V", line: line)
  }

  func testRedRootWindowIsRedInI420WithAndWithoutSharedMemory() throws {
    try setRoot("red")
    let capturer = try X11ScreenCapturer(display: display)
    XCTAssertEqual([capturer.width, capturer.height], [640, 480])
    XCTAssertTrue(capturer.usesSharedMemory, "Xvfb on this host offers MIT-SHM")
    // BT.601 limited range red (255, 0, 0): Y = 16 + 65.481 = 81.5, U = 128 - 37.8 = 90.2,
    // V = 128 + 112 = 240.
    assertColour(try capturer.captureFrame(), y: 81.5, u: 90.2, v: 240, "red (ShmGetImage)")
    let plain = try X11ScreenCapturer(display: display, useSharedMemory: false)
    XCTAssertFalse(plain.usesSharedMemory)
    assertColour(try plain.captureFrame(), y: 81.5, u: 90.2, v: 240, "red (GetImage)")
  }

  func testCaptureThreadFollowsTheScreen() throws {
    try setRoot("blue")
    let capturer = try X11ScreenCapturer(display: display)
    let frames = Mutex<[I420Image]>([])
    let got = DispatchSemaphore(value: 0)
    capturer.start(framesPerSecond: 20) { event in
      guard case .frame(let image, _) = event else { return }
      if frames.withLock({
        $0.append(image); return $0.count
      }) == 3 {
        got.signal()
      }
    }
    XCTAssertEqual(got.wait(timeout: .now() + 5), .success, "three frames within 5 s")
    capturer.stop()
    XCTAssertGreaterThanOrEqual(frames.withLock { $0.count }, 3)
    // Blue (0, 0, 255): Y = 16 + 24.966 = 41, U = 128 + 112 = 240, V = 128 - 18.2 = 109.8.
    if let last = frames.withLock({ $0.last }) {
      assertColour(last, y: 41, u: 240, v: 109.8, "blue")
    }
  }

  func testSixteenBitScreenIsRejected() throws {
    let path = try XCTUnwrap(ChildProcess.find("Xvfb"))
    let free = (190..<290).first { n in
      !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)")
        && !FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock")
    }
    let other = ":\(try XCTUnwrap(free))"
    let server = try ChildProcess(path, [other, "-screen", "0", "320x240x16", "-nolisten", "tcp"])
    defer { server.terminate() }
    var last: (any Error)?
    let answered = waitUntil(timeout: 10) {
      do throws(X11CaptureError) {
        _ = try X11ScreenCapturer(display: other)
        return true
      } catch {
        last = error
        if case .connectionFailed = error { return false }
        return true
      }
    }
    XCTAssertTrue(answered, "Xvfb \(other) answered within 10 s")
    XCTAssertEqual(last as? X11CaptureError, .unsupportedPixelFormat(depth: 16, bitsPerPixel: 16))
  }

  func testMissingDisplayAndDeadServerGiveTypedErrors() throws {
    let saved = getenv("DISPLAY").map { String(cString: $0) }
    unsetenv("DISPLAY")
    defer { if let saved { setenv("DISPLAY", saved, 1) } }
    XCTAssertThrowsError(try X11ScreenCapturer()) { error in
      XCTAssertEqual(error as? X11CaptureError, .noDisplay)
    }
    xvfb?.terminate()
    XCTAssertThrowsError(try X11ScreenCapturer(display: display)) { error in
      XCTAssertEqual(error as? X11CaptureError, .connectionFailed(display: display, code: 1))
    }
  }
}
