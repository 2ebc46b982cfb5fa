import Foundation
import Synchronization
import WCSMediaSeam

/// A `VideoRenderer` that keeps a copy of the newest frame and forwards every frame to another
/// renderer: what a played stream's local `snapshot` reads. The copy goes into buffers reused
/// from frame to frame (no allocation while the size stays), so the decoder keeps recycling its
/// own.
public final class LastFrameRenderer: VideoRenderer {
  private struct Kept {
    var frame: VideoFrame?
  }

  /// The renderer every frame is passed on to (a played stream's `display`).
  public let wrapped: (any VideoRenderer)?
  private let kept = Mutex(Kept())

  /// Keeps the newest frame and passes each on to `wrapped` (or to nothing).
  public init(wrapping wrapped: (any VideoRenderer)? = nil) { self.wrapped = wrapped }

  /// Copies `frame` (when its planes are consistent), then forwards it.
  public func render(_ frame: VideoFrame) {
    if frame.isValid {
      kept.withLock { k in
        guard var copy = k.frame, copy.width == frame.width, copy.height == frame.height,
          copy.dataY.count == frame.dataY.count, copy.dataU.count == frame.dataU.count,
          copy.dataV.count == frame.dataV.count
        else {
          k.frame = VideoFrame(
            width: frame.width, height: frame.height, dataY: Data(frame.dataY),
            dataU: Data(frame.dataU), dataV: Data(frame.dataV), strideY: frame.strideY,
            strideU: frame.strideU, strideV: frame.strideV, timestampNs: frame.timestampNs)
          return
        }
        k.frame = nil  // `copy` is now the only reference: written in place
        Self.overwrite(&copy.dataY, with: frame.dataY)
        Self.overwrite(&copy.dataU, with: frame.dataU)
        Self.overwrite(&copy.dataV, with: frame.dataV)
        copy.strideY = frame.strideY
        copy.strideU = frame.strideU
        copy.strideV = frame.strideV
        copy.timestampNs = frame.timestampNs
        k.frame = copy
      }
    }
    wrapped?.render(frame)
  }

  /// The newest frame, nil before the first.
  public var lastFrame: VideoFrame? { kept.withLock { $0.frame } }

  /// The newest frame as a picture, nil before the first.
  public var lastPicture: I420Image? { lastFrame.flatMap { I420Image($0) } }

  /// The newest frame as a PNG or JPEG file.
  /// - Returns: nil before the first frame.
  /// - Throws: `PictureFileError` from the encoder.
  public func snapshot(as format: PictureFormat = .png) throws(PictureFileError) -> [UInt8]? {
    guard let picture = lastPicture else { return nil }
    return try PictureFile.encode(picture, as: format)
  }

  private static func overwrite(_ target: inout Data, with source: Data) {
    target.withUnsafeMutableBytes { out in
      source.withUnsafeBytes { out.copyMemory(from: $0) }
    }
  }
}
