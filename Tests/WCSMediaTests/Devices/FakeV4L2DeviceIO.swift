import Dispatch
import Synchronization
import WCSMedia

/// A scripted V4L2 layer: devices with capabilities, formats, sizes and intervals, and a queue of
/// buffers (or an unplug) that `dequeue` hands out in order. Records every call so tests can check
/// the ioctl sequence.
final class FakeV4L2DeviceIO: V4L2DeviceIO {
  struct Device: Sendable {
    var capability: V4L2Capability
    var formats: [V4L2FourCC: [V4L2Size: [V4L2FrameInterval]]] = [:]
    var stepwise: [V4L2FourCC: V4L2FrameSizes] = [:]
    var busy = false
  }

  enum Delivery: Sendable {
    case buffer([UInt8])
    case unplug
  }

  private struct State: Sendable {
    var devices: [String: Device]
    var open: [Int32: String] = [:]
    var nextHandle: Int32 = 3
    var negotiated: [Int32: V4L2NegotiatedFormat] = [:]
    var queue: [Delivery] = []
    var buffers: [[UInt8]] = []
    var nextBuffer = 0
    var sequence: UInt32 = 0
    var calls: [String] = []
  }

  private let state: Mutex<State>
  private let arrived = DispatchSemaphore(value: 0)

  init(devices: [String: Device]) {
    state = Mutex(State(devices: devices))
  }

  static func capture(_ card: String, bus: String) -> V4L2Capability {
    V4L2Capability(
      driver: "fake", card: card, busInfo: bus,
      deviceCapabilities: V4L2Capability.videoCapture | V4L2Capability.streaming)
  }

  var calls: [String] { state.withLock { $0.calls } }
  var openHandles: Int { state.withLock { $0.open.count } }

  func deliver(_ items: [Delivery]) {
    state.withLock { $0.queue += items }
    for _ in items { arrived.signal() }
  }

  private func log(_ call: String) { state.withLock { $0.calls.append(call) } }

  func devicePaths() -> [String] { state.withLock { $0.devices.keys.sorted() } }

  func openDevice(path: String) throws(V4L2Error) -> Int32 {
    log("open")
    let result: Result<Int32, V4L2Error> = state.withLock { s in
      guard let device = s.devices[path] else { return .failure(.noDevice(path: path)) }
      if device.busy { return .failure(.busy(path: path)) }
      let handle = s.nextHandle
      s.nextHandle += 1
      s.open[handle] = path
      return .success(handle)
    }
    return try result.get()
  }

  func closeDevice(_ handle: Int32) {
    log("close")
    state.withLock { _ = $0.open.removeValue(forKey: handle) }
  }

  private func device(_ handle: Int32) throws(V4L2Error) -> Device {
    let found = state.withLock { s in s.open[handle].flatMap { s.devices[$0] } }
    guard let found else { throw .systemCall(name: "fake", errno: 9) }
    return found
  }

  func queryCapability(_ handle: Int32) throws(V4L2Error) -> V4L2Capability {
    log("VIDIOC_QUERYCAP")
    return try device(handle).capability
  }

  func formats(_ handle: Int32) throws(V4L2Error) -> [V4L2FormatDescription] {
    log("VIDIOC_ENUM_FMT")
    let d = try device(handle)
    let all = Set(d.formats.keys).union(d.stepwise.keys)
    return all.sorted { $0.rawValue < $1.rawValue }.map {
      V4L2FormatDescription(pixelFormat: $0, description: $0.description, compressed: $0 == .mjpeg)
    }
  }

  func frameSizes(_ handle: Int32, pixelFormat: V4L2FourCC) throws(V4L2Error) -> V4L2FrameSizes {
    log("VIDIOC_ENUM_FRAMESIZES")
    let d = try device(handle)
    if let stepwise = d.stepwise[pixelFormat] { return stepwise }
    let sizes = (d.formats[pixelFormat] ?? [:]).keys.sorted {
      ($0.width, $0.height) < ($1.width, $1.height)
    }
    return .discrete(sizes)
  }

  func frameIntervals(_ handle: Int32, pixelFormat: V4L2FourCC, size: V4L2Size)
    throws(V4L2Error) -> [V4L2FrameInterval]
  {
    log("VIDIOC_ENUM_FRAMEINTERVALS")
    return try device(handle).formats[pixelFormat]?[size] ?? []
  }

  func setFormat(_ handle: Int32, pixelFormat: V4L2FourCC, size: V4L2Size)
    throws(V4L2Error) -> V4L2NegotiatedFormat
  {
    log("VIDIOC_S_FMT \(pixelFormat) \(size.width)x\(size.height)")
    let format = V4L2NegotiatedFormat(
      pixelFormat: pixelFormat, width: size.width, height: size.height,
      bytesPerLine: pixelFormat == .yuyv ? 2 * size.width : 0,
      sizeImage: 2 * size.width * size.height)
    state.withLock { $0.negotiated[handle] = format }
    return format
  }

  func setFrameInterval(_ handle: Int32, _ interval: V4L2FrameInterval)
    throws(V4L2Error) -> V4L2FrameInterval?
  {
    log("VIDIOC_S_PARM \(interval.numerator)/\(interval.denominator)")
    return interval
  }

  func startStreaming(_ handle: Int32, bufferCount: Int) throws(V4L2Error) -> Int {
    log("VIDIOC_REQBUFS \(bufferCount)")
    log("VIDIOC_STREAMON")
    state.withLock { $0.buffers = Array(repeating: [], count: bufferCount) }
    return bufferCount
  }

  func waitForFrame(_ handle: Int32, timeoutMilliseconds: Int) throws(V4L2Error) -> Bool {
    if state.withLock({ !$0.queue.isEmpty }) { return true }
    _ = arrived.wait(timeout: .now() + .milliseconds(min(timeoutMilliseconds, 20)))
    return state.withLock { !$0.queue.isEmpty }
  }

  func dequeue(_ handle: Int32) throws(V4L2Error) -> V4L2DequeuedBuffer? {
    let result: Result<V4L2DequeuedBuffer?, V4L2Error> = state.withLock { s in
      guard !s.queue.isEmpty else { return .success(nil) }
      s.calls.append("VIDIOC_DQBUF")
      switch s.queue.removeFirst() {
      case .unplug:
        return .failure(.deviceLost(path: s.open[handle] ?? "?"))
      case .buffer(let bytes):
        let index = s.nextBuffer % max(1, s.buffers.count)
        s.nextBuffer += 1
        s.buffers[index] = bytes
        defer { s.sequence += 1 }
        return .success(
          V4L2DequeuedBuffer(
            index: index, bytesUsed: bytes.count, sequence: s.sequence,
            timestampMicroseconds: Int64(s.sequence) * 33_333))
      }
    }
    return try result.get()
  }

  func bufferBytes(_ handle: Int32, index: Int, bytesUsed: Int) -> [UInt8] {
    state.withLock { s in
      s.buffers.indices.contains(index) ? Array(s.buffers[index].prefix(bytesUsed)) : []
    }
  }

  func requeue(_ handle: Int32, index: Int) throws(V4L2Error) {
    log("VIDIOC_QBUF \(index)")
  }

  func stopStreaming(_ handle: Int32) {
    log("VIDIOC_STREAMOFF")
  }
}
