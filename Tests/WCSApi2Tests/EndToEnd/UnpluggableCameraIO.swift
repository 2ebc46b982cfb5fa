import Dispatch
import Foundation
import Synchronization
import WCSMedia

/// A V4L2 layer with one USB camera at `/dev/video0` (YUYV 320x240 at 30 fps) that hands out a
/// grey picture every time it is asked, until `unplug()`: then the next dequeue fails with
/// `V4L2Error.deviceLost`, as the kernel's ENODEV does.
final class UnpluggableCameraIO: V4L2DeviceIO {
  static let path = "/dev/video0"
  static let size = V4L2Size(width: 320, height: 240)

  private struct State {
    var openHandles: Set<Int32> = []
    var unplugged = false
    var sequence: UInt32 = 0
    var dequeued = 0
  }

  private let state = Mutex(State())
  /// One grey YUYV picture (Y = 128, U = V = 128).
  private let picture = [UInt8](repeating: 128, count: 2 * 320 * 240)

  /// Pictures handed out so far.
  var dequeued: Int { state.withLock { $0.dequeued } }

  /// The camera is gone from now on.
  func unplug() { state.withLock { $0.unplugged = true } }

  func devicePaths() -> [String] { [Self.path] }

  func openDevice(path: String) throws(V4L2Error) -> Int32 {
    guard path == Self.path, !state.withLock({ $0.unplugged }) else {
      throw .noDevice(path: path)
    }
    state.withLock { _ = $0.openHandles.insert(3) }
    return 3
  }

  func closeDevice(_ handle: Int32) { state.withLock { _ = $0.openHandles.remove(handle) } }

  func queryCapability(_ handle: Int32) throws(V4L2Error) -> V4L2Capability {
    V4L2Capability(
      driver: "uvcvideo", card: "Unpluggable Webcam", busInfo: "usb-0000:00:14.0-1",
      deviceCapabilities: V4L2Capability.videoCapture | V4L2Capability.streaming)
  }

  func formats(_ handle: Int32) throws(V4L2Error) -> [V4L2FormatDescription] {
    [V4L2FormatDescription(pixelFormat: .yuyv, description: "YUYV 4:2:2", compressed: false)]
  }

  func frameSizes(_ handle: Int32, pixelFormat: V4L2FourCC) throws(V4L2Error) -> V4L2FrameSizes {
    .discrete(pixelFormat == .yuyv ? [Self.size] : [])
  }

  func frameIntervals(_ handle: Int32, pixelFormat: V4L2FourCC, size: V4L2Size)
    throws(V4L2Error) -> [V4L2FrameInterval]
  {
    [V4L2FrameInterval(numerator: 1, denominator: 30)]
  }

  func setFormat(_ handle: Int32, pixelFormat: V4L2FourCC, size: V4L2Size)
    throws(V4L2Error) -> V4L2NegotiatedFormat
  {
    V4L2NegotiatedFormat(
      pixelFormat: .yuyv, width: Self.size.width, height: Self.size.height,
      bytesPerLine: 2 * Self.size.width, sizeImage: 2 * Self.size.width * Self.size.height)
  }

  func setFrameInterval(_ handle: Int32, _ interval: V4L2FrameInterval)
    throws(V4L2Error) -> V4L2FrameInterval?
  {
    interval
  }

  func startStreaming(_ handle: Int32, bufferCount: Int) throws(V4L2Error) -> Int { bufferCount }

  /// A picture is ready every 33 ms (the camera's 30 fps), or at once once unplugged.
  func waitForFrame(_ handle: Int32, timeoutMilliseconds: Int) throws(V4L2Error) -> Bool {
    if state.withLock({ $0.unplugged }) { return true }
    usleep(UInt32(min(33, max(timeoutMilliseconds, 0))) * 1000)
    return true
  }

  func dequeue(_ handle: Int32) throws(V4L2Error) -> V4L2DequeuedBuffer? {
    let result: Result<V4L2DequeuedBuffer?, V4L2Error> = state.withLock { state in
      if state.unplugged { return .failure(.deviceLost(path: Self.path)) }
      state.dequeued += 1
      defer { state.sequence += 1 }
      return .success(
        V4L2DequeuedBuffer(
          index: 0, bytesUsed: picture.count, sequence: state.sequence,
          timestampMicroseconds: Int64(state.sequence) * 33_333))
    }
    return try result.get()
  }

  func bufferBytes(_ handle: Int32, index: Int, bytesUsed: Int) -> [UInt8] {
    Array(picture.prefix(bytesUsed))
  }

  func requeue(_ handle: Int32, index: Int) throws(V4L2Error) {}

  func stopStreaming(_ handle: Int32) {}
}
