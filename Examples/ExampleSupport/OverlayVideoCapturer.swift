import FPWCSApi2Swift
import Foundation
import Synchronization
import WCSMedia

/// A picture composited over video frames at a place, with an opacity: the iOS ImageOverlay
/// and GPUImage examples' idea, in plain I420 pixel arithmetic (no GPU). Sans-I/O: takes a
/// frame, returns it with the overlay.
public struct ImageOverlay: Sendable, Equatable {
  /// The picture laid over the frames.
  public let image: I420Image
  /// Left edge in the frame, pixels (even, so chroma samples line up).
  public let x: Int
  /// Top edge in the frame, pixels (even).
  public let y: Int
  /// 1: the picture replaces the frame's pixels; 0: invisible; between: a blend.
  public let opacity: Double

  /// An overlay of `image` with its top-left corner at (`x`, `y`).
  /// - Throws: `ExampleError.usage` for an odd or negative position or an opacity outside
  ///   0...1.
  public init(image: I420Image, x: Int, y: Int, opacity: Double = 1) throws(ExampleError) {
    guard x >= 0, y >= 0, x % 2 == 0, y % 2 == 0 else {
      throw .usage("the overlay position wants even, non-negative pixels, got \(x),\(y)")
    }
    guard (0...1).contains(opacity) else {
      throw .usage("--opacity wants 0...1, got \(opacity)")
    }
    self.image = image.packed()
    self.x = x
    self.y = y
    self.opacity = opacity
  }

  /// The overlay at the bottom-right corner of a `width`×`height` frame, `margin` pixels in
  /// (evened), or at 0,0 when it does not fit.
  public static func bottomRight(
    of image: I420Image, inFrame width: Int, _ height: Int, margin: Int = 16, opacity: Double = 1
  ) throws(ExampleError) -> ImageOverlay {
    let x = max(0, (width - image.width - margin) & ~1)
    let y = max(0, (height - image.height - margin) & ~1)
    return try ImageOverlay(image: image, x: x, y: y, opacity: opacity)
  }

  /// `frame` with the overlay drawn on it; the part of the picture outside the frame is cut.
  public func apply(to frame: I420Image) -> I420Image {
    var out = frame
    let width = min(image.width, frame.width - x)
    let height = min(image.height, frame.height - y)
    guard width > 0, height > 0 else { return out }
    // Weights in 1/256: integer blending, exact at 0 and 1.
    let alpha = Int((opacity * 256).rounded())
    func blend(
      _ destination: inout [UInt8], _ destinationStride: Int, _ source: [UInt8],
      _ sourceStride: Int, _ left: Int, _ top: Int, _ columns: Int, _ rows: Int
    ) {
      for row in 0..<rows {
        let d = (top + row) * destinationStride + left
        let s = row * sourceStride
        if alpha >= 256 {
          destination.replaceSubrange(d..<d + columns, with: source[s..<s + columns])
        } else {
          for column in 0..<columns {
            let over = Int(source[s + column])
            let under = Int(destination[d + column])
            destination[d + column] = UInt8((over * alpha + under * (256 - alpha) + 128) >> 8)
          }
        }
      }
    }
    blend(&out.y, out.strideY, image.y, image.strideY, x, y, width, height)
    let chromaColumns = min(image.chromaWidth, frame.chromaWidth - x / 2)
    let chromaRows = min(image.chromaHeight, frame.chromaHeight - y / 2)
    blend(&out.u, out.strideU, image.u, image.strideU, x / 2, y / 2, chromaColumns, chromaRows)
    blend(&out.v, out.strideV, image.v, image.strideV, x / 2, y / 2, chromaColumns, chromaRows)
    return out
  }

  /// The `width`×`height` part of `picture` at (`x`, `y`) (even), tightly packed; `nil` when
  /// it is not inside the picture.
  public static func region(of picture: I420Image, x: Int, y: Int, width: Int, height: Int)
    -> I420Image?
  {
    guard x >= 0, y >= 0, x % 2 == 0, y % 2 == 0, width > 0, height > 0,
      x + width <= picture.width, y + height <= picture.height
    else { return nil }
    var out = I420Image(width: width, height: height)
    for row in 0..<height {
      let s = (y + row) * picture.strideY + x
      out.y.replaceSubrange(
        row * out.strideY..<row * out.strideY + width, with: picture.y[s..<s + width])
    }
    for row in 0..<out.chromaHeight {
      let columns = out.chromaWidth
      let su = (y / 2 + row) * picture.strideU + x / 2
      let sv = (y / 2 + row) * picture.strideV + x / 2
      out.u.replaceSubrange(
        row * out.strideU..<row * out.strideU + columns, with: picture.u[su..<su + columns])
      out.v.replaceSubrange(
        row * out.strideV..<row * out.strideV + columns, with: picture.v[sv..<sv + columns])
    }
    return out
  }

  /// A picture to use when no `--image` is given: four colour bars (red, green, blue, white)
  /// with a dark frame, `width`×`height` (evened).
  public static func badge(width: Int = 128, height: Int = 64) -> I420Image {
    let w = max(8, width & ~1)
    let h = max(8, height & ~1)
    // BT.601 limited range: red, green, blue, white.
    let bars: [(UInt8, UInt8, UInt8)] = [
      (81, 90, 240), (145, 54, 34), (41, 240, 110), (235, 128, 128),
    ]
    var image = I420Image(width: w, height: h, y: 16)
    for row in 0..<h {
      for column in 0..<w {
        let border = row < 4 || row >= h - 4 || column < 4 || column >= w - 4
        image.y[row * image.strideY + column] = border ? 16 : bars[column * 4 / w].0
      }
    }
    for row in 0..<image.chromaHeight {
      for column in 0..<image.chromaWidth {
        let border =
          row < 2 || row >= image.chromaHeight - 2 || column < 2
          || column >= image.chromaWidth - 2
        let bar = bars[column * 2 * 4 / w]
        image.u[row * image.strideU + column] = border ? 128 : bar.1
        image.v[row * image.strideV + column] = border ? 128 : bar.2
      }
    }
    return image
  }
}

