import FPWCSApi2Swift
import Foundation

/// `--window`: the played (or previewed) video in a desktop window as well as in its file, as
/// the iOS examples show it in a view. Closing the window ends the run the way `--duration`
/// does (not a failure).
public enum ExampleWindow {
  /// The usage line of `--window`.
  public static let usage = """
      --window             also show the video in a window (X11 or Wayland; F or F11: fullscreen,
                           closing it ends the run)
    """

  /// The log event marked when the person closes a window.
  public static let closedEvent = "window closed"

  /// Opens a window titled `title` when `--window` was given; nil otherwise or when it cannot
  /// open (the reason is logged, e.g. no display, and the run goes on with files only).
  public static func open(
    _ arguments: ExampleArguments, title: String, log: ExampleLog
  ) -> WindowRenderer? {
    guard arguments.flag("window") else { return nil }
    do {
      let window = try WindowRenderer(title: title) {
        log.line("window \"\(title)\" closed")
        log.mark(closedEvent)
      }
      log.line("window \"\(title)\" open")
      return window
    } catch {
      log.line("window unavailable: \(error)")
      return nil
    }
  }

  /// `display` plus `window` when there is one: every frame goes to both.
  public static func display(
    _ display: any VideoRenderer, and window: WindowRenderer?
  ) -> any VideoRenderer {
    guard let window else { return display }
    return TeeRenderer([display, window])
  }
}

/// Hands every frame to each of its renderers, in order.
public final class TeeRenderer: VideoRenderer {
  private let renderers: [any VideoRenderer]

  /// A renderer feeding `renderers`.
  public init(_ renderers: [any VideoRenderer]) { self.renderers = renderers }

  /// Renders `frame` on each renderer.
  public func render(_ frame: VideoFrame) {
    for renderer in renderers { renderer.render(frame) }
  }
}
