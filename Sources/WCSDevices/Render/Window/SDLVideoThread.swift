import CSDL2
import Foundation
import Synchronization
import WCSCodecs
import WCSMediaSeam

/// What the window thread is asked to do.
enum SDLCommand: Sendable {
  case open(WindowSpec, WindowMailbox, SDLReply<WindowRendererError?>)
  case draw(WindowMailbox)
  case readPixels(WindowMailbox, SDLReply<WindowPixels?>)
  case resize(WindowMailbox, Int, Int)
  case fullscreen(WindowMailbox, Bool)
  case close(WindowMailbox, SDLReply<Bool>?)
}

/// The one thread that owns SDL's video subsystem: SDL wants its windows, renderers and event
/// pump on the thread that initialised video. It starts with the first window and quits SDL
/// (closing the display connection, so a display server that goes away later cannot end the
/// process) when the last one closes and no command waits.
package enum SDLVideoThread {
  private struct Registry {
    var running = false
    var commands: [SDLCommand] = []
  }

  private static let registry = Mutex(Registry())

  /// Whether the thread (and so SDL's video subsystem and its display connection) is up.
  package static var isRunning: Bool { registry.withLock { $0.running } }
  /// The user event type that only wakes the thread (SDL_RegisterEvents is not needed: nothing
  /// else in the process posts user events).
  static let wakeEvent = UInt32(SDL_USEREVENT.rawValue)

  /// Queues `command`, starting the thread when none runs, else waking it.
  static func send(_ command: SDLCommand) {
    let start = registry.withLock { r -> Bool in
      r.commands.append(command)
      guard !r.running else { return false }
      r.running = true
      return true
    }
    if start {
      let thread = Thread { SDLVideoLoop().run() }
      thread.name = "wcs-sdl-video"
      thread.start()
    } else {
      var event = SDL_Event()
      event.type = wakeEvent
      // Fails only before SDL_Init: the thread drains the queue right after it anyway.
      _ = SDL_PushEvent(&event)
    }
  }

  static func takeCommands() -> [SDLCommand] {
    registry.withLock { r in
      defer { r.commands.removeAll(keepingCapacity: true) }
      return r.commands
    }
  }

  /// Ends the thread when nothing is queued: quits SDL under the lock so a new thread starting
  /// for a later window finds SDL fully down. Returns whether the thread must end.
  static func finishIfIdle() -> Bool {
    registry.withLock { r in
      guard r.commands.isEmpty else { return false }
      SDL_Quit()
      r.running = false
      return true
    }
  }

  /// SDL did not start: fail every queued open and end the thread.
  static func failAll(_ error: WindowRendererError) {
    let commands = registry.withLock { r in
      defer {
        r.commands.removeAll()
        r.running = false
      }
      return r.commands
    }
    for command in commands {
      switch command {
      case .open(_, let mailbox, let reply):
        _ = mailbox.markClosed()
        reply.send(error)
      case .readPixels(_, let reply): reply.send(nil)
      case .close(_, let reply): reply?.send(true)
      case .draw, .resize, .fullscreen: break
      }
    }
  }
}

/// One open window: SDL objects, used only on the window thread.
private final class SDLWindow {
  let mailbox: WindowMailbox
  let window: OpaquePointer
  let renderer: OpaquePointer
  let windowID: UInt32
  var texture: OpaquePointer?
  var textureSize = (0, 0)

  init(mailbox: WindowMailbox, window: OpaquePointer, renderer: OpaquePointer) {
    self.mailbox = mailbox
    self.window = window
    self.renderer = renderer
    windowID = SDL_GetWindowID(window)
  }

  func destroy() {
    if let texture { SDL_DestroyTexture(texture) }
    SDL_DestroyRenderer(renderer)
    SDL_DestroyWindow(window)
  }

