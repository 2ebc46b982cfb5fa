/// A capture device (`FPWCSApi2MediaDevice`, api-surface.md §2.10).
public final class FPWCSApi2MediaDevice: Sendable {
  /// `"audio"` or `"video"` (the iOS values of `AVMediaTypeAudio`/`AVMediaTypeVideo`).
  public let type: String
  /// Unique id, for `FPWCSApi2VideoConstraints.deviceID`.
  public let deviceID: String
  /// Human-readable name.
  public let label: String

  /// Creates a device description.
  public init(type: String, deviceID: String, label: String) {
    self.type = type
    self.deviceID = deviceID
    self.label = label
  }
}

/// Microphones and cameras (`FPWCSApi2MediaDeviceList`). The arrays are implicitly unwrapped, as
/// the unannotated iOS header imports them, so `list?.audio?.count` and `list.audio[0]` both compile.
public final class FPWCSApi2MediaDeviceList {
  /// Microphones.
  public var audio: [FPWCSApi2MediaDevice]! = []
  /// Cameras.
  public var video: [FPWCSApi2MediaDevice]! = []

  /// An empty list.
  public init() {}
}
