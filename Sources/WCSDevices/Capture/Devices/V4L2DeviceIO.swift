/// The V4L2 operations `V4L2Camera` and `V4L2CameraEnumerator` need, one method per ioctl (or
/// group of ioctls), so tests can put a scripted fake device in place of the kernel.
/// `V4L2KernelIO` is the real implementation.
///
/// A handle is the file descriptor of an open device node (any `Int32` for fakes). Methods other
/// than `openDevice` and `closeDevice` may be called from the capture thread; an implementation
/// must allow calls for different handles from different threads.
public protocol V4L2DeviceIO: Sendable {
  /// Paths of the video device nodes, sorted (`/dev/video0`, `/dev/video1`...).
  func devicePaths() -> [String]
  /// Opens a node for reading and writing, non-blocking.
  /// - Throws: `V4L2Error.noDevice`, `.busy`, `.permissionDenied`, `.systemCall`.
  func openDevice(path: String) throws(V4L2Error) -> Int32
  /// Closes a handle, stopping streaming and unmapping buffers first if needed.
  func closeDevice(_ handle: Int32)
  /// `VIDIOC_QUERYCAP`.
  func queryCapability(_ handle: Int32) throws(V4L2Error) -> V4L2Capability
  /// `VIDIOC_ENUM_FMT` for video capture, all indexes.
  func formats(_ handle: Int32) throws(V4L2Error) -> [V4L2FormatDescription]
  /// `VIDIOC_ENUM_FRAMESIZES` for one pixel format.
  func frameSizes(_ handle: Int32, pixelFormat: V4L2FourCC) throws(V4L2Error) -> V4L2FrameSizes
  /// `VIDIOC_ENUM_FRAMEINTERVALS` for one format and size; discrete intervals only (a stepwise
  /// range is reported as its two ends). Empty when the driver does not enumerate intervals.
  func frameIntervals(_ handle: Int32, pixelFormat: V4L2FourCC, size: V4L2Size)
    throws(V4L2Error) -> [V4L2FrameInterval]
  /// `VIDIOC_S_FMT`: asks for a format and size; returns what the driver chose.
  func setFormat(_ handle: Int32, pixelFormat: V4L2FourCC, size: V4L2Size)
    throws(V4L2Error) -> V4L2NegotiatedFormat
  /// `VIDIOC_S_PARM`: asks for a frame interval; returns the one the driver chose (nil when the
  /// driver has no frame interval control).
  func setFrameInterval(_ handle: Int32, _ interval: V4L2FrameInterval)
    throws(V4L2Error) -> V4L2FrameInterval?
  /// `VIDIOC_REQBUFS` (mmap), `VIDIOC_QUERYBUF` + mmap and `VIDIOC_QBUF` of every buffer, then
  /// `VIDIOC_STREAMON`. Returns how many buffers the driver gave.
  func startStreaming(_ handle: Int32, bufferCount: Int) throws(V4L2Error) -> Int
  /// Waits with poll(2) until a buffer can be dequeued.
  /// - Returns: false when `timeoutMilliseconds` passed first.
  /// - Throws: `V4L2Error.deviceLost` when poll reports POLLERR/POLLHUP (device gone).
  func waitForFrame(_ handle: Int32, timeoutMilliseconds: Int) throws(V4L2Error) -> Bool
  /// `VIDIOC_DQBUF`.
  /// - Returns: nil when no buffer is ready yet (EAGAIN).
  /// - Throws: `V4L2Error.deviceLost` on ENODEV (unplugged).
  func dequeue(_ handle: Int32) throws(V4L2Error) -> V4L2DequeuedBuffer?
  /// Bytes `0 ..< bytesUsed` of mapped buffer `index`, copied out.
  func bufferBytes(_ handle: Int32, index: Int, bytesUsed: Int) -> [UInt8]
  /// `VIDIOC_QBUF`: hands buffer `index` back to the driver.
  func requeue(_ handle: Int32, index: Int) throws(V4L2Error)
  /// `VIDIOC_STREAMOFF` and unmapping of the buffers; safe to call twice.
  func stopStreaming(_ handle: Int32)
}