  /// Uploads a new picture (when one waits), draws the current one letterboxed, optionally
  /// reads the drawable back, and presents.
  func draw(readBack: Bool) -> WindowPixels? {
    if let frame = mailbox.takePending() { upload(frame) }
    // The full drawable: SDL updates the viewport only when it handles the size event, and a
    // fullscreen switch can be drawn before that.
    SDL_RenderSetViewport(renderer, nil)
    SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
    SDL_RenderClear(renderer)
    var outputWidth: Int32 = 0
    var outputHeight: Int32 = 0
    SDL_GetRendererOutputSize(renderer, &outputWidth, &outputHeight)
    if let texture {
      let fit = WindowRect.fitting(
        width: textureSize.0, height: textureSize.1, intoWidth: Int(outputWidth),
        height: Int(outputHeight))
      var target = SDL_Rect(
        x: Int32(fit.x), y: Int32(fit.y), w: Int32(fit.width), h: Int32(fit.height))
      SDL_RenderCopy(renderer, texture, nil, &target)
    }
    var pixels: WindowPixels?
    if readBack, outputWidth > 0, outputHeight > 0 {
      let width = Int(outputWidth)
      let height = Int(outputHeight)
      var bgra = [UInt8](repeating: 0, count: width * height * 4)
      let status = bgra.withUnsafeMutableBytes { raw in
        SDL_RenderReadPixels(
          renderer, nil, UInt32(SDL_PIXELFORMAT_ARGB8888.rawValue), raw.baseAddress,
          Int32(width * 4))
      }
      if status == 0 { pixels = WindowPixels(width: width, height: height, bgra: bgra) }
    }
    SDL_RenderPresent(renderer)
    return pixels
  }

  private func upload(_ frame: VideoFrame) {
    if texture == nil || textureSize != (frame.width, frame.height) {
      if let texture { SDL_DestroyTexture(texture) }
      texture = SDL_CreateTexture(
        renderer, UInt32(SDL_PIXELFORMAT_IYUV.rawValue),
        Int32(SDL_TEXTUREACCESS_STREAMING.rawValue), Int32(frame.width), Int32(frame.height))
      textureSize = (frame.width, frame.height)
    }
    guard let texture else { return }
    frame.dataY.withUnsafeBytes { y in
      frame.dataU.withUnsafeBytes { u in
        frame.dataV.withUnsafeBytes { v in
          _ = SDL_UpdateYUVTexture(
            texture, nil, y.bindMemory(to: UInt8.self).baseAddress, Int32(frame.strideY),
            u.bindMemory(to: UInt8.self).baseAddress, Int32(frame.strideU),
            v.bindMemory(to: UInt8.self).baseAddress, Int32(frame.strideV))
        }
      }
    }
    mailbox.state.withLock { s in
      s.framesShown += 1
      s.pictureSize = (frame.width, frame.height)
    }
  }
}

/// The window thread's loop: commands and SDL events until the last window closes.
private final class SDLVideoLoop {
  private var windows: [ObjectIdentifier: SDLWindow] = [:]
  private var closeReplies: [SDLReply<Bool>] = []

  func run() {
    // SDL must not turn SIGINT/SIGTERM into SDL_QUIT: the app's own handlers stay in charge.
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
    SDL_SetHint(SDL_HINT_QUIT_ON_LAST_WINDOW_CLOSE, "0")
    SDL_SetHint(SDL_HINT_VIDEO_ALLOW_SCREENSAVER, "1")
    // Only the desktop backends unless the user chose one: SDL would otherwise fall back to
    // KMS/DRM or offscreen drivers when the display is unreachable, and "open" a window no one
    // sees.
    let environment = ProcessInfo.processInfo.environment
    if (environment["SDL_VIDEODRIVER"] ?? "").isEmpty {
      let wayland = !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
      let x11 = !(environment["DISPLAY"] ?? "").isEmpty
      SDL_SetHint(SDL_HINT_VIDEODRIVER, wayland ? (x11 ? "wayland,x11" : "wayland") : "x11")
    }
    guard SDL_Init(UInt32(SDL_INIT_VIDEO)) == 0 else {
      let message = String(cString: SDL_GetError())
      SDL_Quit()
      SDLVideoThread.failAll(.videoUnavailable(message))
      return
    }
    // VideoFrame is BT.601 limited range whatever its size (SDL's automatic mode picks BT.709
    // for HD pictures).
    SDL_SetYUVConversionMode(SDL_YUV_CONVERSION_BT601)
    while true {
      for command in SDLVideoThread.takeCommands() { perform(command) }
      if windows.isEmpty, SDLVideoThread.finishIfIdle() {
        answerCloses()
        return
      }
      answerCloses()
      var event = SDL_Event()
      if SDL_WaitEventTimeout(&event, 100) == 1 {
        handle(event)
        while SDL_PollEvent(&event) == 1 { handle(event) }
      }
    }
  }

  private func answerCloses() {
    for reply in closeReplies { reply.send(true) }
    closeReplies.removeAll()
  }

