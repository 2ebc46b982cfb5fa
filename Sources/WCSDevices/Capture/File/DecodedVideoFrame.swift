/// One decoded picture in I420 (planar YUV 4:2:0, BT.601 as FFmpeg's swscale produces it).
///
/// Planes are tightly packed: `yStride == width`, `uStride == vStride == (width + 1) / 2`; the
/// chroma planes have `(height + 1) / 2` rows.
public struct DecodedVideoFrame: Equatable, Sendable {
  /// Width in pixels.
  public var width: Int
  /// Height in pixels.
  public var height: Int
  /// Luma plane, `yStride * height` bytes.
  public var y: [UInt8]
  /// Cb plane, `uStride * ((height + 1) / 2)` bytes.
  public var u: [UInt8]
  /// Cr plane, `vStride * ((height + 1) / 2)` bytes.
  public var v: [UInt8]
  /// Bytes per row of `y`.
  public var yStride: Int
  /// Bytes per row of `u`.
  public var uStride: Int
  /// Bytes per row of `v`.
  public var vStride: Int
  /// Presentation time in seconds from the start of the file.
  public var ptsSeconds: Double

  /// A frame from its planes; the caller guarantees the plane sizes documented on the type.
  public init(
    width: Int, height: Int, y: [UInt8], u: [UInt8], v: [UInt8], yStride: Int, uStride: Int,
    vStride: Int, ptsSeconds: Double
  ) {
    self.width = width
    self.height = height
    self.y = y
    self.u = u
    self.v = v
    self.yStride = yStride
    self.uStride = uStride
    self.vStride = vStride
    self.ptsSeconds = ptsSeconds
  }
}
