import Foundation

/// A picture in I420 (planar YUV 4:2:0, BT.601 limited range): a full-size Y plane and U, V planes
/// of `(width + 1) / 2` x `(height + 1) / 2` samples.
///
/// This is the picture type of the codec layer (VP8 input and output, virtual camera, Y4M files);
/// the API's `VideoFrame` wraps it.
public struct I420Image: Sendable, Equatable {
  /// Width of the picture in pixels (luma samples per row), > 0.
  public let width: Int
  /// Height of the picture in pixels (luma rows), > 0.
  public let height: Int
  /// Luma samples, `strideY * height` bytes; row `r` starts at `r * strideY`.
  public var y: [UInt8]
  /// Cb samples, `strideU * chromaHeight` bytes.
  public var u: [UInt8]
  /// Cr samples, `strideV * chromaHeight` bytes.
  public var v: [UInt8]
  /// Bytes from one luma row to the next, >= `width`.
  public let strideY: Int
  /// Bytes from one Cb row to the next, >= `chromaWidth`.
  public let strideU: Int
  /// Bytes from one Cr row to the next, >= `chromaWidth`.
  public let strideV: Int

  /// Width of the U and V planes: `(width + 1) / 2`.
  public var chromaWidth: Int { (width + 1) / 2 }
  /// Height of the U and V planes: `(height + 1) / 2`.
  public var chromaHeight: Int { (height + 1) / 2 }

  /// A picture filled with one colour (default: black, Y=16 U=V=128) and tight strides.
  /// - Parameters:
  ///   - width: pixels, clamped to at least 1.
  ///   - height: pixels, clamped to at least 1.
  ///   - y: luma of every pixel (BT.601 limited range, 16 = black).
  ///   - u: Cb of every pixel (128 = no colour).
  ///   - v: Cr of every pixel (128 = no colour).
  public init(width: Int, height: Int, y: UInt8 = 16, u: UInt8 = 128, v: UInt8 = 128) {
    let w = max(1, width)
    let h = max(1, height)
    self.width = w
    self.height = h
    strideY = w
    strideU = (w + 1) / 2
    strideV = (w + 1) / 2
    self.y = [UInt8](repeating: y, count: w * h)
    self.u = [UInt8](repeating: u, count: ((w + 1) / 2) * ((h + 1) / 2))
    self.v = [UInt8](repeating: v, count: ((w + 1) / 2) * ((h + 1) / 2))
  }

  /// A picture from planes with explicit strides.
  /// - Returns: nil when a size or stride is not positive or a plane is shorter than
  ///   `stride * rows` bytes.
  public init?(
    width: Int, height: Int, y: [UInt8], strideY: Int, u: [UInt8], strideU: Int, v: [UInt8],
    strideV: Int
  ) {
    guard width > 0, height > 0 else { return nil }
    let cw = (width + 1) / 2
    let ch = (height + 1) / 2
    guard strideY >= width, strideU >= cw, strideV >= cw,
      y.count >= strideY * height, u.count >= strideU * ch, v.count >= strideV * ch
    else { return nil }
    self.width = width
    self.height = height
    self.y = y
    self.u = u
    self.v = v
    self.strideY = strideY
    self.strideU = strideU
    self.strideV = strideV
  }

  /// A black picture (Y=16, U=V=128, BT.601 limited range).
  public static func black(width: Int, height: Int) -> I420Image {
    I420Image(width: width, height: height)
  }

  /// Luma sample at column `x`, row `row`; 0 outside the picture.
  public func luma(x: Int, row: Int) -> UInt8 {
    guard x >= 0, x < width, row >= 0, row < height else { return 0 }
    return y[row * strideY + x]
  }

  /// Sets the luma sample at column `x`, row `row`; ignored outside the picture.
  public mutating func setLuma(x: Int, row: Int, _ value: UInt8) {
    guard x >= 0, x < width, row >= 0, row < height else { return }
    y[row * strideY + x] = value
  }

  /// The picture with tight strides (stride == plane width): the layout Y4M files use.
  public func packed() -> I420Image {
    if strideY == width, strideU == chromaWidth, strideV == chromaWidth { return self }
    var out = I420Image(width: width, height: height)
    for r in 0..<height {
      out.y.replaceSubrange(
        r * width..<(r + 1) * width, with: y[r * strideY..<r * strideY + width])
    }
    for r in 0..<chromaHeight {
      let cw = chromaWidth
      out.u.replaceSubrange(r * cw..<(r + 1) * cw, with: u[r * strideU..<r * strideU + cw])
      out.v.replaceSubrange(r * cw..<(r + 1) * cw, with: v[r * strideV..<r * strideV + cw])
    }
    return out
  }

  /// The planes back to back (Y, U, V) with tight strides: `width*height + 2*chromaWidth*chromaHeight`
  /// bytes.
  public var packedBytes: [UInt8] {
    let p = packed()
    return p.y + p.u + p.v
  }

  /// Peak signal-to-noise ratio in dB over all three planes against `other` (peak 255):
  /// `10 log10(255² / MSE)`.
  /// - Returns: `.infinity` for identical pictures, nil when the sizes differ.
  public func psnr(to other: I420Image) -> Double? {
    guard width == other.width, height == other.height else { return nil }
    var sum: UInt64 = 0
    var count = 0
    func add(_ a: [UInt8], _ sa: Int, _ b: [UInt8], _ sb: Int, _ w: Int, _ h: Int) {
      for r in 0..<h {
        let ra = r * sa
        let rb = r * sb
        for c in 0..<w {
          let d = Int(a[ra + c]) - Int(b[rb + c])
          sum &+= UInt64(d * d)
        }
      }
      count += w * h
    }
    add(y, strideY, other.y, other.strideY, width, height)
    add(u, strideU, other.u, other.strideU, chromaWidth, chromaHeight)
    add(v, strideV, other.v, other.strideV, chromaWidth, chromaHeight)
    guard sum > 0 else { return .infinity }
    let mse = Double(sum) / Double(count)
    return 10 * log10(255 * 255 / mse)
  }
}
