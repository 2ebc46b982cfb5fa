import XCTest

@testable import WCSCodecs
@testable import WCSMedia

final class I420ConversionTests: XCTestCase {
  private func gradient(width: Int, height: Int) -> I420Image {
    var image = I420Image(width: width, height: height)
    for row in 0..<height {
      for x in 0..<width { image.y[row * width + x] = UInt8((x / 3 + row / 2) % 256) }
    }
    for row in 0..<image.chromaHeight {
      for x in 0..<image.chromaWidth {
        image.u[row * image.strideU + x] = UInt8(x % 256)
        image.v[row * image.strideV + x] = UInt8((row * 2) % 256)
      }
    }
    return image
  }

  func testHalfScaleBoxFilterAveragesTwoByTwoBlocks() throws {
    let source = gradient(width: 640, height: 480)
    let half = try XCTUnwrap(source.scaled(toWidth: 320, height: 240))
    XCTAssertEqual(half.width, 320)
    XCTAssertEqual(half.height, 240)
    for (x, row) in [(0, 0), (10, 7), (100, 50), (319, 239), (255, 128)] {
      let sum =
        Int(source.luma(x: 2 * x, row: 2 * row)) + Int(source.luma(x: 2 * x + 1, row: 2 * row))
        + Int(source.luma(x: 2 * x, row: 2 * row + 1))
        + Int(source.luma(x: 2 * x + 1, row: 2 * row + 1))
      XCTAssertEqual(Double(half.luma(x: x, row: row)), Double(sum) / 4, accuracy: 0.75)
    }
    // Means survive the box filter.
    let sourceMean = Double(source.y.reduce(0) { $0 + Int($1) }) / Double(source.y.count)
    let halfMean = Double(half.y.reduce(0) { $0 + Int($1) }) / Double(half.y.count)
    XCTAssertEqual(halfMean, sourceMean, accuracy: 0.5)
    XCTAssertEqual(Double(half.u[half.strideU * 10 + 40]), 80.5, accuracy: 0.51)
    XCTAssertEqual(Double(half.v[half.strideV * 10 + 40]), 41, accuracy: 0.51)
    XCTAssertNil(source.scaled(toWidth: 0, height: 10))
  }

  func testARGBConversionOfPrimaries() throws {
    // Pixels as B, G, R, A bytes: white, black, red, pure green across 4x2 pixel blocks.
    let colours: [[UInt8]] = [
      [255, 255, 255, 255], [0, 0, 0, 255], [0, 0, 255, 255], [0, 255, 0, 255],
    ]
    var pixels: [UInt8] = []
    for _ in 0..<2 {
      for colour in colours { pixels += colour + colour }
    }
    let image = try XCTUnwrap(I420Image.fromARGB(pixels, width: 8, height: 2))
    // BT.601 limited range: white Y=235, black 16, red ≈ 81, green ≈ 145.
    XCTAssertEqual(Int(image.luma(x: 0, row: 0)), 235, accuracy: 1)
    XCTAssertEqual(Int(image.luma(x: 2, row: 1)), 16, accuracy: 1)
    XCTAssertEqual(Int(image.luma(x: 4, row: 0)), 82, accuracy: 2)
    XCTAssertEqual(Int(image.luma(x: 6, row: 0)), 145, accuracy: 2)
    XCTAssertEqual(Int(image.v[2]), 240, accuracy: 2)  // red has the largest Cr
    XCTAssertNil(I420Image.fromARGB([0, 0, 0], width: 8, height: 2))
    // And back: red stays red.
    let argb = try XCTUnwrap(image.argb())
    XCTAssertEqual(Int(argb[4 * 4 + 2]), 255, accuracy: 6)
    XCTAssertEqual(Int(argb[4 * 4 + 1]), 0, accuracy: 6)
  }

  func testYUY2Conversion() throws {
    // Two pixels per 4 bytes: Y0 U Y1 V.
    let yuy2: [UInt8] =
      [50, 100, 60, 200, 70, 110, 80, 210] + [52, 100, 62, 200, 72, 110, 82, 210]
    let image = try XCTUnwrap(I420Image.fromYUY2(yuy2, width: 4, height: 2))
    XCTAssertEqual(image.y, [50, 60, 70, 80, 52, 62, 72, 82])
    XCTAssertEqual(image.u, [100, 110])
    XCTAssertEqual(image.v, [200, 210])
  }

  func testPSNR() throws {
    let a = I420Image.black(width: 16, height: 16)
    XCTAssertEqual(a.psnr(to: a), .infinity)
    var b = a
    for i in 0..<b.y.count { b.y[i] = 26 }  // error 10 on 256 of 384 samples: MSE 66.67
    XCTAssertEqual(
      try XCTUnwrap(b.psnr(to: a)), 10 * log10(255.0 * 255.0 / (100.0 * 256 / 384)), accuracy: 1e-9)
    XCTAssertNil(a.psnr(to: I420Image.black(width: 8, height: 8)))
  }
}
