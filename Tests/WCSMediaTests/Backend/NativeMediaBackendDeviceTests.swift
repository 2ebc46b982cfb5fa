import Foundation
import Synchronization
import XCTest

@testable import WCSCodecs
@testable import WCSDevices
@testable import WCSEngine
@testable import WCSMedia
@testable import WCSMediaSeam

/// Real devices in the native engine: a scripted V4L2 camera (`FakeV4L2DeviceIO`) listed,
/// published, switched and unplugged; missing and busy cameras refused with their reason.
final class NativeMediaBackendDeviceTests: XCTestCase {
  private static let qvga = V4L2Size(width: 320, height: 240)
  private static let fps30 = V4L2FrameInterval(numerator: 1, denominator: 30)

  private static func webcam(busy: Bool = false) -> FakeV4L2DeviceIO.Device {
    var device = FakeV4L2DeviceIO.Device(
      capability: FakeV4L2DeviceIO.capture("Fake Webcam", bus: "usb-1"))
    device.formats[.yuyv] = [qvga: [fps30]]
    device.busy = busy
    return device
  }

  /// One flat YUYV picture of 320x240: every Y is `luma`, U = V = 128 (grey).
  private static func greyPicture(luma: UInt8) -> [UInt8] {
    Array(repeating: [luma, 128, luma, 128], count: 160 * 240).flatMap { $0 }
  }

  private static func call(io: FakeV4L2DeviceIO, deviceID: String?) throws -> LoopbackCall {
    try LoopbackCall(
      publish: MediaConnectionRequest(
        direction: .publish, audio: nil,
        video: .init(deviceID: deviceID, maxWidth: 320, maxHeight: 240, maxFrameRate: 30))
    ) { configuration in
      var configuration = configuration
      configuration.systemDevices = NativeSystemDevices(videoIO: io, listsMicrophones: false)
      return NativeMediaBackend(configuration: configuration)
    }
  }

  /// Feeds grey pictures (one per 33 ms) until `condition` holds or 20 s pass.
  private func feed(
    _ io: FakeV4L2DeviceIO, luma: UInt8, until condition: () -> Bool,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    let deadline = Date().addingTimeInterval(20)
    let picture = Self.greyPicture(luma: luma)
    while !condition() {
      guard Date() < deadline else { return XCTFail("timed out", file: file, line: line) }
      io.deliver([.buffer(picture)])
      Thread.sleep(forTimeInterval: 0.033)
    }
  }

  private static func meanLuma(_ frame: VideoFrame) -> Double {
    guard let image = I420Image(frame), !image.y.isEmpty else { return -1 }
    return Double(image.y.reduce(0) { $0 + Int($1) }) / Double(image.y.count)
  }

  /// The camera is listed as `v4l2:/dev/video0`; publishing it delivers its grey pictures to
  /// the player; `switchCamera` cycles to the virtual camera and back; unplugging fails the
  /// publisher with the camera's reason.
  func testFakeCameraIsListedPublishedSwitchedAndLost() throws {
    let io = FakeV4L2DeviceIO(devices: ["/dev/video0": Self.webcam()])
    let call = try Self.call(io: io, deviceID: "v4l2:/dev/video0")
    defer { call.close() }
    XCTAssertEqual(
      call.backend.devices(),
      [
        NativeMediaDevices.virtualCamera, NativeMediaDevices.virtualMicrophone,
        CaptureDevice(kind: .video, id: "v4l2:/dev/video0", label: "Fake Webcam"),
      ])
    XCTAssertEqual(
      call.backend.supportedVideoFormats(deviceID: "v4l2:/dev/video0"),
      [VideoCaptureFormat(width: 320, height: 240)])
    try call.connectPublisher(self)
    try call.connectPlayer(self)
    XCTAssertTrue(io.calls.contains("VIDIOC_S_FMT YUYV 320x240"))

    feed(io, luma: 180) { call.frames.value.count >= 5 }
    let camera = try XCTUnwrap(call.frames.value.last)
    XCTAssertEqual(camera.width, 320)
    XCTAssertEqual(Self.meanLuma(camera), 180, accuracy: 4, "the camera's grey, through VP8")
    // Flat grey carries no counter; whatever it decodes to is not a sequence of pictures.
    let greyNumbers = Set(call.frameNumbers)

    try call.publisher.switchCamera()
    waitForBackend("virtual camera after the switch") {
      Set(call.frameNumbers).subtracting(greyNumbers).count >= 3
    }
    try call.publisher.switchCamera()
    let before = call.frames.value.count
    feed(io, luma: 60) {
      call.frames.value.dropFirst(before).contains { abs(Self.meanLuma($0) - 60) < 4 }
    }

    io.deliver([.unplug])
    waitForBackend("publisher failed") { call.publishStates.value.last?.isFailed == true }
    let reason = try XCTUnwrap(call.publisher.failureReason)
    XCTAssertTrue(reason.contains("/dev/video0") && reason.contains("lost"), reason)
    XCTAssertEqual(
      call.publishStates.value.last, .failed(.captureDeviceLost(.video, reason)),
      "the failure says the camera was lost, with the device layer's reason")
    XCTAssertEqual(
      call.publishStates.value.filter(\.isFailed).count, 1, "the failure is reported once")
  }

  /// A camera that does not exist or that another program streams from fails the offer with
  /// `.deviceUnavailable` naming the node and the reason.
  func testMissingAndBusyCamerasAreRefusedWithTheirReason() throws {
    let io = FakeV4L2DeviceIO(devices: ["/dev/video1": Self.webcam(busy: true)])
    for (id, word) in [("v4l2:/dev/video7", "noDevice"), ("v4l2:/dev/video1", "busy")] {
      let call = try Self.call(io: io, deviceID: id)
      defer { call.close() }
      XCTAssertThrowsError(try offer(of: call.publisher)) { error in
        guard case .deviceUnavailable(let reason) = error as? MediaBackendError else {
          return XCTFail("\(error)")
        }
        XCTAssertTrue(reason.contains(String(id.dropFirst(5))), reason)
        XCTAssertTrue(reason.contains(word), reason)
      }
    }
    XCTAssertEqual(io.openHandles, 0)
  }
}
