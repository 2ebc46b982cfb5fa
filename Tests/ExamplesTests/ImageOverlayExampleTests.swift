import ExampleSupport
import Foundation
import WCSMedia
import XCTest

/// ImageOverlay end to end: a PNG composited by the custom `FPWCSVideoCapturer` over the
/// virtual camera's frames is published, played back and written to Y4M; the played frames
/// decode to the PNG's pixels where it was laid, and to the camera's picture elsewhere.
final class ImageOverlayExampleTests: XCTestCase {
  /// A 96x48 picture unlike the camera's pattern: a diagonal gradient with a dark cross.
  private func overlayPicture() -> I420Image {
    var picture = I420Image(width: 96, height: 48)
    for row in 0..<48 {
      for column in 0..<96 {
        let cross = abs(row - 24) < 3 || abs(column - 48) < 3
        picture.y[row * picture.strideY + column] = cross ? 20 : UInt8(60 + (row + column))
      }
    }
    for row in 0..<picture.chromaHeight {
      for column in 0..<picture.chromaWidth {
        picture.u[row * picture.strideU + column] = UInt8(200 - column)
        picture.v[row * picture.strideV + column] = UInt8(60 + row * 2)
      }
    }
    return picture
  }

  func testPlayedFramesCarryTheOverlayWhereItWasLaid() throws {
    let out = try ExampleRunner.temporaryDirectory("image-overlay")
    let png = try PictureFile.png(overlayPicture())
    let pngPath = out + "/overlay.png"
    try Data(png).write(to: URL(fileURLWithPath: pngPath))
    let result = try ExampleRunner.run(
      "ImageOverlay",
      [
        "--image", pngPath, "--x", "32", "--y", "64", "--width", "320", "--height", "240",
        "--duration", "3", "--publish", "overlaid", "--out", out,
      ])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Result"], "OK", result.output)
    XCTAssertEqual(result.summary["Overlay"], "96x48 at 32,64, opacity 1.0")
    XCTAssertGreaterThan(ExampleSummary.number(result.summary["Frames composited"]) ?? 0, 60)
    XCTAssertGreaterThan(ExampleSummary.number(result.summary["Frames played"]) ?? 0, 45)

    // What went into the picture: the PNG as the example decoded it.
    let sent = try PictureFile.decodePNG(png)
    let path = try XCTUnwrap(result.summary["Played video written to"])
    let video = try Y4MFile(url: URL(fileURLWithPath: path))
    XCTAssertEqual([video.width, video.height], [320, 240])
    let played = try XCTUnwrap(video.frames.dropFirst(video.frames.count / 2).first)
    let region = try XCTUnwrap(
      ImageOverlay.region(of: played, x: 32, y: 64, width: 96, height: 48))
    let overlayPSNR = try XCTUnwrap(region.psnr(to: sent))
    XCTAssertGreaterThan(overlayPSNR, 30, "the overlay's pixels came back (\(overlayPSNR) dB)")

    // Elsewhere the frame is the camera's: its frame number reads back, and the whole frame
    // matches that camera frame with the overlay laid on it.
    let number = try XCTUnwrap(VirtualCamera.decodeFrameNumber(from: played))
    let camera = VirtualCamera(width: 320, height: 240, frameRate: 30).frame(Int(number))
    let cameraRegion = try XCTUnwrap(
      ImageOverlay.region(of: camera, x: 32, y: 64, width: 96, height: 48))
    let underPSNR = try XCTUnwrap(region.psnr(to: cameraRegion))
    XCTAssertLessThan(underPSNR, 20, "the camera does not show through (\(underPSNR) dB)")
    let expected = try ImageOverlay(image: sent, x: 32, y: 64).apply(to: camera)
    let framePSNR = try XCTUnwrap(played.psnr(to: expected))
    XCTAssertGreaterThan(framePSNR, 30, "frame \(number) against camera + overlay")
  }

  /// Frames from a media file instead of the camera, with the built-in badge.
  func testOverlayOverAMediaFile() throws {
    let movie = "/usr/share/forensics-samples/original-files/movie2/movie-hello.mp4"
    try XCTSkipUnless(
      FileManager.default.fileExists(atPath: movie),
      "forensics-samples-files is not installed (scripts/install-deps.sh test)")
    let out = try ExampleRunner.temporaryDirectory("image-overlay-file")
    let result = try ExampleRunner.run(
      "ImageOverlay",
      ["--file", movie, "--width", "320", "--height", "180", "--duration", "2", "--out", out])
    XCTAssertEqual(result.status, 0, result.output)
    XCTAssertEqual(result.summary["Overlay"], "128x64 at 176,100, opacity 1.0")
    XCTAssertGreaterThan(
      ExampleSummary.number(result.summary["Overlay PSNR (last played frame)"]) ?? 0, 30,
      result.output)
  }

  func testHalfOpacityBlendsAndTheEdgeCutsThePicture() throws {
    let frame = I420Image(width: 64, height: 32, y: 100, u: 100, v: 200)
    let picture = I420Image(width: 16, height: 8, y: 200, u: 50, v: 100)
    let half = try ImageOverlay(image: picture, x: 56, y: 28, opacity: 0.5).apply(to: frame)
    // (200 + 100) / 2 inside the 8x4 that fit; untouched outside.
    XCTAssertEqual(half.y[30 * half.strideY + 60], 150)
    XCTAssertEqual(half.y[30 * half.strideY + 54], 100)
    XCTAssertEqual(half.u[15 * half.strideU + 30], 75)
    XCTAssertEqual(half.v[15 * half.strideV + 30], 150)
    XCTAssertEqual(half.v[13 * half.strideV + 30], 200)
    let none = try ImageOverlay(image: picture, x: 0, y: 0, opacity: 0).apply(to: frame)
    XCTAssertEqual(none, frame)
    XCTAssertThrowsError(try ImageOverlay(image: picture, x: 3, y: 0))
    XCTAssertThrowsError(try ImageOverlay(image: picture, x: 0, y: 0, opacity: 1.5))
  }

  func testAnOddPositionOrAMissingImageIsAUsageError() throws {
    let odd = try ExampleRunner.run("ImageOverlay", ["--x", "3"])
    XCTAssertEqual(odd.status, 64, odd.output)
    XCTAssertTrue(odd.output.contains("even, non-negative"), odd.output)
    let missing = try ExampleRunner.run("ImageOverlay", ["--image", "/nonexistent.png"])
    XCTAssertEqual(missing.status, 64, missing.output)
    XCTAssertTrue(missing.output.contains("cannot read /nonexistent.png"), missing.output)
  }
}
