import WCSMediaSeam

/// Swift-wrapper statics (`WCSApi2`, api-surface.md §2.2), with the wrapper's labels.
public enum WCSApi2 {
  /// Cameras and microphones (see `FPWCSApi2.getMediaDevices()`).
  public static func getMediaDevices() -> FPWCSApi2MediaDeviceList? { FPWCSApi2.getMediaDevices() }

  /// Opens local capture and preview (see `FPWCSApi2.getMediaAccess(_:display:)`); both
  /// parameters unlabeled as in the wrapper.
  /// - Throws: `WCSError.media` when a device cannot be opened.
  public static func getMediaAccess(
    _ constraints: FPWCSApi2MediaConstraints, _ display: (any VideoRenderer)?
  ) throws {
    try FPWCSApi2.getMediaAccess(constraints, display: display)
  }

  /// Stops local capture bound to `display` (labeled as in the wrapper).
  @discardableResult
  public static func releaseLocalMedia(display: (any VideoRenderer)?) -> Bool {
    FPWCSApi2.releaseLocalMedia(display)
  }
}
