import Foundation
import Synchronization
import WCSCodecs
import WCSMediaSeam

/// Why a window could not be opened or used.
public enum WindowRendererError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Neither `DISPLAY` (X11) nor `WAYLAND_DISPLAY` is set and no `SDL_VIDEODRIVER` was chosen:
  /// a headless machine. Write the video to a file (`Y4MFileRenderer`) instead.
  case noDisplay
  /// SDL's video subsystem did not start (`SDL_Init(SDL_INIT_VIDEO)`): SDL's message, e.g.
  /// the X server refused the connection.
  case videoUnavailable(String)
  /// SDL could not create the window or its renderer: SDL's message.
  case windowFailed(String)
  /// The window thread did not answer within the time asked for.
  case timedOut

  /// The reason as one line of text, for logs and error messages.
  public var description: String {
    switch self {
    case .noDisplay:
      return "no display: neither DISPLAY nor WAYLAND_DISPLAY is set (headless machine)"
    case .videoUnavailable(let message): return "SDL video did not start: \(message)"
    case .windowFailed(let message): return "SDL could not open the window: \(message)"
    case .timedOut: return "the window thread did not answer in time"
    }
  }
}

/// The window's drawable as read back by `WindowRenderer.readPixels()`: 32-bit pixels, rows top
/// to bottom, B, G, R, A in memory (libyuv's "ARGB", SDL's `ARGB8888` on little-endian),
/// `width * 4` bytes a row.
public struct WindowPixels: Sendable, Equatable {
  /// Drawable width in pixels.
  public let width: Int
  /// Drawable height in pixels.
  public let height: Int
  /// `width * height * 4` bytes: B, G, R, A of each pixel.
  public let bgra: [UInt8]

  /// Creates a read-back from its bytes (`bgra.count == width * height * 4`).
  public init(width: Int, height: Int, bgra: [UInt8]) {
    self.width = width
    self.height = height
    self.bgra = bgra
  }

  /// R, G, B at column `x`, row `y` (both inside the drawable).
  public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
    let i = (y * width + x) * 4
    return (bgra[i + 2], bgra[i + 1], bgra[i])
  }

  /// The drawable as an I420 picture (BT.601 limited range), nil when the sizes are
  /// inconsistent.
  public func image() -> I420Image? { I420Image.fromARGB(bgra, width: width, height: height) }
}

/// A rectangle in window pixels: where the picture goes inside the drawable.
public struct WindowRect: Sendable, Equatable {
  /// Left edge, pixels from the drawable's left.
  public var x: Int
  /// Top edge, pixels from the drawable's top.
  public var y: Int
  /// Width in pixels.
  public var width: Int
  /// Height in pixels.
  public var height: Int

  /// Creates a rectangle.
  public init(x: Int, y: Int, width: Int, height: Int) {
    self.x = x
    self.y = y
    self.width = width
    self.height = height
  }

  /// The largest rectangle of the picture's aspect ratio that fits `output`, centred (black
  /// bars on the two other sides): how the window shows a picture of `width` × `height` in a
  /// drawable of `outputWidth` × `outputHeight`. Empty when either size is not positive.
  public static func fitting(
    width: Int, height: Int, intoWidth outputWidth: Int, height outputHeight: Int
  ) -> WindowRect {
    guard width > 0, height > 0, outputWidth > 0, outputHeight > 0 else {
      return WindowRect(x: 0, y: 0, width: 0, height: 0)
    }
    var w = outputWidth
    var h = (outputWidth * height + width / 2) / width
    if h > outputHeight {
      h = outputHeight
      w = (outputHeight * width + height / 2) / height
    }
    return WindowRect(x: (outputWidth - w) / 2, y: (outputHeight - h) / 2, width: w, height: h)
  }
}

/// A desktop window showing video: usable as a stream's `display` (`FPWCSApi2StreamOptions`)
/// and as the local preview of `getMediaAccess`. SDL2 draws it, under X11 or Wayland (SDL
/// picks the backend; `SDL_VIDEODRIVER` chooses one).
///
/// The picture scales with the window and keeps its aspect ratio (black bars); F or F11
/// toggles fullscreen and Escape leaves it. Several windows may be open in one process: one SDL
/// thread serves them all and shuts SDL's video down when the last closes. `render(_:)` only
/// keeps the newest frame and wakes that thread, so a slow display drops pictures rather than
/// delaying the stream. When the person closes the window, `onClose` is called (on the window
/// thread) and later frames are ignored.
public final class WindowRenderer: VideoRenderer {
  let mailbox: WindowMailbox

  /// Opens a window.
  /// - Parameters:
  ///   - title: the window's title.
  ///   - width: initial width in pixels (clamped to 16...8192).
  ///   - height: initial height in pixels (clamped to 16...8192).
  ///   - fullscreen: start fullscreen (the desktop's resolution).
  ///   - onClose: called once when the person closes the window (not after `close()`).
  /// - Throws: `WindowRendererError.noDisplay` on a headless machine, `.videoUnavailable` when
  ///   SDL cannot reach the display, `.windowFailed` when the window cannot be created.
  public init(
    title: String = "WCSApi2", width: Int = 640, height: Int = 480, fullscreen: Bool = false,
    onClose: (@Sendable () -> Void)? = nil
  ) throws(WindowRendererError) {
    let environment = ProcessInfo.processInfo.environment
    let hasDisplay = [
      environment["DISPLAY"], environment["WAYLAND_DISPLAY"], environment["SDL_VIDEODRIVER"],
    ]
    .contains { !($0 ?? "").isEmpty }
    guard hasDisplay else { throw .noDisplay }
    mailbox = WindowMailbox(onClose: onClose)
    let spec = WindowSpec(
      title: title, width: min(8192, max(16, width)), height: min(8192, max(16, height)),
      fullscreen: fullscreen)
    let reply = SDLReply<WindowRendererError?>()
    SDLVideoThread.send(.open(spec, mailbox, reply))
    guard let answer = reply.wait(timeout: 10) else { throw .timedOut }
    if let error = answer { throw error }
  }

