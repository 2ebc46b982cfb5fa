/// A V4L2 pixel format code: four ASCII characters packed little-endian (`v4l2_fourcc`,
/// linux/videodev2.h).
public struct V4L2FourCC: Sendable, Hashable, CustomStringConvertible {
  /// The packed code as the kernel stores it in `pixelformat`.
  public let rawValue: UInt32

  /// A code from its packed value.
  public init(rawValue: UInt32) { self.rawValue = rawValue }

  /// A code from four ASCII characters, e.g. `"YUYV"`; characters past the fourth are ignored and
  /// missing ones count as spaces.
  public init(_ text: String) {
    var bytes = Array(text.utf8.prefix(4))
    while bytes.count < 4 { bytes.append(0x20) }
    rawValue =
      UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
  }

  /// Packed YUV 4:2:2, Y0 U Y1 V (`V4L2_PIX_FMT_YUYV`): what most UVC webcams send uncompressed.
  public static let yuyv = V4L2FourCC("YUYV")
  /// Motion JPEG, one JPEG picture per buffer (`V4L2_PIX_FMT_MJPEG`).
  public static let mjpeg = V4L2FourCC("MJPG")
  /// Planar YUV 4:2:0 (`V4L2_PIX_FMT_YUV420`), the layout of `I420Image`.
  public static let yuv420 = V4L2FourCC("YU12")

  /// The four characters, e.g. `"YUYV"`.
  public var description: String {
    let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt32($0))) }
    return String(decoding: bytes, as: UTF8.self)
  }
}

/// What `VIDIOC_QUERYCAP` says about a device (`struct v4l2_capability`).
public struct V4L2Capability: Sendable, Equatable {
  /// Driver name, e.g. `"uvcvideo"`.
  public var driver: String
  /// Human-readable device name (`card`), e.g. `"HD Webcam C525"`: the camera's label.
  public var card: String
  /// Where the device sits (`bus_info`), e.g. `"usb-0000:00:14.0-1"`: stable across reboots.
  public var busInfo: String
  /// Capabilities of this device node (`device_caps`, or `capabilities` for old drivers).
  public var deviceCapabilities: UInt32

  /// A capability record.
  public init(driver: String, card: String, busInfo: String, deviceCapabilities: UInt32) {
    self.driver = driver
    self.card = card
    self.busInfo = busInfo
    self.deviceCapabilities = deviceCapabilities
  }

  /// `V4L2_CAP_VIDEO_CAPTURE` (single-planar capture).
  public static let videoCapture: UInt32 = 0x0000_0001
  /// `V4L2_CAP_STREAMING` (streaming I/O ioctls).
  public static let streaming: UInt32 = 0x0400_0000

  /// Whether the node captures video with streaming I/O, which is what `V4L2Camera` needs.
  /// (UVC cameras expose a second node for metadata that has neither.)
  public var canCaptureVideo: Bool {
    deviceCapabilities & Self.videoCapture != 0 && deviceCapabilities & Self.streaming != 0
  }
}

/// One pixel format a device offers (`VIDIOC_ENUM_FMT`).
public struct V4L2FormatDescription: Sendable, Equatable {
  /// The format code.
  public var pixelFormat: V4L2FourCC
  /// The driver's description, e.g. `"Motion-JPEG"`.
  public var description: String
  /// Whether the format is compressed (`V4L2_FMT_FLAG_COMPRESSED`).
  public var compressed: Bool

  /// A format description.
  public init(pixelFormat: V4L2FourCC, description: String, compressed: Bool) {
    self.pixelFormat = pixelFormat
    self.description = description
    self.compressed = compressed
  }
}

/// Frame sizes of one pixel format (`VIDIOC_ENUM_FRAMESIZES`).
public enum V4L2FrameSizes: Sendable, Equatable {
  /// A list of exact sizes in pixels (`V4L2_FRMSIZE_TYPE_DISCRETE`).
  case discrete([V4L2Size])
  /// Any size from `min` to `max` in steps (`V4L2_FRMSIZE_TYPE_STEPWISE` / `CONTINUOUS`).
  case stepwise(min: V4L2Size, max: V4L2Size, stepWidth: Int, stepHeight: Int)
}

