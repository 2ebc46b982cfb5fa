/// A V4L2 camera found on the system.
public struct V4L2CameraInfo: Sendable, Equatable {
  /// The device node, e.g. `/dev/video0`: what `V4L2Camera(path:)` opens.
  public var id: String { path }
  /// The device node.
  public var path: String
  /// Human-readable name (`card`), e.g. `"HD Webcam C525"`.
  public var label: String
  /// Where the device sits (`bus_info`), stable across reboots unlike the node number.
  public var busInfo: String
  /// Driver name.
  public var driver: String
  /// Pixel formats offered.
  public var formats: [V4L2FormatDescription]

  /// A camera description.
  public init(
    path: String, label: String, busInfo: String, driver: String,
    formats: [V4L2FormatDescription]
  ) {
    self.path = path
    self.label = label
    self.busInfo = busInfo
    self.driver = driver
    self.formats = formats
  }
}

/// Lists V4L2 cameras and cycles through them.
public struct V4L2CameraEnumerator: Sendable {
  private let io: any V4L2DeviceIO

  /// An enumerator over `io` (`V4L2KernelIO` for real devices).
  public init(io: any V4L2DeviceIO = V4L2KernelIO()) { self.io = io }

  /// Result of looking at every `/dev/video*` node.
  public struct Listing: Sendable {
    /// Nodes that capture video with streaming I/O, in node order.
    public var cameras: [V4L2CameraInfo]
    /// Nodes that could not be queried (busy, permission), with the reason. Nodes that are not
    /// capture devices (UVC metadata nodes) are left out silently.
    public var errors: [V4L2Error]
  }

  /// Opens each node briefly and queries its capabilities and formats.
  public func list() -> Listing {
    var listing = Listing(cameras: [], errors: [])
    for path in io.devicePaths() {
      do throws(V4L2Error) {
        let handle = try io.openDevice(path: path)
        defer { io.closeDevice(handle) }
        let cap = try io.queryCapability(handle)
        guard cap.canCaptureVideo else { continue }
        listing.cameras.append(
          V4L2CameraInfo(
            path: path, label: cap.card, busInfo: cap.busInfo, driver: cap.driver,
            formats: try io.formats(handle)))
      } catch {
        listing.errors.append(error)
      }
    }
    return listing
  }

  /// Every size and its frame intervals for each convertible format of one camera: what a UI
  /// offers as resolutions.
  /// - Throws: `V4L2Error` from open or the enumeration ioctls.
  public func modes(path: String) throws(V4L2Error) -> [V4L2CaptureMode] {
    let handle = try io.openDevice(path: path)
    defer { io.closeDevice(handle) }
    var modes: [V4L2CaptureMode] = []
    for format in try io.formats(handle).map(\.pixelFormat)
    where V4L2CaptureMode.convertibleFormats.contains(format) {
      let sizes: [V4L2Size]
      switch try io.frameSizes(handle, pixelFormat: format) {
      case .discrete(let list): sizes = list
      case .stepwise(let low, let high, _, _): sizes = [low, high]
      }
      for size in sizes {
        let intervals = try io.frameIntervals(handle, pixelFormat: format, size: size)
        if intervals.isEmpty {
          modes.append(V4L2CaptureMode(pixelFormat: format, size: size, interval: nil))
        }
        for interval in intervals {
          modes.append(V4L2CaptureMode(pixelFormat: format, size: size, interval: interval))
        }
      }
    }
    return modes
  }

  /// The camera after `currentID` in `cameras`, wrapping around (the `switchCamera` of the iOS
  /// SDK, which flips front/back): the first camera when `currentID` is nil or not in the list,
  /// nil when the list is empty.
  public static func nextCamera(after currentID: String?, in cameras: [V4L2CameraInfo])
    -> V4L2CameraInfo?
  {
    guard !cameras.isEmpty else { return nil }
    guard let currentID, let index = cameras.firstIndex(where: { $0.id == currentID }) else {
      return cameras.first
    }
    return cameras[(index + 1) % cameras.count]
  }
}
