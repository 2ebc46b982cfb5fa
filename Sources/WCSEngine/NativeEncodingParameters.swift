import WCSMediaSeam

/// Encoder settings derived from a `MediaConnectionRequest` (the app's media constraints): the
/// capture size and frame rate, the VP8 bitrate bounds (wcs-protocol.md §4.4 item 3) and the
/// Opus options (FEC, stereo, bitrate).
public struct NativeEncodingParameters: Sendable, Equatable {
  /// Encoded picture width in pixels (even).
  public var width: Int
  /// Encoded picture height in pixels (even).
  public var height: Int
  /// Frames per second.
  public var frameRate: Int
  /// Lowest VP8 bitrate congestion control may pick, bits per second.
  public var minVideoBitrate: Int
  /// Highest VP8 bitrate, bits per second.
  public var maxVideoBitrate: Int
  /// VP8 bitrate at start, bits per second (within the bounds).
  public var startVideoBitrate: Int
  /// Opus channels: 2 with `useStereo`, else 1.
  public var audioChannels: Int
  /// Opus target bitrate, bits per second.
  public var audioBitrate: Int
  /// Opus in-band FEC.
  public var audioFEC: Bool

  /// Defaults when the constraints leave something open: 640x480 at 30 fps, 30 kbit/s to
  /// 2.5 Mbit/s starting at 1 Mbit/s, mono Opus at 32 kbit/s without FEC.
  public static let defaultWidth = 640
  /// See `defaultWidth`.
  public static let defaultHeight = 480
  /// See `defaultWidth`.
  public static let defaultFrameRate = 30

  /// Derives the parameters: size = max bound, else min bound, else 640x480 (rounded down to
  /// even, at least 64x32 for the virtual camera); fps likewise (1...60); bitrates in kbit/s
  /// from the constraints, 0 = unbounded.
  public init(request: MediaConnectionRequest) {
    let video = request.video
    func pick(_ minimum: Int, _ maximum: Int, _ fallback: Int) -> Int {
      if maximum > 0 { return maximum }
      if minimum > 0 { return minimum }
      return fallback
    }
    width = max(64, pick(video?.minWidth ?? 0, video?.maxWidth ?? 0, Self.defaultWidth) & ~1)
    height = max(32, pick(video?.minHeight ?? 0, video?.maxHeight ?? 0, Self.defaultHeight) & ~1)
    frameRate = min(
      60, max(1, pick(video?.minFrameRate ?? 0, video?.maxFrameRate ?? 0, Self.defaultFrameRate)))
    let minKbps = max(0, video?.minBitrate ?? 0)
    let maxKbps = max(0, video?.maxBitrate ?? 0)
    minVideoBitrate = minKbps > 0 ? minKbps * 1000 : 30_000
    maxVideoBitrate = max(minVideoBitrate, maxKbps > 0 ? maxKbps * 1000 : 2_500_000)
    startVideoBitrate = min(max(1_000_000, minVideoBitrate), maxVideoBitrate)
    audioChannels = request.audio?.useStereo == true ? 2 : 1
    let audioBitrate = request.audio?.bitrate ?? 0
    self.audioBitrate = audioBitrate > 0 ? min(max(audioBitrate, 6_000), 510_000) : 32_000
    audioFEC = request.audio?.useFEC ?? false
  }
}
