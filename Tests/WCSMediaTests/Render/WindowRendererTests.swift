import CMediaDevices
import Foundation
import Synchronization
import WCSMedia
import XCTest

/// The SDL window renderer on an Xvfb server the test starts (DISPLAY points at it while the
/// test runs); read back both through SDL and as a screenshot of the X screen.
final class WindowRendererTests: XCTestCase {
  private var xvfb: ChildProcess?
  private var display = ""
  private var savedDisplay: String?

  override func setUpWithError() throws {
    guard let xvfbPath = ChildProcess.find("Xvfb") else {
      throw XCTSkip("Xvfb is not installed (apt-get install xvfb)")
    }
    let free = (300..<400).first { n in
      !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)")
        && !FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock")
    }
    display = ":\(try XCTUnwrap(free, "a free X display number between :300 and :399"))"
    xvfb = try ChildProcess(
      xvfbPath, [display, "-screen", "0", "800x600x24", "-nolisten", "tcp", "-noreset"])
    let up = waitUntil(timeout: 10) { (try? X11ScreenCapturer(display: display)) != nil }
    XCTAssertTrue(up, "Xvfb \(display) accepted a connection within 10 s")
    savedDisplay = getenv("DISPLAY").map { String(cString: $0) }
    setenv("DISPLAY", display, 1)
  }

  override func tearDown() {
    if let savedDisplay { setenv("DISPLAY", savedDisplay, 1) } else { unsetenv("DISPLAY") }
    xvfb?.terminate()
    xvfb = nil
  }

  private func frame(_ image: I420Image) -> VideoFrame {
    VideoFrame(
      width: image.width, height: image.height, dataY: Data(image.y), dataU: Data(image.u),
      dataV: Data(image.v), strideY: image.strideY, strideU: image.strideU,
      strideV: image.strideV, timestampNs: 1)
  }

  /// Read-backs until one is `width` × `height` and `settled` holds (SDL applies a resize when
  /// the X server confirms it).
  private func pixels(
    of window: WindowRenderer, width: Int, height: Int, timeout: Double = 5,
    settled: (WindowPixels) -> Bool = { _ in true }
  ) -> WindowPixels? {
    var last: WindowPixels?
    _ = waitUntil(timeout: timeout) {
      last = window.readPixels()
      return last.map { $0.width == width && $0.height == height && settled($0) } ?? false
    }
    return last
  }

  /// Mean luma (BT.601) of the read-back's rows `rows`, columns `columns`.
  private func meanLuma(_ p: WindowPixels, rows: Range<Int>, columns: Range<Int>) -> Double {
    var sum = 0.0
    for y in rows {
      for x in columns {
        let (r, g, b) = p.pixel(x: x, y: y)
        sum += 16 + (65.481 * Double(r) + 128.553 * Double(g) + 24.966 * Double(b)) / 255
      }
    }
    return sum / Double(max(1, rows.count * columns.count))
  }

  func testVirtualCameraFrameIsShownAtItsPlaceAndSize() throws {
    let camera = VirtualCamera(width: 640, height: 480)
    let source = camera.frame(4242)
    let window = try WindowRenderer(title: "camera", width: 640, height: 480)
    defer { window.close() }
    window.render(frame(source))
    XCTAssertTrue(waitUntil(timeout: 5) { window.framesShown == 1 }, "the frame was drawn")
    XCTAssertEqual(window.pictureSize?.width, 640)
    XCTAssertEqual(window.pictureSize?.height, 480)

    let shown = try XCTUnwrap(pixels(of: window, width: 640, height: 480)?.image())
    XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: shown), 4242)
    let psnr = try XCTUnwrap(shown.psnr(to: source))
    XCTAssertGreaterThan(psnr, 30, "the drawable is the source picture, 1:1 (PSNR \(psnr) dB)")

    // The X server's own picture of the screen: the same frame where the window is.
    let id = try XCTUnwrap(window.x11WindowID)
    let origin = try windowOrigin(id)
    let screen = try X11ScreenCapturer(display: display).captureFrame()
    var crop = I420Image(width: 640, height: 480)
    for row in 0..<480 {
      for x in 0..<640 {
        crop.y[row * crop.strideY + x] = screen.y[(origin.y + row) * screen.strideY + origin.x + x]
      }
    }
    XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: crop), 4242, "screenshot at \(origin)")
  }

  func testResizingKeepsTheAspectRatio() throws {
    let window = try WindowRenderer(title: "aspect", width: 320, height: 180)
    defer { window.close() }
    // 16:9 mid-grey picture (Y = 180) in a square window: bars above and below.
    window.render(frame(I420Image(width: 320, height: 180, y: 180)))
    XCTAssertTrue(waitUntil(timeout: 5) { window.framesShown == 1 })
    let wide = try XCTUnwrap(pixels(of: window, width: 320, height: 180))
    XCTAssertEqual(meanLuma(wide, rows: 0..<180, columns: 0..<320), 180, accuracy: 3)

    window.resize(width: 400, height: 400)
    let square = try XCTUnwrap(
      pixels(of: window, width: 400, height: 400) {
        self.meanLuma($0, rows: 199..<201, columns: 398..<400) > 150
      })
    let fit = WindowRect.fitting(width: 320, height: 180, intoWidth: 400, height: 400)
    XCTAssertEqual(fit, WindowRect(x: 0, y: 87, width: 400, height: 225))
    XCTAssertEqual(meanLuma(square, rows: 0..<86, columns: 0..<400), 16, accuracy: 1, "top bar")
    XCTAssertEqual(
      meanLuma(square, rows: 90..<311, columns: 0..<400), 180, accuracy: 3, "the picture")
    XCTAssertEqual(
      meanLuma(square, rows: 315..<400, columns: 0..<400), 16, accuracy: 1, "bottom bar")

    // Taller than wide: bars left and right.
    window.resize(width: 200, height: 400)
    let tall = try XCTUnwrap(
      pixels(of: window, width: 200, height: 400) {
        self.meanLuma($0, rows: 199..<201, columns: 0..<200) > 150
      })
    XCTAssertEqual(meanLuma(tall, rows: 0..<140, columns: 0..<200), 16, accuracy: 1)
    XCTAssertEqual(meanLuma(tall, rows: 146..<254, columns: 0..<200), 180, accuracy: 3)
  }

  /// Without a window manager (bare Xvfb) X11 cannot resize the window to the screen, so this
  /// checks SDL's side: the window is marked fullscreen with the desktop's size, and back.
  func testFullscreenTakesTheDesktopSizeAndBack() throws {
    let window = try WindowRenderer(title: "full", width: 320, height: 240)
    defer { window.close() }
    window.render(frame(I420Image(width: 320, height: 240, y: 200)))
    XCTAssertFalse(window.isFullscreen)
    window.setFullscreen(true)
    XCTAssertNotNil(pixels(of: window, width: 800, height: 600), "the desktop's 800x600")
    XCTAssertTrue(window.isFullscreen)
    window.setFullscreen(false)
    XCTAssertNotNil(pixels(of: window, width: 320, height: 240), "back to the window's size")
    XCTAssertFalse(window.isFullscreen)
  }

  func testClosingTheWindowTellsTheAppAndStopsRendering() throws {
    let closed = Mutex(0)
    let window = try WindowRenderer(title: "close me") { closed.withLock { $0 += 1 } }
    window.render(frame(I420Image(width: 64, height: 64, y: 100)))
    XCTAssertTrue(waitUntil(timeout: 5) { window.framesShown == 1 })
    XCTAssertNotNil(pixels(of: window, width: 640, height: 480), "the window is up")
    try sendDeleteWindow(try XCTUnwrap(window.x11WindowID))
    XCTAssertTrue(waitUntil(timeout: 5) { closed.withLock { $0 } == 1 }, "onClose was called")
    XCTAssertTrue(window.isClosed)
    window.render(frame(I420Image(width: 64, height: 64, y: 120)))
    usleep(200_000)
    XCTAssertEqual(window.framesShown, 1, "no frame is drawn after the close")
    XCTAssertTrue(window.readPixels() == nil, "no read-back of a closed window")
    window.close()
    XCTAssertEqual(closed.withLock { $0 }, 1, "close() after the person's close reports nothing")
  }

  func testTwoWindowsShowTheirOwnPictures() throws {
    let dark = try WindowRenderer(title: "dark", width: 160, height: 120)
    let light = try WindowRenderer(title: "light", width: 160, height: 120)
    dark.render(frame(I420Image(width: 160, height: 120, y: 60)))
    light.render(frame(I420Image(width: 160, height: 120, y: 220)))
    let a = try XCTUnwrap(pixels(of: dark, width: 160, height: 120))
    let b = try XCTUnwrap(pixels(of: light, width: 160, height: 120))
    XCTAssertEqual(meanLuma(a, rows: 0..<120, columns: 0..<160), 60, accuracy: 3)
    XCTAssertEqual(meanLuma(b, rows: 0..<120, columns: 0..<160), 220, accuracy: 3)
    dark.close()
    light.render(frame(I420Image(width: 160, height: 120, y: 120)))
    XCTAssertTrue(waitUntil(timeout: 5) { light.framesShown == 2 }, "one window survives another")
    light.close()
    // SDL reopens after the last window closed (and quit video).
    let again = try WindowRenderer(title: "again", width: 64, height: 64)
    again.close()
  }

  func testNoDisplayIsAClearErrorAndADeadOneToo() throws {
    let names = ["WAYLAND_DISPLAY", "SDL_VIDEODRIVER"]
    let saved = names.map { name in (name, ProcessInfo.processInfo.environment[name]) }
    defer { for (name, value) in saved { if let value { setenv(name, value, 1) } } }
    for (name, _) in saved { unsetenv(name) }
    unsetenv("DISPLAY")
    XCTAssertThrowsError(try WindowRenderer()) { error in
      XCTAssertEqual(error as? WindowRendererError, .noDisplay)
      XCTAssertTrue("\(error)".contains("DISPLAY"), "\(error)")
    }
    setenv("DISPLAY", ":1999", 1)
    XCTAssertThrowsError(try WindowRenderer()) { error in
      guard case .videoUnavailable(let message) = error as? WindowRendererError else {
        return XCTFail("\(error)")
      }
      XCTAssertFalse(message.isEmpty)
    }
  }

  func testFittingKeepsTheAspectRatioAndCentres() {
    XCTAssertEqual(
      WindowRect.fitting(width: 640, height: 480, intoWidth: 640, height: 480),
      WindowRect(x: 0, y: 0, width: 640, height: 480))
    XCTAssertEqual(
      WindowRect.fitting(width: 640, height: 480, intoWidth: 1920, height: 1080),
      WindowRect(x: 240, y: 0, width: 1440, height: 1080))
    XCTAssertEqual(
      WindowRect.fitting(width: 1280, height: 720, intoWidth: 640, height: 640),
      WindowRect(x: 0, y: 140, width: 640, height: 360))
    XCTAssertEqual(
      WindowRect.fitting(width: 0, height: 720, intoWidth: 640, height: 640),
      WindowRect(x: 0, y: 0, width: 0, height: 0))
  }

  // MARK: - X helpers

  /// The window's top-left corner on the screen (`xwininfo -id`).
  private func windowOrigin(_ id: UInt) throws -> (x: Int, y: Int) {
    let path = try XCTUnwrap(ChildProcess.find("xwininfo"), "xwininfo (x11-utils)")
    let out = FileManager.default.temporaryDirectory.appendingPathComponent("xwininfo-\(id).txt")
    let tool = try ChildProcess(
      path, ["-display", display, "-id", String(id)], outputPath: out.path)
    XCTAssertEqual(tool.waitForExit(timeout: 5), 0)
    let text = try String(contentsOf: out, encoding: .utf8)
    func value(_ label: String) throws -> Int {
      let line = try XCTUnwrap(text.split(separator: "\n").first { $0.contains(label) })
      return try XCTUnwrap(
        Int(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)))
    }
    return (try value("Absolute upper-left X"), try value("Absolute upper-left Y"))
  }

  /// What a window manager sends when the person clicks the close button: a WM_PROTOCOLS
  /// client message carrying WM_DELETE_WINDOW (ICCCM §4.2.8.1).
  private func sendDeleteWindow(_ id: UInt) throws {
    let connection = try XCTUnwrap(xcb_connect(display, nil))
    defer { xcb_disconnect(connection) }
    func atom(_ name: String) throws -> xcb_atom_t {
      let cookie = xcb_intern_atom(connection, 0, UInt16(name.utf8.count), name)
      let reply = try XCTUnwrap(xcb_intern_atom_reply(connection, cookie, nil))
      defer { free(reply) }
      return reply.pointee.atom
    }
    var event = xcb_client_message_event_t()
    event.response_type = UInt8(XCB_CLIENT_MESSAGE)
    event.format = 32
    event.window = xcb_window_t(id)
    event.type = try atom("WM_PROTOCOLS")
    event.data.data32.0 = try atom("WM_DELETE_WINDOW")
    event.data.data32.1 = 0
    withUnsafeBytes(of: &event) { raw in
      _ = xcb_send_event(
        connection, 0, xcb_window_t(id), UInt32(XCB_EVENT_MASK_NO_EVENT.rawValue),
        raw.baseAddress!.assumingMemoryBound(to: CChar.self))
    }
    // A round trip: the server has handled the send before the connection closes.
    free(xcb_get_input_focus_reply(connection, xcb_get_input_focus(connection), nil))
  }
}
