/// A format, size and frame interval to capture with: what `V4L2CaptureMode.closest` picks from
/// what a device offers.
public struct V4L2CaptureMode: Sendable, Equatable {
  /// Pixel format: YUYV, MJPEG or YU12.
  public var pixelFormat: V4L2FourCC
  /// Picture size in pixels.
  public var size: V4L2Size
  /// Time per frame; nil when the device does not enumerate intervals.
  public var interval: V4L2FrameInterval?

  /// A capture mode.
  public init(pixelFormat: V4L2FourCC, size: V4L2Size, interval: V4L2FrameInterval?) {
    self.pixelFormat = pixelFormat
    self.size = size
    self.interval = interval
  }

  /// Pixel formats `V4L2Camera` converts to I420, cheapest first.
  public static let convertibleFormats: [V4L2FourCC] = [.yuv420, .yuyv, .mjpeg]

  /// The supported mode closest to a request: first the size nearest in
  /// `|Δwidth| + |Δheight|` (stepwise ranges give the request itself, clamped and rounded to the
  /// step), then among those sizes the interval nearest in frames per second, then the cheaper
  /// format (YU12, YUYV, MJPEG). So a camera whose 1280x720 is 10 fps in YUYV and 30 fps in MJPEG
  /// captures MJPEG when asked for 1280x720 at 30 fps.
  /// - Parameters:
  ///   - requested: the size asked for.
  ///   - framesPerSecond: the frame rate asked for.
  ///   - formats: the device's formats; ones not in `convertibleFormats` are ignored.
  ///   - sizes: frame sizes of a format.
  ///   - intervals: frame intervals of a format at a size (empty if unknown).
  /// - Returns: nil when no convertible format has a size.
  public static func closest(
    to requested: V4L2Size, framesPerSecond: Double, formats: [V4L2FourCC],
    sizes: (V4L2FourCC) throws(V4L2Error) -> V4L2FrameSizes,
    intervals: (V4L2FourCC, V4L2Size) throws(V4L2Error) -> [V4L2FrameInterval]
  ) throws(V4L2Error) -> V4L2CaptureMode? {
    var best: (mode: V4L2CaptureMode, cost: (Int, Double, Int))?
    for (rank, format) in convertibleFormats.enumerated() where formats.contains(format) {
      let candidates: [V4L2Size]
      switch try sizes(format) {
      case .discrete(let list): candidates = list
      case .stepwise(let low, let high, let stepWidth, let stepHeight):
        candidates = [
          V4L2Size(
            width: snap(requested.width, low.width, high.width, stepWidth),
            height: snap(requested.height, low.height, high.height, stepHeight))
        ]
      }
      guard
        let size = candidates.min(by: { distance($0, requested) < distance($1, requested) })
      else { continue }
      let sizeCost = distance(size, requested)
      if let current = best, current.cost.0 < sizeCost { continue }
      let offered = try intervals(format, size).filter { $0.numerator > 0 && $0.denominator > 0 }
      let interval = offered.min {
        abs($0.framesPerSecond - framesPerSecond) < abs($1.framesPerSecond - framesPerSecond)
      }
      let fpsCost = interval.map { abs($0.framesPerSecond - framesPerSecond) } ?? 0
      let cost = (sizeCost, fpsCost, rank)
      if let current = best, !(cost < current.cost) { continue }
      best = (V4L2CaptureMode(pixelFormat: format, size: size, interval: interval), cost)
    }
    return best?.mode
  }

  private static func distance(_ a: V4L2Size, _ b: V4L2Size) -> Int {
    abs(a.width - b.width) + abs(a.height - b.height)
  }

  private static func snap(_ value: Int, _ low: Int, _ high: Int, _ step: Int) -> Int {
    let clamped = min(max(value, low), max(low, high))
    let steps = (clamped - low + step / 2) / max(1, step)
    return min(low + steps * max(1, step), max(low, high))
  }
}
