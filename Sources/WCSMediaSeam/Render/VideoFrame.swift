import Foundation

/// One uncompressed video picture in I420 (YUV 4:2:0 planar, BT.601 limited range): a full-size
/// luma plane followed by two chroma planes of `(width + 1) / 2` × `(height + 1) / 2` samples.
public struct VideoFrame: Sendable, Equatable {
  /// Picture width in pixels (> 0).
  public var width: Int
  /// Picture height in pixels (> 0).
  public var height: Int
  /// Luma plane, `strideY * height` bytes at least.
  public var dataY: Data
  /// Cb plane, `strideU * chromaHeight` bytes at least.
  public var dataU: Data
  /// Cr plane, `strideV * chromaHeight` bytes at least.
  public var dataV: Data
  /// Bytes from one luma row to the next (≥ `width`).
  public var strideY: Int
  /// Bytes from one Cb row to the next (≥ `chromaWidth`).
  public var strideU: Int
  /// Bytes from one Cr row to the next (≥ `chromaWidth`).
  public var strideV: Int
  /// Capture time in nanoseconds on a monotonic clock; only differences are meaningful.
  public var timestampNs: Int64

  /// Creates a frame from planes the caller already filled.
  public init(
    width: Int, height: Int, dataY: Data, dataU: Data, dataV: Data, strideY: Int, strideU: Int,
    strideV: Int, timestampNs: Int64
  ) {
    self.width = width
    self.height = height
    self.dataY = dataY
    self.dataU = dataU
    self.dataV = dataV
    self.strideY = strideY
    self.strideU = strideU
    self.strideV = strideV
    self.timestampNs = timestampNs
  }

  /// Creates a tightly packed frame filled with one colour (defaults: black, `Y=16, U=V=128`).
  public init(
    width: Int, height: Int, y: UInt8 = 16, u: UInt8 = 128, v: UInt8 = 128, timestampNs: Int64 = 0
  ) {
    let chromaWidth = (width + 1) / 2
    let chromaHeight = (height + 1) / 2
    self.init(
      width: width, height: height, dataY: Data(repeating: y, count: width * height),
      dataU: Data(repeating: u, count: chromaWidth * chromaHeight),
      dataV: Data(repeating: v, count: chromaWidth * chromaHeight), strideY: width,
      strideU: chromaWidth, strideV: chromaWidth, timestampNs: timestampNs)
  }

  /// Width of the chroma planes: `(width + 1) / 2`.
  public var chromaWidth: Int { (width + 1) / 2 }
  /// Height of the chroma planes: `(height + 1) / 2`.
  public var chromaHeight: Int { (height + 1) / 2 }

  /// `true` when sizes are positive and every plane holds `stride * rows` bytes with
  /// `stride ≥` the plane width.
  public var isValid: Bool {
    guard width > 0, height > 0, strideY >= width, strideU >= chromaWidth, strideV >= chromaWidth
    else { return false }
    return dataY.count >= strideY * height && dataU.count >= strideU * chromaHeight
      && dataV.count >= strideV * chromaHeight
  }
}
