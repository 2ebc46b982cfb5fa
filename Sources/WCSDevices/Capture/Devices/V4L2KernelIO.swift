import CMediaDevices
import Foundation
import Synchronization

/// `V4L2DeviceIO` on the real kernel interface: ioctl(2) on `/dev/video*` nodes, mmap streaming
/// I/O (linux/videodev2.h, "Streaming I/O (Memory Mapping)" in the V4L2 API).
public final class V4L2KernelIO: V4L2DeviceIO {
  private struct MappedBuffer: Sendable {
    var address: Int
    var length: Int
  }

  /// Mapped buffers per open handle; the lock makes the class safe to share between the thread
  /// that opens a camera and its capture thread.
  private let mapped = Mutex<[Int32: [MappedBuffer]]>([:])
  private let paths = Mutex<[Int32: String]>([:])
  private let deviceDirectory: String

  /// The kernel interface; `deviceDirectory` is where `video*` nodes are looked for.
  public init(deviceDirectory: String = "/dev") {
    self.deviceDirectory = deviceDirectory
  }

  /// The `/dev/video*` nodes, sorted by number.
  public func devicePaths() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: deviceDirectory)) ?? []
    return
      names
      .filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
      .sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }
      .map { deviceDirectory + "/" + $0 }
  }

  /// Opens the node read/write, non-blocking (`open(2)`); ENOENT → `.noDevice`, EBUSY → `.busy`,
  /// EACCES → `.permissionDenied`.
  public func openDevice(path: String) throws(V4L2Error) -> Int32 {
    let fd = wcs_open_video_device(path)
    guard fd >= 0 else {
      let code = errno
      switch code {
      case ENOENT, ENXIO, ENODEV: throw .noDevice(path: path)
      case EBUSY: throw .busy(path: path)
      case EACCES, EPERM: throw .permissionDenied(path: path)
      default: throw .systemCall(name: "open", errno: code)
      }
    }
    paths.withLock { $0[fd] = path }
    return fd
  }

  /// Closes a handle from `openDevice` (`close(2)`).
  public func closeDevice(_ handle: Int32) {
    stopStreaming(handle)
    paths.withLock { _ = $0.removeValue(forKey: handle) }
    _ = close(handle)
  }

  private func path(_ handle: Int32) -> String {
    paths.withLock { $0[handle] } ?? "fd \(handle)"
  }

  /// Runs one ioctl; maps ENODEV to `.deviceLost` and EBUSY to `.busy`.
  private func ioctl<T>(_ handle: Int32, _ request: UInt, _ name: String, _ argument: inout T)
    throws(V4L2Error)
  {
    let result = withUnsafeMutablePointer(to: &argument) { wcs_ioctl(handle, request, $0) }
    guard result == 0 else {
      let code = errno
      switch code {
      case ENODEV: throw .deviceLost(path: path(handle))
      case EBUSY: throw .busy(path: path(handle))
      default: throw .systemCall(name: name, errno: code)
      }
    }
  }

  /// Like `ioctl` but returns false on EINVAL, which is how enumeration ioctls say "no more".
  private func enumerate<T>(_ handle: Int32, _ request: UInt, _ name: String, _ argument: inout T)
    throws(V4L2Error) -> Bool
  {
    do throws(V4L2Error) {
      try ioctl(handle, request, name, &argument)
      return true
    } catch {
      if case .systemCall(_, let code) = error, code == EINVAL || code == ENOTTY { return false }
      throw error
    }
  }

  /// `VIDIOC_QUERYCAP`: driver, card name, bus info and capability flags.
  public func queryCapability(_ handle: Int32) throws(V4L2Error) -> V4L2Capability {
    var cap = v4l2_capability()
    try ioctl(handle, wcs_vidioc_querycap(), "VIDIOC_QUERYCAP", &cap)
    let caps =
      cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
    return V4L2Capability(
      driver: cString(cap.driver), card: cString(cap.card), busInfo: cString(cap.bus_info),
      deviceCapabilities: caps)
  }

  /// `VIDIOC_ENUM_FMT` over every index: the capture pixel formats (fourcc and description).
  public func formats(_ handle: Int32) throws(V4L2Error) -> [V4L2FormatDescription] {
    var result: [V4L2FormatDescription] = []
    for index in 0..<64 {
      var desc = v4l2_fmtdesc()
      desc.index = UInt32(index)
      desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
      guard try enumerate(handle, wcs_vidioc_enum_fmt(), "VIDIOC_ENUM_FMT", &desc) else { break }
      result.append(
        V4L2FormatDescription(
          pixelFormat: V4L2FourCC(rawValue: desc.pixelformat),
          description: cString(desc.description),
          compressed: desc.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0))
    }
    return result
  }

  /// `VIDIOC_ENUM_FRAMESIZES`: discrete sizes or a stepwise range, in pixels.
  public func frameSizes(_ handle: Int32, pixelFormat: V4L2FourCC) throws(V4L2Error)
    -> V4L2FrameSizes
  {
    var sizes: [V4L2Size] = []
    for index in 0..<256 {
      var e = v4l2_frmsizeenum()
      e.index = UInt32(index)
      e.pixel_format = pixelFormat.rawValue
      guard try enumerate(handle, wcs_vidioc_enum_framesizes(), "VIDIOC_ENUM_FRAMESIZES", &e)
      else { break }
      if e.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
        sizes.append(V4L2Size(width: Int(e.discrete.width), height: Int(e.discrete.height)))
      } else {
        let s = e.stepwise
        return .stepwise(
          min: V4L2Size(width: Int(s.min_width), height: Int(s.min_height)),
          max: V4L2Size(width: Int(s.max_width), height: Int(s.max_height)),
          stepWidth: max(1, Int(s.step_width)), stepHeight: max(1, Int(s.step_height)))
      }
    }
    return .discrete(sizes)
  }

  /// `VIDIOC_ENUM_FRAMEINTERVALS`: frame intervals (seconds per frame as a fraction) at a size.
  public func frameIntervals(_ handle: Int32, pixelFormat: V4L2FourCC, size: V4L2Size)
    throws(V4L2Error) -> [V4L2FrameInterval]
  {
    var result: [V4L2FrameInterval] = []
    for index in 0..<64 {
      var e = v4l2_frmivalenum()
      e.index = UInt32(index)
      e.pixel_format = pixelFormat.rawValue
      e.width = UInt32(clamping: size.width)
      e.height = UInt32(clamping: size.height)
      guard
        try enumerate(handle, wcs_vidioc_enum_frameintervals(), "VIDIOC_ENUM_FRAMEINTERVALS", &e)
      else { break }
      if e.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
        result.append(
          V4L2FrameInterval(
            numerator: Int(e.discrete.numerator), denominator: Int(e.discrete.denominator)))
      } else {
        let s = e.stepwise
        return [
          V4L2FrameInterval(numerator: Int(s.min.numerator), denominator: Int(s.min.denominator)),
          V4L2FrameInterval(numerator: Int(s.max.numerator), denominator: Int(s.max.denominator)),
        ]
      }
    }
    return result
  }

  /// `VIDIOC_S_FMT`: asks for a pixel format and size; returns what the driver chose.
  public func setFormat(_ handle: Int32, pixelFormat: V4L2FourCC, size: V4L2Size)
    throws(V4L2Error) -> V4L2NegotiatedFormat
  {
    var format = v4l2_format()
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    format.fmt.pix.width = UInt32(clamping: size.width)
    format.fmt.pix.height = UInt32(clamping: size.height)
    format.fmt.pix.pixelformat = pixelFormat.rawValue
    format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
    try ioctl(handle, wcs_vidioc_s_fmt(), "VIDIOC_S_FMT", &format)
    let pix = format.fmt.pix
    return V4L2NegotiatedFormat(
      pixelFormat: V4L2FourCC(rawValue: pix.pixelformat), width: Int(pix.width),
      height: Int(pix.height), bytesPerLine: Int(pix.bytesperline), sizeImage: Int(pix.sizeimage))
  }

  /// `VIDIOC_S_PARM`: asks for a frame interval; returns what the driver chose.
  public func setFrameInterval(_ handle: Int32, _ interval: V4L2FrameInterval)
    throws(V4L2Error) -> V4L2FrameInterval?
  {
    var parm = v4l2_streamparm()
    parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    parm.parm.capture.timeperframe.numerator = UInt32(clamping: interval.numerator)
    parm.parm.capture.timeperframe.denominator = UInt32(clamping: interval.denominator)
    guard try enumerate(handle, wcs_vidioc_s_parm(), "VIDIOC_S_PARM", &parm) else { return nil }
    guard parm.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 else { return nil }
    let t = parm.parm.capture.timeperframe
    return V4L2FrameInterval(numerator: Int(t.numerator), denominator: Int(t.denominator))
  }

  /// `VIDIOC_REQBUFS` + `VIDIOC_QUERYBUF` + `mmap` + `VIDIOC_QBUF` for each buffer, then
  /// `VIDIOC_STREAMON`; returns the number of buffers the driver granted.
  public func startStreaming(_ handle: Int32, bufferCount: Int) throws(V4L2Error) -> Int {
    stopStreaming(handle)
    var request = v4l2_requestbuffers()
    request.count = UInt32(clamping: max(2, bufferCount))
    request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    request.memory = V4L2_MEMORY_MMAP.rawValue
    try ioctl(handle, wcs_vidioc_reqbufs(), "VIDIOC_REQBUFS", &request)
    guard request.count > 0 else { throw .systemCall(name: "VIDIOC_REQBUFS", errno: ENOMEM) }
    var buffers: [MappedBuffer] = []
    do throws(V4L2Error) {
      for index in 0..<Int(request.count) {
        var buffer = v4l2_buffer()
        buffer.index = UInt32(index)
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl(handle, wcs_vidioc_querybuf(), "VIDIOC_QUERYBUF", &buffer)
        let length = Int(buffer.length)
        let address = mmap(
          nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, handle, off_t(buffer.m.offset))
        guard let address, address != wcs_map_failed() else {
          throw V4L2Error.systemCall(name: "mmap", errno: errno)
        }
        buffers.append(MappedBuffer(address: Int(bitPattern: address), length: length))
        try ioctl(handle, wcs_vidioc_qbuf(), "VIDIOC_QBUF", &buffer)
      }
      var type = Int32(bitPattern: V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
      try ioctl(handle, wcs_vidioc_streamon(), "VIDIOC_STREAMON", &type)
    } catch {
      unmap(buffers)
      releaseBuffers(handle)
      throw error
    }
    mapped.withLock { $0[handle] = buffers }
    return buffers.count
  }

  /// `poll(2)` for a filled buffer: true when one is ready, false on timeout (milliseconds).
  public func waitForFrame(_ handle: Int32, timeoutMilliseconds: Int) throws(V4L2Error) -> Bool {
    var descriptor = pollfd(fd: handle, events: Int16(POLLIN), revents: 0)
    let result = poll(&descriptor, 1, Int32(clamping: timeoutMilliseconds))
    if result < 0 {
      let code = errno
      if code == EINTR { return false }
      throw .systemCall(name: "poll", errno: code)
    }
    if result == 0 { return false }
    if descriptor.revents & Int16(POLLIN) != 0 { return true }
    if descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
      throw .deviceLost(path: path(handle))
    }
    return false
  }

  /// `VIDIOC_DQBUF`: the filled buffer (index, bytes used, sequence, timestamp), nil when none is
  /// ready (EAGAIN); ENODEV → `.deviceLost`.
  public func dequeue(_ handle: Int32) throws(V4L2Error) -> V4L2DequeuedBuffer? {
    var buffer = v4l2_buffer()
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    buffer.memory = V4L2_MEMORY_MMAP.rawValue
    do throws(V4L2Error) {
      try ioctl(handle, wcs_vidioc_dqbuf(), "VIDIOC_DQBUF", &buffer)
    } catch {
      if case .systemCall(_, let code) = error, code == EAGAIN { return nil }
      throw error
    }
    let micros = Int64(buffer.timestamp.tv_sec) * 1_000_000 + Int64(buffer.timestamp.tv_usec)
    return V4L2DequeuedBuffer(
      index: Int(buffer.index), bytesUsed: Int(buffer.bytesused), sequence: buffer.sequence,
      timestampMicroseconds: micros)
  }

  /// A copy of the first `bytesUsed` bytes of mmap buffer `index` (clamped to its length).
  public func bufferBytes(_ handle: Int32, index: Int, bytesUsed: Int) -> [UInt8] {
    guard
      let buffer = mapped.withLock({ $0[handle] }).flatMap({ list in
        list.indices.contains(index) ? list[index] : nil
      }),
      let base = UnsafeRawPointer(bitPattern: buffer.address)
    else { return [] }
    let count = max(0, min(bytesUsed, buffer.length))
    return [UInt8](UnsafeRawBufferPointer(start: base, count: count))
  }

  /// `VIDIOC_QBUF`: hands buffer `index` back to the driver.
  public func requeue(_ handle: Int32, index: Int) throws(V4L2Error) {
    var buffer = v4l2_buffer()
    buffer.index = UInt32(clamping: index)
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    buffer.memory = V4L2_MEMORY_MMAP.rawValue
    try ioctl(handle, wcs_vidioc_qbuf(), "VIDIOC_QBUF", &buffer)
  }

  /// `VIDIOC_STREAMOFF` and `munmap` of every buffer.
  public func stopStreaming(_ handle: Int32) {
    guard let buffers = mapped.withLock({ $0.removeValue(forKey: handle) }) else { return }
    var type = Int32(bitPattern: V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
    _ = wcs_ioctl(handle, wcs_vidioc_streamoff(), &type)
    unmap(buffers)
    releaseBuffers(handle)
  }

  private func unmap(_ buffers: [MappedBuffer]) {
    for buffer in buffers {
      if let address = UnsafeMutableRawPointer(bitPattern: buffer.address) {
        _ = munmap(address, buffer.length)
      }
    }
  }

  /// REQBUFS with count 0 frees the driver's buffers so another program can use the camera.
  private func releaseBuffers(_ handle: Int32) {
    var request = v4l2_requestbuffers()
    request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    request.memory = V4L2_MEMORY_MMAP.rawValue
    _ = wcs_ioctl(handle, wcs_vidioc_reqbufs(), &request)
  }
}

/// A NUL-terminated C char array (imported as a tuple) as a String.
func cString<T>(_ tuple: T) -> String {
  withUnsafeBytes(of: tuple) { raw in
    let bytes = raw.prefix { $0 != 0 }
    return String(decoding: bytes, as: UTF8.self)
  }
}
