import Foundation
import WCSMedia
import XCTest

/// PNG and JPEG files of I420 pictures (libpng, libturbojpeg) and the keeper of the last frame.
final class PictureFileTests: XCTestCase {
  func testPNGRoundTripKeepsThePicture() throws {
    let source = VirtualCamera(width: 320, height: 240).frame(77)
    let png = try PictureFile.png(source)
    XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
    let back = try PictureFile.decodePNG(png)
    XCTAssertEqual([back.width, back.height], [320, 240])
    XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: back), 77)
    // Only the YUV → RGB → YUV round trip (8-bit, chroma re-averaged) separates them.
    XCTAssertGreaterThan(try XCTUnwrap(back.psnr(to: source)), 34)
  }

  func testJPEGHoldsThePictureAtItsQuality() throws {
    let source = VirtualCamera(width: 320, height: 240).frame(5)
    let good = try PictureFile.jpeg(source, quality: 95)
    let poor = try PictureFile.jpeg(source, quality: 10)
    XCTAssertLessThan(poor.count, good.count)
    let decoded = try MJPEGDecoder().decode(good)
    XCTAssertGreaterThan(try XCTUnwrap(decoded.psnr(to: source)), 35)
    XCTAssertEqual(VirtualCamera.decodeFrameNumber(from: decoded), 5)
  }

  func testBadPNGInputIsAClearError() {
    XCTAssertThrowsError(try PictureFile.decodePNG([1, 2, 3])) { error in
      guard case .decodingFailed = error as? PictureFileError else { return XCTFail("\(error)") }
    }
    // A valid header claiming 100000 x 100000 pixels is refused before any allocation.
    var png = (try? PictureFile.png(I420Image(width: 8, height: 8))) ?? []
    png.replaceSubrange(16..<24, with: [0, 1, 0x86, 0xA0, 0, 1, 0x86, 0xA0])
    XCTAssertThrowsError(try PictureFile.decodePNG(png)) { error in
      guard case .decodingFailed = error as? PictureFileError else { return XCTFail("\(error)") }
    }
  }

  func testLastFrameRendererKeepsACopyOfTheNewestFrame() throws {
    let seen = LastFrameRenderer()
    XCTAssertNil(try seen.snapshot())
    let camera = VirtualCamera(width: 64, height: 32)
    for n in 0..<3 {
      let image = camera.frame(n)
      seen.render(
        VideoFrame(
          width: 64, height: 32, dataY: Data(image.y), dataU: Data(image.u), dataV: Data(image.v),
          strideY: image.strideY, strideU: image.strideU, strideV: image.strideV,
          timestampNs: Int64(n)))
    }
    XCTAssertEqual(seen.lastPicture, camera.frame(2))
    XCTAssertEqual(seen.lastFrame?.timestampNs, 2)
    let png = try XCTUnwrap(try seen.snapshot(as: .png))
    XCTAssertEqual(try PictureFile.decodePNG(png).width, 64)
  }
}
