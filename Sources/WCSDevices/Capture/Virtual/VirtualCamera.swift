import Foundation
import WCSCodecs

/// A deterministic synthetic camera: picture `n` depends only on `n` and the size, so a receiver can
/// regenerate what was sent and compare.
///
/// The picture is a moving colour pattern (smooth luma waves, chroma ramps, a bright square that
/// moves 4 px per frame) with a band at the top holding the frame number: 32 blocks, most significant
/// bit first, black (Y=16) for 0 and white (Y=235) for 1. Blocks are 16x16 pixels when the width
/// allows (>= 512 px), else `width / 32` (at least 2). `decodeFrameNumber(from:)` reads it back; it
/// survives VP8 at the qualities WebRTC uses (>= 30 dB PSNR).
public struct VirtualCamera: Sendable {
  /// Picture width in pixels, >= 64.
  public let width: Int
  /// Picture height in pixels, >= 32.
  public let height: Int
  /// Frames per second; frame `n` is captured at `n / frameRate` seconds.
  public let frameRate: Int

  /// A camera of the given size.
  /// - Parameters:
  ///   - width: pixels, clamped to at least 64.
  ///   - height: pixels, clamped to at least 32.
  ///   - frameRate: frames per second, at least 1.
  public init(width: Int = 640, height: Int = 480, frameRate: Int = 30) {
    self.width = max(64, width)
    self.height = max(32, height)
    self.frameRate = max(1, frameRate)
  }

  /// Side of one frame-number block in pixels.
  public var blockSize: Int { Self.blockSize(forWidth: width) }

  static func blockSize(forWidth width: Int) -> Int { max(2, min(16, width / 32)) }

  /// 90 kHz RTP timestamp of frame `index` (RFC 7741 §4.1): `index * 90000 / frameRate`.
  public func rtpTimestamp(frameIndex index: Int) -> UInt32 {
    UInt32(truncatingIfNeeded: Int64(index) * 90_000 / Int64(frameRate))
  }

  /// Picture number `index` (only the low 32 bits are encoded in the picture).
  public func frame(_ index: Int) -> I420Image {
    var image = I420Image(width: width, height: height)
    let n = index & 0x7FFF_FFFF
    // Sums of a column wave and a row wave keep the pattern smooth (codec friendly) yet moving.
    let columnWave = (0..<width).map { x in
      50 * sin(Double(x + 3 * n) * 2 * Double.pi / 97)
    }
    let rowWave = (0..<height).map { row in
      40 * cos(Double(row + 2 * n) * 2 * Double.pi / 71)
    }
    let square = 48
    let squareX = (n * 4) % max(1, width - square)
    let squareY = blockSize * 2 + (n * 2) % max(1, height - square - blockSize * 2)
    image.y.withUnsafeMutableBufferPointer { plane in
      for row in 0..<height {
        let base = row * width
        let inSquareRow = row >= squareY && row < squareY + square
        for x in 0..<width {
          var value = 128 + columnWave[x] + rowWave[row]
          if inSquareRow, x >= squareX, x < squareX + square { value = 220 }
          plane[base + x] = UInt8(max(16, min(235, value)))
        }
      }
    }
    let cw = image.chromaWidth
    let ch = image.chromaHeight
    image.u.withUnsafeMutableBufferPointer { plane in
      for row in 0..<ch {
        for x in 0..<cw {
          plane[row * cw + x] = UInt8(64 + ((x + n) * 128 / cw) % 128)
        }
      }
    }
    image.v.withUnsafeMutableBufferPointer { plane in
      for row in 0..<ch {
        for x in 0..<cw {
          plane[row * cw + x] = UInt8(64 + ((row + 2 * n) * 128 / ch) % 128)
        }
      }
    }
    stamp(UInt32(truncatingIfNeeded: index), into: &image)
    return image
  }

  private func stamp(_ number: UInt32, into image: inout I420Image) {
    let size = blockSize
    // A mid-grey band under the blocks keeps the moving pattern's edges away from them.
    let bandRows = min(height, size + size / 2)
    for row in 0..<bandRows {
      for x in 0..<width { image.setLuma(x: x, row: row, 128) }
    }
    let cw = image.chromaWidth
    for row in 0..<(bandRows + 1) / 2 {
      for x in 0..<cw {
        image.u[row * image.strideU + x] = 128
        image.v[row * image.strideV + x] = 128
      }
    }
    for bit in 0..<32 {
      let one = (number >> UInt32(31 - bit)) & 1 == 1
      let value: UInt8 = one ? 235 : 16
      for row in 0..<size {
        for x in bit * size..<(bit + 1) * size { image.setLuma(x: x, row: row, value) }
      }
    }
  }

  /// Reads the frame number stamped by `frame(_:)` from a (possibly decoded, lossy) picture: the mean
  /// luma of the inner half of each block, thresholded at 128.
  /// - Returns: nil when the picture is too small or a block is ambiguous (mean within 40 of 128),
  ///   which means it is not one of ours or is badly damaged.
  public static func decodeFrameNumber(from image: I420Image) -> UInt32? {
    let size = blockSize(forWidth: image.width)
    guard image.width >= 32 * size, image.height >= size else { return nil }
    let inset = size / 4
    var number: UInt32 = 0
    for bit in 0..<32 {
      var sum = 0
      var count = 0
      for row in inset..<(size - inset) {
        for x in (bit * size + inset)..<((bit + 1) * size - inset) {
          sum += Int(image.luma(x: x, row: row))
          count += 1
        }
      }
      guard count > 0 else { return nil }
      let mean = sum / count
      guard abs(mean - 128) > 40 else { return nil }
      number = number << 1 | (mean > 128 ? 1 : 0)
    }
    return number
  }
}
