import Dispatch
import Foundation
import Synchronization
import WCSCodecs

/// Captures the root window of an X11 screen as I420 pictures: xcb `ShmGetImage` into a MIT-SHM
/// segment (plain `GetImage` when the server has no MIT-SHM or is remote), ZPixmap 32-bit pixels
/// (B, G, R, X in memory on little-endian servers) converted with libyuv `ARGBToI420`
/// (BT.601 limited range).
///
/// Pull one picture with `captureFrame()`, or `start` a thread that captures at a frame rate.
public final class X11ScreenCapturer: Sendable {
  /// What the capture thread reports; nothing follows `.failed`.
  public enum Event: Sendable {
    /// A picture of the whole screen; timestamp in microseconds on the monotonic clock.
    case frame(I420Image, timestampMicroseconds: Int64)
    /// Capture failed (server gone); the thread has ended.
    case failed(X11CaptureError)
  }

  /// Screen width in pixels.
  public let width: Int
  /// Screen height in pixels.
  public let height: Int
  /// Whether images come through MIT-SHM (false: plain GetImage).
  public let usesSharedMemory: Bool

  /// The connection is used by one thread at a time through this lock.
  private let connection: Mutex<X11Connection>
  private let captureThread = CaptureThread()

  /// Connects to an X server.
  /// - Parameters:
  ///   - display: e.g. `":99"`; nil means `$DISPLAY`.
  ///   - useSharedMemory: false forces plain GetImage.
  /// - Throws: `X11CaptureError.noDisplay`, `.connectionFailed`, `.unsupportedPixelFormat`.
  public init(display: String? = nil, useSharedMemory: Bool = true) throws(X11CaptureError) {
    let opened = try X11Connection(display: display, useSharedMemory: useSharedMemory)
    width = opened.width
    height = opened.height
    usesSharedMemory = opened.usesSharedMemory
    connection = Mutex(opened)
  }

  deinit { stop() }

  /// One picture of the whole screen.
  /// - Throws: `X11CaptureError.captureFailed`.
  public func captureFrame() throws(X11CaptureError) -> I420Image {
    let pixels = try connection.withLock { (c: inout X11Connection) throws(X11CaptureError) in
      try c.grab()
    }
    guard let image = I420Image.fromARGB(pixels, width: width, height: height) else {
      throw .captureFailed(reason: "ARGBToI420 failed for \(width)x\(height)")
    }
    return image
  }

  /// Starts a thread capturing `framesPerSecond` pictures a second (1...120); `onEvent` is called
  /// on it. Does nothing if running. The thread keeps the capturer alive until `stop()` is called
  /// or capture fails.
  public func start(framesPerSecond: Double, onEvent: @escaping @Sendable (Event) -> Void) {
    guard captureThread.claim() else { return }
    let period = UInt64(1_000_000_000 / min(120, max(1, framesPerSecond)))
    captureThread.run(name: "X11ScreenCapturer") { [self] in
      var deadline = DispatchTime.now().uptimeNanoseconds
      while !captureThread.stopRequested {
        do throws(X11CaptureError) {
          let image = try captureFrame()
          let micros = Int64(DispatchTime.now().uptimeNanoseconds / 1000)
          onEvent(.frame(image, timestampMicroseconds: micros))
        } catch {
          onEvent(.failed(error))
          break
        }
        deadline += period
        let now = DispatchTime.now().uptimeNanoseconds
        // After a stall, skip missed frames instead of bursting to catch up.
        if deadline < now { deadline = now }
        usleep(UInt32(min(1_000_000, (deadline - now) / 1000)))
      }
    }
  }

  /// Stops the capture thread, waiting up to 2 s (not at all when called from `onEvent`).
  public func stop() {
    captureThread.stop()
  }
}
