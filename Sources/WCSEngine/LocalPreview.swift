import Dispatch
import Synchronization
import WCSDevices
import WCSMediaSeam

/// Local capture shown in a renderer without publishing (`MediaBackend.openLocalMedia`, iOS
/// `getMediaAccess`): the virtual camera's pictures, or an app capturer's frames, rendered at
/// the constraints' size and frame rate.
final class LocalPreview: @unchecked Sendable {
  // @unchecked Sendable: the capturer is only touched through its thread-safe
  // `setFrameHandler` and the `FPWCSVideoCapturer` hooks from `start`/`stop`, which the backend
  // calls under its lock.
  let display: (any VideoRenderer)?
  private let queue = DispatchQueue(label: "WCSMedia.LocalPreview")
  private let ticker: QueueTicker?
  private let capturer: RTCVideoCapturer?
  private let parameters: NativeEncodingParameters

  /// Throws `.deviceUnavailable` for a camera id the backend does not know.
  init(request: MediaConnectionRequest, display: (any VideoRenderer)?) throws(MediaBackendError) {
    self.display = display
    parameters = NativeEncodingParameters(request: request)
    capturer = request.video?.capturer
    if let video = request.video, capturer == nil {
      let id = video.deviceID ?? NativeMediaDevices.virtualCameraID
      guard id == NativeMediaDevices.virtualCameraID else {
        throw .deviceUnavailable("preview supports the virtual camera and app capturers, not \(id)")
      }
      ticker = QueueTicker(
        queue: queue, interval: .nanoseconds(1_000_000_000 / parameters.frameRate))
    } else {
      ticker = nil
    }
  }

  func start() {
    if let capturer {
      let display = display
      capturer.setFrameHandler { frame in display?.render(frame) }
      (capturer as? any FPWCSVideoCapturer)?.startCapture(
        with: nil, format: VideoCaptureFormat(width: parameters.width, height: parameters.height),
        fps: parameters.frameRate)
    }
    guard let ticker, let display else { return }
    let camera = VirtualCamera(
      width: parameters.width, height: parameters.height, frameRate: parameters.frameRate)
    let index = QueueCounter()
    let clock = NativeMediaClock()
    ticker.start {
      let n = index.next()
      display.render(
        VideoFrame(camera.frame(n), timestampNs: Int64(clock.elapsed() * 1_000_000_000)))
    }
  }

  func stop() {
    ticker?.stop()
    if let capturer {
      (capturer as? any FPWCSVideoCapturer)?.stopCapture()
      capturer.setFrameHandler(nil)
    }
  }
}
