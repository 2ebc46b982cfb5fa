import CMediaDevices
import Dispatch
import Synchronization
import WCSMedia
import XCTest

final class V4L2CameraTests: XCTestCase {
  private let fps30 = V4L2FrameInterval(numerator: 1, denominator: 30)
  private let fps10 = V4L2FrameInterval(numerator: 1, denominator: 10)
  private let vga = V4L2Size(width: 640, height: 480)
  private let hd = V4L2Size(width: 1280, height: 720)

  /// A webcam like most UVC ones: YUYV is slow at 720p, MJPEG is not.
  private func webcam() -> FakeV4L2DeviceIO.Device {
    var device = FakeV4L2DeviceIO.Device(
      capability: FakeV4L2DeviceIO.capture("Fake Webcam", bus: "usb-0000:00:14.0-1"))
    device.formats[.yuyv] = [
      V4L2Size(width: 64, height: 48): [fps30], vga: [fps30, fps10], hd: [fps10],
    ]
    device.formats[.mjpeg] = [
      V4L2Size(width: 320, height: 240): [fps30], vga: [fps30], hd: [fps30],
    ]
    return device
  }

  func testFourCCPacksCharactersLittleEndian() {
    // V4L2_PIX_FMT_YUYV = v4l2_fourcc('Y','U','Y','V') = 0x56595559.
    XCTAssertEqual(V4L2FourCC.yuyv.rawValue, 0x5659_5559)
    XCTAssertEqual(V4L2FourCC.mjpeg.rawValue, 0x4750_4A4D)
    XCTAssertEqual(V4L2FourCC(rawValue: 0x3231_5559).description, "YU12")
  }

  func testEnumerationListsCaptureNodesReportsBusyOnesAndCycles() {
    var metadata = FakeV4L2DeviceIO.Device(
      capability: V4L2Capability(
        driver: "uvcvideo", card: "Fake Webcam", busInfo: "usb-1", deviceCapabilities: 0x0080_0000)
    )
    metadata.formats = [:]
    var busy = webcam()
    busy.busy = true
    var second = webcam()
    second.capability = FakeV4L2DeviceIO.capture("Second Cam", bus: "usb-0000:00:14.0-2")
    let io = FakeV4L2DeviceIO(devices: [
      "/dev/video0": webcam(), "/dev/video1": metadata, "/dev/video2": busy,
      "/dev/video3": second,
    ])
    let listing = V4L2CameraEnumerator(io: io).list()
    XCTAssertEqual(listing.cameras.map(\.id), ["/dev/video0", "/dev/video3"])
    XCTAssertEqual(listing.cameras.map(\.label), ["Fake Webcam", "Second Cam"])
    XCTAssertEqual(listing.cameras.first?.busInfo, "usb-0000:00:14.0-1")
    XCTAssertEqual(
      listing.cameras.first?.formats.map(\.pixelFormat).sorted { $0.rawValue < $1.rawValue },
      [.mjpeg, .yuyv])
    XCTAssertEqual(listing.errors, [.busy(path: "/dev/video2")])
    XCTAssertEqual(io.openHandles, 0, "every node opened for the listing is closed again")

    let cams = listing.cameras
    XCTAssertEqual(V4L2CameraEnumerator.nextCamera(after: nil, in: cams)?.id, "/dev/video0")
    XCTAssertEqual(
      V4L2CameraEnumerator.nextCamera(after: "/dev/video0", in: cams)?.id, "/dev/video3")
    XCTAssertEqual(
      V4L2CameraEnumerator.nextCamera(after: "/dev/video3", in: cams)?.id, "/dev/video0")
    XCTAssertNil(V4L2CameraEnumerator.nextCamera(after: "/dev/video0", in: []))
  }

  func testModesListEverySizeAndInterval() throws {
    let io = FakeV4L2DeviceIO(devices: ["/dev/video0": webcam()])
    let modes = try V4L2CameraEnumerator(io: io).modes(path: "/dev/video0")
    let yuyvVGA = modes.filter { $0.pixelFormat == .yuyv && $0.size == vga }
    XCTAssertEqual(Set(yuyvVGA.compactMap(\.interval)), [fps30, fps10])
    XCTAssertEqual(modes.filter { $0.pixelFormat == .mjpeg }.count, 3)
    XCTAssertEqual(modes.count, 7)
  }

