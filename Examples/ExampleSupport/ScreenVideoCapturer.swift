import FPWCSApi2Swift
import Foundation
import WCSMedia

/// The ScreenCapturer example's video source: the X11 screen (xcb, MIT-SHM when the server
/// offers it; works under Xvfb) as an app capturer, the Linux counterpart of the iOS example's
/// ReplayKit broadcast extension feeding an `RTCVideoCapturer`.
public final class ScreenVideoCapturer: RTCVideoCapturer, FPWCSVideoCapturer, @unchecked Sendable {
  // @unchecked Sendable: the stored properties are immutable and Sendable; the base class keeps
  // its frame handler behind a mutex, so `deliver(_:)` may be called from the capture thread.
  private let screen: X11ScreenCapturer
  private let framesPerSecond: Double

  /// Screen width in pixels.
  public var width: Int { screen.width }
  /// Screen height in pixels.
  public var height: Int { screen.height }
  /// Whether pictures come through shared memory.
  public var usesSharedMemory: Bool { screen.usesSharedMemory }

  /// Opens the X display (`nil`: `$DISPLAY`).
  /// - Throws: `ExampleError.failed` when the display cannot be opened.
  public init(display: String?, framesPerSecond: Double) throws(ExampleError) {
    do {
      screen = try X11ScreenCapturer(display: display)
    } catch {
      throw .failed("cannot open the X display \(display ?? "$DISPLAY"): \(error)")
    }
    self.framesPerSecond = framesPerSecond
    super.init()
  }

  /// Starts grabbing the screen (the SDK calls it when publishing starts).
  public func startCapture(with device: CaptureDevice?, format: VideoCaptureFormat?, fps: Int) {
    screen.start(framesPerSecond: framesPerSecond) { [self] event in
      guard case .frame(let image, let micros) = event else { return }
      let packed = image.packed()
      self.deliver(
        VideoFrame(
          width: packed.width, height: packed.height, dataY: Data(packed.y),
          dataU: Data(packed.u), dataV: Data(packed.v), strideY: packed.strideY,
          strideU: packed.strideU, strideV: packed.strideV, timestampNs: micros * 1000))
    }
  }

  /// Stops grabbing.
  public func stopCapture() { screen.stop() }

  /// Nothing to lock on a screen.
  public func lockCameraOrientation() {}

  /// Nothing to unlock on a screen.
  public func unlockCameraOrientation() {}
}
