import Foundation
import WCSDevices
import WCSMedia
import XCTest

/// The SDL window renderer on a Wayland compositor: sway's headless backend (wlroots), started
/// by the test with its own runtime directory; `DISPLAY` is unset while the test runs, so only
/// SDL's Wayland backend can open the window. (Weston's headless backend advertises no
/// `wl_seat`, and SDL 2.26 crashes in `SDL_Init` on such a compositor, so it is not used.)
/// sway refuses to run as root: as root the test starts it as `nobody` with `setpriv`.
final class WaylandWindowRendererTests: XCTestCase {
  private var compositor: ChildProcess?
  private var runtimeDirectory: URL?
  private var saved: [String: String?] = [:]

  override func setUpWithError() throws {
    guard let swayPath = ChildProcess.find("sway") else {
      throw XCTSkip("sway is not installed (apt-get install sway)")
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("wcs-wayland-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(
      at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    runtimeDirectory = directory
    let config = directory.appendingPathComponent("sway.conf")
    try """
    output HEADLESS-1 resolution 800x600
    xwayland disable
    default_border none
    default_floating_border none
    for_window [title=".*"] floating enable

    """.write(
      to: config, atomically: true, encoding: .utf8)
    var command = [swayPath, "-c", config.path]
    if getuid() == 0 {
      let setpriv = try XCTUnwrap(ChildProcess.find("setpriv"), "setpriv (util-linux)")
      guard let nobody = getpwnam("nobody") else { throw XCTSkip("no user nobody") }
      XCTAssertEqual(chown(directory.path, nobody.pointee.pw_uid, nobody.pointee.pw_gid), 0)
      XCTAssertEqual(chown(config.path, nobody.pointee.pw_uid, nobody.pointee.pw_gid), 0)
      command = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + command
    }
    compositor = try ChildProcess(
      command[0], Array(command.dropFirst()),
      environment: [
        "XDG_RUNTIME_DIR": directory.path, "HOME": directory.path, "WLR_BACKENDS": "headless",
        "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman",
      ])
    var socket: String?
    _ = waitUntil(timeout: 10) {
      socket = (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?
        .first { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }
      return socket != nil
    }
    guard let socket else { throw XCTSkip("sway's headless backend did not start") }
    for name in ["DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "SDL_VIDEODRIVER"] {
      saved[name] = getenv(name).map { String(cString: $0) }
    }
    unsetenv("DISPLAY")
    unsetenv("SDL_VIDEODRIVER")
    setenv("XDG_RUNTIME_DIR", directory.path, 1)
    setenv("WAYLAND_DISPLAY", socket, 1)
  }

  override func tearDown() {
    // SDL 2.26 crashes when its Wayland display goes away under it: the compositor stops only
    // once the last window closed and SDL quit.
    XCTAssertTrue(
      waitUntil(timeout: 5) { !SDLVideoThread.isRunning }, "SDL quit after the window closed")
    for (name, value) in saved {
      if let value { setenv(name, value, 1) } else { unsetenv(name) }
    }
    compositor?.terminate()
    compositor = nil
    if let runtimeDirectory { try? FileManager.default.removeItem(at: runtimeDirectory) }
  }

  func testVirtualCameraFrameIsShownThroughTheWaylandBackend() throws {
    let camera = VirtualCamera(width: 320, height: 240)
    let source = camera.frame(777)
    let window = try WindowRenderer(title: "wayland", width: 320, height: 240)
    defer { window.close() }
    XCTAssertEqual(window.videoDriver, "wayland")
    XCTAssertNil(window.x11WindowID, "no X11 window under Wayland")
    window.render(
      VideoFrame(
        width: source.width, height: source.height, dataY: Data(source.y),
        dataU: Data(source.u), dataV: Data(source.v), strideY: source.strideY,
        strideU: source.strideU, strideV: source.strideV, timestampNs: 1))
    XCTAssertTrue(waitUntil(timeout: 5) { window.framesShown == 1 }, "the frame was drawn")

    var shown: I420Image?
    _ = waitUntil(timeout: 5) {
      guard let p = window.readPixels() else { return false }
      guard p.width == 320, p.height == 240 else { return false }
      shown = p.image()
      return true
    }
    let image = try XCTUnwrap(shown, "a 320x240 read-back")
    XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: image), 777)
    let psnr = try XCTUnwrap(image.psnr(to: source))
    XCTAssertGreaterThan(psnr, 30, "the drawable is the source picture (PSNR \(psnr) dB)")
  }
}
