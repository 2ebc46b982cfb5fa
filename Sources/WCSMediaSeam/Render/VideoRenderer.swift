/// Where decoded (play) or captured (publish preview) video goes: the Linux counterpart of the
/// iOS SDK's `display` view (`UIView<RTCVideoRenderer>`). Implementations may be a file writer,
/// a window or a frame callback. Objects are compared by identity, so one renderer can be
/// released with `releaseLocalMedia`.
public protocol VideoRenderer: AnyObject, Sendable {
  /// Receives one frame. Called on a media thread, one frame at a time, in capture/decode order;
  /// return quickly (copy the frame if it must outlive the call). A played stream's renderer
  /// may run on its connection's event loop: it may call into the connection (getters,
  /// `close()`, after which it gets no further frame) but must not block waiting for a
  /// completion the connection delivers (`stats(completion:)`), which needs that loop.
  func render(_ frame: VideoFrame)
}

/// A renderer that hands every frame to a closure (tests, custom sinks).
public final class VideoFrameCallbackRenderer: VideoRenderer {
  private let handler: @Sendable (VideoFrame) -> Void

  /// Creates a renderer calling `handler` for every frame, on the media thread.
  public init(_ handler: @escaping @Sendable (VideoFrame) -> Void) {
    self.handler = handler
  }

  /// Calls the handler with `frame`.
  public func render(_ frame: VideoFrame) { handler(frame) }
}