  deinit {
    _ = mailbox.markClosed()
    SDLVideoThread.send(.close(mailbox, nil))
  }

  /// Keeps `frame` as the picture to show next and wakes the window thread; ignored once the
  /// window is closed or when the frame's planes are inconsistent (`VideoFrame.isValid`).
  public func render(_ frame: VideoFrame) {
    guard frame.isValid, mailbox.offer(frame) else { return }
    SDLVideoThread.send(.draw(mailbox))
  }

  /// `true` once the window was closed, by the person or by `close()`.
  public var isClosed: Bool { mailbox.state.withLock { $0.closed } }

  /// Pictures drawn so far (a picture replaced before the thread drew it is not counted).
  public var framesShown: Int { mailbox.state.withLock { $0.framesShown } }

  /// Size of the last picture drawn, nil before the first.
  public var pictureSize: (width: Int, height: Int)? {
    mailbox.state.withLock { $0.pictureSize.map { (width: $0.0, height: $0.1) } }
  }

  /// Closes the window and waits (at most `timeout` seconds) until it is gone, and SDL's
  /// video with it when it was the last one. `onClose` is not called.
  public func close(timeout: TimeInterval = 5) {
    _ = mailbox.markClosed()
    let reply = SDLReply<Bool>()
    SDLVideoThread.send(.close(mailbox, reply))
    _ = reply.wait(timeout: timeout)
  }

  /// Resizes the window's drawable to `width` × `height` pixels (clamped to 16...8192); the
  /// picture is scaled again when the window system confirms the size.
  public func resize(width: Int, height: Int) {
    SDLVideoThread.send(.resize(mailbox, min(8192, max(16, width)), min(8192, max(16, height))))
  }

  /// Enters or leaves fullscreen (the desktop's resolution).
  public func setFullscreen(_ fullscreen: Bool) {
    SDLVideoThread.send(.fullscreen(mailbox, fullscreen))
  }

  /// Whether the window is fullscreen (after `setFullscreen(_:)` or F/F11 took effect).
  public var isFullscreen: Bool { mailbox.state.withLock { $0.fullscreen } }

  /// Draws the newest picture again and reads the drawable back, as shown.
  /// - Returns: nil when the window is closed or the thread did not answer within `timeout`
  ///   seconds.
  public func readPixels(timeout: TimeInterval = 5) -> WindowPixels? {
    guard !isClosed else { return nil }
    let reply = SDLReply<WindowPixels?>()
    SDLVideoThread.send(.readPixels(mailbox, reply))
    return reply.wait(timeout: timeout) ?? nil
  }

  /// The X11 window id (for tools such as `xwininfo`), nil under another backend or once
  /// closed.
  public var x11WindowID: UInt? { mailbox.state.withLock { $0.x11WindowID } }
  /// The SDL video backend the window opened on: `"x11"` or `"wayland"`
  /// (`SDL_GetCurrentVideoDriver`).
  public var videoDriver: String? { mailbox.state.withLock { $0.videoDriver } }
}

/// What a window thread needs to open a window.
struct WindowSpec: Sendable {
  var title: String
  var width: Int
  var height: Int
  var fullscreen: Bool
}

/// The state a renderer shares with the window thread: the picture waiting to be drawn and
/// what the thread reports back.
final class WindowMailbox: Sendable {
  struct State {
    var pending: VideoFrame?
    var closed = false
    var framesShown = 0
    var pictureSize: (Int, Int)?
    var x11WindowID: UInt?
    var videoDriver: String?
    var fullscreen = false
  }

  let state = Mutex(State())
  let onClose: (@Sendable () -> Void)?

  init(onClose: (@Sendable () -> Void)?) { self.onClose = onClose }

  /// Stores `frame` as the next picture; `true` when the thread must be woken (nothing was
  /// waiting), `false` when one was (replaced) or the window is closed.
  func offer(_ frame: VideoFrame) -> Bool {
    state.withLock { s in
      guard !s.closed else { return false }
      let wasEmpty = s.pending == nil
      s.pending = frame
      return wasEmpty
    }
  }

  func takePending() -> VideoFrame? {
    state.withLock { s in
      defer { s.pending = nil }
      return s.pending
    }
  }

  /// Marks the window closed; returns whether it already was.
  func markClosed() -> Bool {
    state.withLock { s in
      defer {
        s.closed = true
        s.pending = nil
      }
      return s.closed
    }
  }
}

/// A one-shot answer from the window thread.
final class SDLReply<Value: Sendable>: Sendable {
  private let value = Mutex<Value?>(nil)
  private let done = DispatchSemaphore(value: 0)

  func send(_ answer: Value) {
    value.withLock { $0 = answer }
    done.signal()
  }

  func wait(timeout: TimeInterval) -> Value? {
    guard done.wait(timeout: .now() + timeout) == .success else { return nil }
    return value.withLock { $0 }
  }
}