  func testClosestModeWeighsSizeThenRateThenFormat() throws {
    let device = webcam()
    func closest(_ w: Int, _ h: Int, _ fps: Double) throws -> V4L2CaptureMode? {
      try V4L2CaptureMode.closest(
        to: V4L2Size(width: w, height: h), framesPerSecond: fps,
        formats: [.yuyv, .mjpeg, V4L2FourCC("H264")],
        sizes: { f throws(V4L2Error) in .discrete(Array((device.formats[f] ?? [:]).keys)) },
        intervals: { f, s throws(V4L2Error) in device.formats[f]?[s] ?? [] })
    }
    // 720p at 30 fps only exists as MJPEG.
    XCTAssertEqual(
      try closest(1280, 720, 30),
      V4L2CaptureMode(pixelFormat: .mjpeg, size: hd, interval: fps30))
    // Both have VGA at 30 fps: the uncompressed one wins.
    XCTAssertEqual(
      try closest(640, 480, 30), V4L2CaptureMode(pixelFormat: .yuyv, size: vga, interval: fps30))
    // 720p at 10 fps: YUYV matches exactly.
    XCTAssertEqual(
      try closest(1280, 720, 10), V4L2CaptureMode(pixelFormat: .yuyv, size: hd, interval: fps10))
    // 800x600 is nearer VGA (|160|+|120|) than 720p (|480|+|120|).
    XCTAssertEqual(try closest(800, 600, 30)?.size, vga)

    let stepwise = try V4L2CaptureMode.closest(
      to: V4L2Size(width: 1000, height: 700), framesPerSecond: 30, formats: [.yuyv],
      sizes: { _ throws(V4L2Error) in
        .stepwise(
          min: V4L2Size(width: 160, height: 120), max: V4L2Size(width: 1920, height: 1080),
          stepWidth: 16, stepHeight: 8)
      },
      intervals: { _, _ throws(V4L2Error) in [] })
    XCTAssertEqual(
      stepwise,
      V4L2CaptureMode(
        pixelFormat: .yuyv, size: V4L2Size(width: 1008, height: 704),
        interval: nil))
    XCTAssertNil(
      try V4L2CaptureMode.closest(
        to: vga, framesPerSecond: 30, formats: [V4L2FourCC("H264")],
        sizes: { _ throws(V4L2Error) in .discrete([V4L2Size(width: 640, height: 480)]) },
        intervals: { _, _ throws(V4L2Error) in [] }))
  }

  func testOpenErrorsAreTypedAndCloseTheNode() {
    var h264Only = FakeV4L2DeviceIO.Device(capability: FakeV4L2DeviceIO.capture("H", bus: "b"))
    h264Only.formats[V4L2FourCC("H264")] = [vga: [fps30]]
    var busy = webcam()
    busy.busy = true
    let metadata = FakeV4L2DeviceIO.Device(
      capability: V4L2Capability(
        driver: "uvcvideo", card: "Meta", busInfo: "b", deviceCapabilities: 0x0080_0000))
    let io = FakeV4L2DeviceIO(devices: [
      "/dev/video0": h264Only, "/dev/video1": busy, "/dev/video2": metadata,
    ])
    func openError(_ path: String) -> V4L2Error? {
      do {
        _ = try V4L2Camera(path: path, io: io)
        return nil
      } catch {
        return error
      }
    }
    XCTAssertEqual(openError("/dev/video9"), .noDevice(path: "/dev/video9"))
    XCTAssertEqual(openError("/dev/video1"), .busy(path: "/dev/video1"))
    XCTAssertEqual(openError("/dev/video2"), .notACaptureDevice(path: "/dev/video2"))
    XCTAssertEqual(openError("/dev/video0"), .noSupportedFormat(path: "/dev/video0"))
    XCTAssertEqual(io.openHandles, 0)
  }

  /// Collects events until `done` says so or 5 s pass.
  private func collect(
    from camera: V4L2Camera, until done: @escaping @Sendable ([V4L2Camera.Event]) -> Bool
  ) throws -> [V4L2Camera.Event] {
    let events = Mutex<[V4L2Camera.Event]>([])
    let finished = DispatchSemaphore(value: 0)
    try camera.start { event in
      let complete = events.withLock {
        $0.append(event)
        return done($0)
      }
      if complete { finished.signal() }
    }
    let result = finished.wait(timeout: .now() + 5)
    camera.stop()
    XCTAssertEqual(result, .success, "capture thread delivered the expected events within 5 s")
    return events.withLock { $0 }
  }

  private func images(_ events: [V4L2Camera.Event]) -> [I420Image] {
    events.compactMap { if case .frame(let image, _, _) = $0 { image } else { nil } }
  }