/// A picture size in pixels.
public struct V4L2Size: Sendable, Hashable {
  /// Width in pixels.
  public var width: Int
  /// Height in pixels.
  public var height: Int

  /// A size.
  public init(width: Int, height: Int) {
    self.width = width
    self.height = height
  }
}

/// The time between frames as a fraction of a second (`struct v4l2_fract`): 1/30 is 30 fps.
public struct V4L2FrameInterval: Sendable, Hashable {
  /// Numerator in seconds.
  public var numerator: Int
  /// Denominator in seconds.
  public var denominator: Int

  /// An interval of `numerator / denominator` seconds.
  public init(numerator: Int, denominator: Int) {
    self.numerator = numerator
    self.denominator = denominator
  }

  /// Frames per second (`denominator / numerator`); 0 when the numerator is 0.
  public var framesPerSecond: Double {
    numerator == 0 ? 0 : Double(denominator) / Double(numerator)
  }
}

/// The format a device agreed to after `VIDIOC_S_FMT` (`struct v4l2_pix_format`).
public struct V4L2NegotiatedFormat: Sendable, Equatable {
  /// Pixel format in use.
  public var pixelFormat: V4L2FourCC
  /// Width in pixels.
  public var width: Int
  /// Height in pixels.
  public var height: Int
  /// Bytes per row for packed formats (0 for compressed ones).
  public var bytesPerLine: Int
  /// Largest buffer size in bytes.
  public var sizeImage: Int

  /// A negotiated format.
  public init(pixelFormat: V4L2FourCC, width: Int, height: Int, bytesPerLine: Int, sizeImage: Int) {
    self.pixelFormat = pixelFormat
    self.width = width
    self.height = height
    self.bytesPerLine = bytesPerLine
    self.sizeImage = sizeImage
  }
}

/// A filled buffer taken from the driver's outgoing queue (`VIDIOC_DQBUF`).
public struct V4L2DequeuedBuffer: Sendable, Equatable {
  /// Index of the mmap buffer; give it back with `requeue`.
  public var index: Int
  /// Bytes of picture data in the buffer (`bytesused`).
  public var bytesUsed: Int
  /// The driver's frame counter (`sequence`).
  public var sequence: UInt32
  /// Capture time in microseconds on the driver's clock (usually CLOCK_MONOTONIC).
  public var timestampMicroseconds: Int64

  /// A dequeued buffer record.
  public init(index: Int, bytesUsed: Int, sequence: UInt32, timestampMicroseconds: Int64) {
    self.index = index
    self.bytesUsed = bytesUsed
    self.sequence = sequence
    self.timestampMicroseconds = timestampMicroseconds
  }
}

/// Why a V4L2 operation failed.
public enum V4L2Error: Error, Sendable, Equatable {
  /// No device node at this path (ENOENT/ENXIO/ENODEV on open).
  case noDevice(path: String)
  /// Another program has the camera streaming (EBUSY).
  case busy(path: String)
  /// The process may not open the node (EACCES/EPERM); add the user to the `video` group.
  case permissionDenied(path: String)
  /// The node is not a streaming video capture device (e.g. a UVC metadata node).
  case notACaptureDevice(path: String)
  /// The device offers no format `V4L2Camera` can convert (YUYV, MJPEG, YU12).
  case noSupportedFormat(path: String)
  /// The device went away while open (ENODEV), e.g. the USB camera was unplugged.
  case deviceLost(path: String)
  /// An ioctl or system call failed: its name and `errno`.
  case systemCall(name: String, errno: Int32)
  /// A buffer could not be turned into a picture (truncated YUYV, corrupt JPEG): the reason.
  case badFrame(reason: String)
}