/// The ImageOverlay example's video source: an app capturer (`RTCVideoCapturer` +
/// `FPWCSVideoCapturer`, as the iOS example subclasses `RTCCameraVideoCapturer`) whose frames
/// come from the virtual camera or a media file, each with `overlay` composited on it.
public final class OverlayVideoCapturer: RTCVideoCapturer, FPWCSVideoCapturer, @unchecked Sendable {
  // @unchecked Sendable: `overlay`, `source` and the sizes are immutable; the timer, the file
  // reader and its last frame are used on `queue` only.

  /// Where the frames under the overlay come from.
  public enum Source: Sendable, Equatable {
    /// The virtual camera's pattern with its frame numbers (`VirtualCamera`).
    case virtualCamera
    /// A media file's video, scaled to the capturer's size, from the start again at its end.
    case file(String)
  }

  /// The overlay drawn on every frame.
  public let overlay: ImageOverlay
  /// Frame width, pixels.
  public let width: Int
  /// Frame height, pixels.
  public let height: Int
  /// Frames per second delivered.
  public let framesPerSecond: Int
  private let source: Source
  private let queue = DispatchQueue(label: "OverlayVideoCapturer", qos: .userInitiated)
  private var timer: (any DispatchSourceTimer)?
  private let delivered = Atomic<Int>(0)
  private var reader: MediaFileReader?
  private var lastFileFrame: I420Image?

  /// A capturer of `width`×`height` frames at `framesPerSecond` from `source`.
  /// - Throws: `ExampleError.failed` when the file cannot be opened.
  public init(
    overlay: ImageOverlay, source: Source, width: Int, height: Int, framesPerSecond: Int
  ) throws(ExampleError) {
    self.overlay = overlay
    self.source = source
    self.width = width
    self.height = height
    self.framesPerSecond = max(1, framesPerSecond)
    if case .file(let path) = source {
      do {
        reader = try MediaFileReader(
          path: path, videoSize: (width, height), decodeVideo: true, decodeAudio: false)
      } catch {
        throw .failed("cannot open \(path): \(error)")
      }
    }
    super.init()
  }

  /// Frames delivered so far (each with the overlay).
  public var framesDelivered: Int { delivered.load(ordering: .relaxed) }

  /// Starts delivering frames (the SDK calls it when publishing starts).
  public func startCapture(with device: CaptureDevice?, format: VideoCaptureFormat?, fps: Int) {
    queue.async { [self] in
      self.timer?.cancel()
      self.timer = self.makeTimer()
      self.timer?.resume()
    }
  }

  /// A timer on `queue` delivering frame 0, 1, 2… at `framesPerSecond`. On `queue`.
  private func makeTimer() -> any DispatchSourceTimer {
    let camera = VirtualCamera(width: width, height: height, frameRate: framesPerSecond)
    let timer = DispatchSource.makeTimerSource(queue: queue)
    var index = 0
    let start = DispatchTime.now()
    timer.schedule(
      deadline: .now(), repeating: .nanoseconds(1_000_000_000 / framesPerSecond),
      leeway: .milliseconds(2))
    timer.setEventHandler { [self] in
      guard let picture = self.nextPicture(camera: camera, index: index) else { return }
      let composited = self.overlay.apply(to: picture)
      let elapsed = Int64(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds)
      index += 1
      self.delivered.add(1, ordering: .relaxed)
      self.deliver(
        VideoFrame(
          width: composited.width, height: composited.height, dataY: Data(composited.y),
          dataU: Data(composited.u), dataV: Data(composited.v), strideY: composited.strideY,
          strideU: composited.strideU, strideV: composited.strideV, timestampNs: elapsed))
    }
    return timer
  }

  /// The picture under the overlay for frame `index`; `nil` when a file gives none at all.
  private func nextPicture(camera: VirtualCamera, index: Int) -> I420Image? {
    guard let reader else { return camera.frame(index) }
    // Up to a few samples: the reader may give audio or need a rewind at the end.
    for _ in 0..<8 {
      do {
        guard let sample = try reader.nextSample() else {
          try reader.rewind()
          continue
        }
        guard case .video(let frame) = sample else { continue }
        var picture = I420Image(width: frame.width, height: frame.height)
        for row in 0..<frame.height {
          let s = row * frame.yStride
          picture.y.replaceSubrange(
            row * picture.strideY..<row * picture.strideY + frame.width,
            with: frame.y[s..<s + frame.width])
        }
        for row in 0..<picture.chromaHeight {
          let columns = picture.chromaWidth
          let su = row * frame.uStride
          let sv = row * frame.vStride
          picture.u.replaceSubrange(
            row * picture.strideU..<row * picture.strideU + columns,
            with: frame.u[su..<su + columns])
          picture.v.replaceSubrange(
            row * picture.strideV..<row * picture.strideV + columns,
            with: frame.v[sv..<sv + columns])
        }
        lastFileFrame = picture
        return picture
      } catch {
        break
      }
    }
    return lastFileFrame
  }

  /// Stops delivering frames.
  public func stopCapture() {
    // Synchronously: no frame is delivered once this returns.
    queue.sync {
      timer?.cancel()
      timer = nil
    }
  }

  /// Nothing to lock: the frames have no orientation.
  public func lockCameraOrientation() {}

  /// Nothing to unlock.
  public func unlockCameraOrientation() {}
}
