/// Why X11 screen capture failed.
public enum X11CaptureError: Error, Sendable, Equatable {
  /// No display was given and `DISPLAY` is not set.
  case noDisplay
  /// The X server could not be reached: the display name and xcb's connection error code
  /// (`xcb_connection_has_error`: 1 socket error, 2 extension, 3 out of memory, 4 request length,
  /// 5 display name parse error, 6 invalid screen, 7 fd passing).
  case connectionFailed(display: String, code: Int32)
  /// The root window's pixels are not 32-bit (depth 24/32): depth and bits per pixel found.
  case unsupportedPixelFormat(depth: Int, bitsPerPixel: Int)
  /// GetImage (or ShmGetImage) failed: the X error code or reason.
  case captureFailed(reason: String)
}