  private func perform(_ command: SDLCommand) {
    switch command {
    case .open(let spec, let mailbox, let reply):
      reply.send(open(spec, mailbox))
    case .draw(let mailbox):
      _ = windows[ObjectIdentifier(mailbox)]?.draw(readBack: false)
    case .readPixels(let mailbox, let reply):
      reply.send(windows[ObjectIdentifier(mailbox)]?.draw(readBack: true))
    case .resize(let mailbox, let width, let height):
      if let w = windows[ObjectIdentifier(mailbox)] {
        SDL_SetWindowSize(w.window, Int32(width), Int32(height))
        _ = w.draw(readBack: false)
      }
    case .fullscreen(let mailbox, let on):
      if let w = windows[ObjectIdentifier(mailbox)] { setFullscreen(w, on) }
    case .close(let mailbox, let reply):
      if let w = windows.removeValue(forKey: ObjectIdentifier(mailbox)) { w.destroy() }
      if let reply { closeReplies.append(reply) }
    }
  }

  private func open(_ spec: WindowSpec, _ mailbox: WindowMailbox) -> WindowRendererError? {
    var flags = SDL_WINDOW_RESIZABLE.rawValue | SDL_WINDOW_ALLOW_HIGHDPI.rawValue
    if spec.fullscreen { flags |= SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue }
    let position = wcs_sdl_windowpos_centered()
    guard
      let window = SDL_CreateWindow(
        spec.title, position, position, Int32(spec.width), Int32(spec.height), flags)
    else { return .windowFailed(String(cString: SDL_GetError())) }
    // Accelerated first; the software renderer where no GL is available (a bare Xvfb).
    guard
      let renderer = SDL_CreateRenderer(window, -1, 0)
        ?? SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue)
    else {
      let message = String(cString: SDL_GetError())
      SDL_DestroyWindow(window)
      return .windowFailed(message)
    }
    let w = SDLWindow(mailbox: mailbox, window: window, renderer: renderer)
    windows[ObjectIdentifier(mailbox)] = w
    let x11 = Self.x11WindowID(window)
    let driver = SDL_GetCurrentVideoDriver().map { String(cString: $0) }
    mailbox.state.withLock { s in
      s.x11WindowID = x11
      s.videoDriver = driver
      s.fullscreen = spec.fullscreen
    }
    _ = w.draw(readBack: false)
    return nil
  }

  private static func x11WindowID(_ window: OpaquePointer) -> UInt? {
    var info = SDL_SysWMinfo()
    info.version = SDL_version(
      major: UInt8(SDL_MAJOR_VERSION), minor: UInt8(SDL_MINOR_VERSION),
      patch: UInt8(SDL_PATCHLEVEL))
    guard SDL_GetWindowWMInfo(window, &info) == SDL_TRUE, info.subsystem == SDL_SYSWM_X11
    else { return nil }
    return UInt(info.info.x11.window)
  }

  private func setFullscreen(_ w: SDLWindow, _ on: Bool) {
    SDL_SetWindowFullscreen(w.window, on ? SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue : 0)
    let now = SDL_GetWindowFlags(w.window) & SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue != 0
    w.mailbox.state.withLock { $0.fullscreen = now }
    _ = w.draw(readBack: false)
  }

  private func window(id: UInt32) -> SDLWindow? {
    windows.values.first { $0.windowID == id }
  }

  private func handle(_ event: SDL_Event) {
    switch event.type {
    case UInt32(SDL_WINDOWEVENT.rawValue):
      guard let w = window(id: event.window.windowID) else { return }
      switch UInt32(event.window.event) {
      case UInt32(SDL_WINDOWEVENT_CLOSE.rawValue):
        windows.removeValue(forKey: ObjectIdentifier(w.mailbox))
        w.destroy()
        if !w.mailbox.markClosed() { w.mailbox.onClose?() }
      case UInt32(SDL_WINDOWEVENT_SIZE_CHANGED.rawValue), UInt32(SDL_WINDOWEVENT_EXPOSED.rawValue):
        _ = w.draw(readBack: false)
      default: break
      }
    case UInt32(SDL_KEYDOWN.rawValue):
      guard let w = window(id: event.key.windowID) else { return }
      let key = event.key.keysym.sym
      let isFullscreen = SDL_GetWindowFlags(w.window) & SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue != 0
      if key == Int32(SDLK_f.rawValue) || key == Int32(SDLK_F11.rawValue) {
        setFullscreen(w, !isFullscreen)
      } else if key == Int32(SDLK_ESCAPE.rawValue), isFullscreen {
        setFullscreen(w, false)
      }
    default: break
    }
  }
}
