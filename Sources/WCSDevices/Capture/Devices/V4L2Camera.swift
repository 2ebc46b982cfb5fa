import Dispatch
import Foundation
import Synchronization
import WCSCodecs

/// A V4L2 camera streaming I420 pictures from a capture thread.
///
/// Opening negotiates the mode closest to the request (`V4L2CaptureMode.closest`); `start` maps
/// the buffers, turns streaming on and runs a thread that polls, dequeues, converts (YUYV/YU12/
/// MJPEG → I420) and calls `onEvent` with each picture. If the device disappears (DQBUF or poll
/// fail with ENODEV, e.g. the USB cable was pulled) the thread reports `.deviceLost` and ends.
public final class V4L2Camera: Sendable {
  /// What the capture thread reports, in order; nothing follows `.deviceLost` or `.failed`.
  public enum Event: Sendable {
    /// A picture of `mode.size`; timestamp in microseconds on the driver's clock (usually
    /// CLOCK_MONOTONIC); `sequence` is the driver's frame counter (gaps mean dropped frames).
    case frame(I420Image, timestampMicroseconds: Int64, sequence: UInt32)
    /// One buffer could not be converted (truncated, corrupt JPEG); capture goes on.
    case droppedFrame(V4L2Error)
    /// The device went away while streaming (ENODEV); capture has ended.
    case deviceLost(path: String)
    /// Any other failure of the streaming ioctls; capture has ended.
    case failed(V4L2Error)
  }

  /// The device node, e.g. `/dev/video0`.
  public let path: String
  /// What `VIDIOC_QUERYCAP` reported.
  public let capability: V4L2Capability
  /// The mode in use (format, size and interval the driver agreed to).
  public let mode: V4L2CaptureMode
  /// The negotiated buffer layout.
  public let format: V4L2NegotiatedFormat

  private let io: any V4L2DeviceIO
  private let handle: Int32
  private let captureThread = CaptureThread()

  /// Opens a camera and sets the supported mode closest to `width` x `height` at
  /// `framesPerSecond`.
  /// - Parameters:
  ///   - path: the device node (the `id` of a `V4L2CameraInfo`).
  ///   - width: requested width in pixels.
  ///   - height: requested height in pixels.
  ///   - framesPerSecond: requested frame rate.
  ///   - io: the V4L2 layer (`V4L2KernelIO` for real devices; a fake in tests).
  /// - Throws: `V4L2Error.noDevice`, `.busy`, `.permissionDenied`, `.notACaptureDevice`,
  ///   `.noSupportedFormat`, `.systemCall`.
  public init(
    path: String, width: Int = 640, height: Int = 480, framesPerSecond: Double = 30,
    io: any V4L2DeviceIO = V4L2KernelIO()
  ) throws(V4L2Error) {
    let handle = try io.openDevice(path: path)
    do throws(V4L2Error) {
      let capability = try io.queryCapability(handle)
      guard capability.canCaptureVideo else { throw V4L2Error.notACaptureDevice(path: path) }
      let formats = try io.formats(handle).map(\.pixelFormat)
      guard
        let wanted = try V4L2CaptureMode.closest(
          to: V4L2Size(width: width, height: height), framesPerSecond: framesPerSecond,
          formats: formats,
          sizes: { (f: V4L2FourCC) throws(V4L2Error) in try io.frameSizes(handle, pixelFormat: f) },
          intervals: { (f: V4L2FourCC, s: V4L2Size) throws(V4L2Error) in
            try io.frameIntervals(handle, pixelFormat: f, size: s)
          })
      else { throw V4L2Error.noSupportedFormat(path: path) }
      let format = try io.setFormat(handle, pixelFormat: wanted.pixelFormat, size: wanted.size)
      guard V4L2CaptureMode.convertibleFormats.contains(format.pixelFormat) else {
        throw V4L2Error.noSupportedFormat(path: path)
      }
      var interval = wanted.interval
      if let requested = wanted.interval {
        interval = try io.setFrameInterval(handle, requested) ?? requested
      }
      self.path = path
      self.capability = capability
      self.format = format
      self.mode = V4L2CaptureMode(
        pixelFormat: format.pixelFormat,
        size: V4L2Size(width: format.width, height: format.height), interval: interval)
      self.io = io
      self.handle = handle
    } catch {
      io.closeDevice(handle)
      throw error
    }
  }

  deinit {
    stop()
    io.closeDevice(handle)
  }

  /// Whether the capture thread is running.
  public var isRunning: Bool { captureThread.isRunning }

  /// Starts streaming and the capture thread; `onEvent` is called on that thread. The thread keeps
  /// the camera alive until `stop()` is called or capture ends, so call `stop()` when done.
  /// - Parameters:
  ///   - bufferCount: mmap buffers to ask the driver for (2...32).
  ///   - onEvent: receives frames, dropped frames, device loss and failure, on the capture thread.
  /// - Throws: `V4L2Error` from REQBUFS/QUERYBUF/mmap/QBUF/STREAMON (`.busy` if another program
  ///   streams from the device). Calling `start` while running does nothing.
  public func start(bufferCount: Int = 4, onEvent: @escaping @Sendable (Event) -> Void)
    throws(V4L2Error)
  {
    guard captureThread.claim() else { return }
    do throws(V4L2Error) {
      _ = try io.startStreaming(handle, bufferCount: min(32, max(2, bufferCount)))
    } catch {
      captureThread.abandon()
      throw error
    }
    captureThread.run(name: "V4L2Camera \(path)") { [self] in
      captureLoop(onEvent)
      io.stopStreaming(handle)
    }
  }

  /// Stops the capture thread and streaming; waits up to 2 s for the thread to end (not at all
  /// when called from `onEvent`). Safe to call when stopped.
  public func stop() {
    captureThread.stop()
  }

  private var stopRequested: Bool { captureThread.stopRequested }

  private func captureLoop(_ onEvent: @Sendable (Event) -> Void) {
    let converter = V4L2FrameConverter(format: format)
    while !stopRequested {
      do throws(V4L2Error) {
        guard try io.waitForFrame(handle, timeoutMilliseconds: 100),
          let buffer = try io.dequeue(handle)
        else { continue }
        let bytes = io.bufferBytes(handle, index: buffer.index, bytesUsed: buffer.bytesUsed)
        try io.requeue(handle, index: buffer.index)
        do throws(V4L2Error) {
          let image = try converter.image(from: bytes)
          onEvent(
            .frame(
              image, timestampMicroseconds: buffer.timestampMicroseconds,
              sequence: buffer.sequence))
        } catch {
          onEvent(.droppedFrame(error))
        }
      } catch {
        if case .deviceLost(let lostPath) = error {
          onEvent(.deviceLost(path: lostPath))
        } else {
          onEvent(.failed(error))
        }
        return
      }
    }
  }
}
