import Foundation
import WCSMedia
import XCTest

/// The real ioctl layer on nodes every Linux machine has, so its error paths run without a camera.
final class V4L2KernelIOTests: XCTestCase {
  func testDevicePathsAreVideoNodesInNumericOrder() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
      "wcs-v4l2-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    for name in ["video10", "video2", "video0", "videoX", "media0", "vbi0"] {
      XCTAssertTrue(FileManager.default.createFile(atPath: dir.path + "/" + name, contents: nil))
    }
    XCTAssertEqual(
      V4L2KernelIO(deviceDirectory: dir.path).devicePaths(),
      ["video0", "video2", "video10"].map { dir.path + "/" + $0 })
  }

  func testMissingNodeAndNonVideoNodeGiveTypedErrors() throws {
    let io = V4L2KernelIO()
    XCTAssertThrowsError(try io.openDevice(path: "/nonexistent/video0")) { error in
      XCTAssertEqual(error as? V4L2Error, .noDevice(path: "/nonexistent/video0"))
    }
    // /dev/null opens but answers no V4L2 ioctl (ENOTTY).
    XCTAssertThrowsError(try V4L2Camera(path: "/dev/null", io: io)) { error in
      XCTAssertEqual(error as? V4L2Error, .systemCall(name: "VIDIOC_QUERYCAP", errno: ENOTTY))
    }
    let handle = try io.openDevice(path: "/dev/null")
    defer { io.closeDevice(handle) }
    XCTAssertEqual(try io.formats(handle), [], "ENOTTY on ENUM_FMT ends the enumeration")
    XCTAssertThrowsError(try io.startStreaming(handle, bufferCount: 4)) { error in
      XCTAssertEqual(error as? V4L2Error, .systemCall(name: "VIDIOC_REQBUFS", errno: ENOTTY))
    }
  }
}
