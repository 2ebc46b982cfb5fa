import WCSMediaSeam

extension I420Image {
  /// The picture of `frame`, `nil` when its planes are inconsistent (`VideoFrame.isValid`).
  package init?(_ frame: VideoFrame) {
    guard frame.isValid else { return nil }
    self.init(
      width: frame.width, height: frame.height, y: [UInt8](frame.dataY), strideY: frame.strideY,
      u: [UInt8](frame.dataU), strideU: frame.strideU, v: [UInt8](frame.dataV),
      strideV: frame.strideV)
  }
}
