import Foundation

@testable import WCSMedia
@testable import WCSMediaSeam

extension VideoFrame {
  /// A picture of `picture`'s size in a layout the decoder never makes: each luma row
  /// `rowPadding` bytes longer than the width and each chroma row `chromaPadding` longer, planes
  /// filled with 1, 2 and 3. Handed back as a spare, it must never be written into.
  static func padded(
    like picture: VideoFrame, rowPadding: Int, chromaPadding: Int, timestampNs: Int64
  ) -> VideoFrame {
    let stride = picture.width + rowPadding
    let chromaStride = picture.chromaWidth + chromaPadding
    return VideoFrame(
      width: picture.width, height: picture.height,
      dataY: Data(repeating: 1, count: stride * picture.height),
      dataU: Data(repeating: 2, count: chromaStride * picture.chromaHeight),
      dataV: Data(repeating: 3, count: chromaStride * picture.chromaHeight),
      strideY: stride, strideU: chromaStride, strideV: chromaStride, timestampNs: timestampNs)
  }
}