  func testYUYVFramesBecomeI420ThenUnplugReportsDeviceLost() throws {
    let io = FakeV4L2DeviceIO(devices: ["/dev/video0": webcam()])
    let camera = try V4L2Camera(path: "/dev/video0", width: 64, height: 48, io: io)
    XCTAssertEqual(
      camera.mode,
      V4L2CaptureMode(
        pixelFormat: .yuyv, size: V4L2Size(width: 64, height: 48), interval: fps30))
    // Y ramps with position; U and V are constant per frame, so the 4:2:2 → 4:2:0 average is exact.
    func yuyv(u: UInt8, v: UInt8) -> [UInt8] {
      var bytes: [UInt8] = []
      for row in 0..<48 {
        for pair in 0..<32 {
          bytes += [UInt8(row + 2 * pair), u, UInt8(row + 2 * pair + 1), v]
        }
      }
      return bytes
    }
    io.deliver([.buffer(yuyv(u: 60, v: 200)), .buffer(yuyv(u: 90, v: 240)), .unplug])
    let events = try collect(from: camera) { events in
      if case .deviceLost = events.last { return true }
      return false
    }
    let frames = images(events)
    XCTAssertEqual(frames.count, 2)
    for (frame, (u, v)) in zip(frames, [(UInt8(60), UInt8(200)), (90, 240)]) {
      XCTAssertEqual(frame.width, 64)
      XCTAssertEqual(frame.height, 48)
      XCTAssertEqual(frame.luma(x: 0, row: 0), 0)
      XCTAssertEqual(frame.luma(x: 63, row: 47), 63 + 47)
      XCTAssertEqual(frame.luma(x: 10, row: 5), 15)
      XCTAssertEqual(Set(frame.u), [u])
      XCTAssertEqual(Set(frame.v), [v])
    }
    let sequences = events.compactMap { e -> UInt32? in
      if case .frame(_, _, let sequence) = e { sequence } else { nil }
    }
    XCTAssertEqual(sequences, [0, 1])
    guard case .deviceLost(let path) = events.last else {
      return XCTFail("last event is deviceLost, got \(String(describing: events.last))")
    }
    XCTAssertEqual(path, "/dev/video0")
    XCTAssertFalse(camera.isRunning)

    // Negotiation, then streaming: DQBUF/QBUF pairs, STREAMOFF after the loss.
    let calls = io.calls
    XCTAssertEqual(
      Array(calls.prefix(2)), ["open", "VIDIOC_QUERYCAP"])
    XCTAssertTrue(calls.contains("VIDIOC_S_FMT YUYV 64x48"))
    XCTAssertTrue(calls.contains("VIDIOC_S_PARM 1/30"))
    let streaming = calls.drop { $0 != "VIDIOC_STREAMON" }
    XCTAssertEqual(
      Array(streaming),
      [
        "VIDIOC_STREAMON", "VIDIOC_DQBUF", "VIDIOC_QBUF 0", "VIDIOC_DQBUF", "VIDIOC_QBUF 1",
        "VIDIOC_DQBUF", "VIDIOC_STREAMOFF",
      ])
  }

  func testMJPEGFramesAreDecodedCorruptOnesDroppedAndScaledToTheNegotiatedSize() throws {
    let io = FakeV4L2DeviceIO(devices: ["/dev/video0": webcam()])
    let camera = try V4L2Camera(path: "/dev/video0", width: 320, height: 240, io: io)
    XCTAssertEqual(camera.mode.pixelFormat, .mjpeg)
    let source = VirtualCamera(width: 320, height: 240).frame(7)
    let jpeg420 = JPEGTestEncoder.jpeg(from: source, subsampling: TJSAMP_420)
    let jpeg422 = JPEGTestEncoder.jpeg(from: source, subsampling: TJSAMP_422)
    // A camera that sends 640x480 JPEGs while set to 320x240 still yields 320x240 pictures.
    let big = VirtualCamera(width: 640, height: 480).frame(7)
    let jpegBig = JPEGTestEncoder.jpeg(from: big, subsampling: TJSAMP_420)
    XCTAssertGreaterThan(jpeg420.count, 1000)
    XCTAssertEqual(Array(jpeg420.prefix(2)), [0xFF, 0xD8], "JPEG SOI marker")
    io.deliver([
      .buffer(jpeg420), .buffer([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]), .buffer(jpeg422),
      .buffer(jpegBig),
    ])
    let events = try collect(from: camera) { $0.count == 4 }
    XCTAssertEqual(events.count, 4)
    guard case .droppedFrame(.badFrame) = events[1] else {
      return XCTFail("a corrupt JPEG is dropped with badFrame, got \(events[1])")
    }
    let frames = images(events)
    XCTAssertEqual(frames.count, 3)
    for frame in frames.prefix(2) {
      let psnr = try XCTUnwrap(frame.psnr(to: source))
      XCTAssertGreaterThan(psnr, 30, "decoded MJPEG matches the source picture")
    }
    XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: frames[0]), 7)
    let scaled = try XCTUnwrap(frames.last)
    XCTAssertEqual([scaled.width, scaled.height], [320, 240])
    let expected = try XCTUnwrap(big.scaled(toWidth: 320, height: 240))
    XCTAssertGreaterThan(try XCTUnwrap(scaled.psnr(to: expected)), 28)
  }
}
