import Dispatch
import Synchronization
import WCSCodecs
import WCSDevices
import WCSMediaSeam
import WCSProtocols

/// Something that feeds a published track: started when the connection is up, stopped on close
/// or camera switch.
protocol NativeCaptureSource: AnyObject, Sendable {
  /// Starts delivering media. Idempotent.
  func start()
  /// Stops delivering media; nothing is delivered after it returns. Idempotent.
  func stop()
}

/// The virtual camera (`VirtualCamera`) at the track's size and frame rate: picture `n` every
/// `1 / frameRate` seconds, RTP timestamps from the track's clock.
final class VirtualCameraSource: NativeCaptureSource {
  private let track: VideoSendTrack
  private let camera: VirtualCamera
  private let ticker: QueueTicker
  private let clock: NativeMediaClock
  private let frameIndex = QueueCounter()

  init(track: VideoSendTrack, clock: NativeMediaClock) {
    self.track = track
    self.clock = clock
    camera = VirtualCamera(
      width: track.parameters.width, height: track.parameters.height,
      frameRate: track.parameters.frameRate)
    ticker = QueueTicker(
      queue: track.queue, interval: .nanoseconds(1_000_000_000 / camera.frameRate))
  }

  func start() {
    ticker.start { [track, camera, clock, frameIndex] in
      let index = frameIndex.next()
      var cpu = 0.0
      let picture = CodecCPUTime.measure(into: &cpu) { camera.frame(index) }
      track.countSourceCPUTime(cpu)
      track.encode(picture, timestamp: clock.videoTimestamp())
    }
  }

  func stop() { ticker.stop() }
}

/// The virtual microphone (`VirtualMicrophone`, a 440 Hz tone): each 20 ms frame when the clock
/// passes its end (one tick per frame, on the frame boundaries of the clock), stamped with when
/// its first sample was captured, `origin + 20 ms × index`.
final class VirtualMicrophoneSource: NativeCaptureSource {
  private let track: AudioSendTrack
  private let microphone: VirtualMicrophone
  private let ticker: QueueTicker
  private let clock: NativeMediaClock

  init(track: AudioSendTrack, clock: NativeMediaClock, microphone: VirtualMicrophone) {
    self.track = track
    self.clock = clock
    self.microphone = microphone
    ticker = QueueTicker(queue: track.queue, interval: .milliseconds(20))
  }

  func start() {
    // Frames follow the clock, not the tick count, so a late tick catches up.
    let sent = QueueCounter()
    ticker.start(anchor: clock.origin) { [track, microphone, clock] in
      let due = clock.elapsedAudioFrames()
      let range = sent.advance(to: due)
      for index in range.suffix(10) {
        var cpu = 0.0
        let frame = CodecCPUTime.measure(into: &cpu) { microphone.frame(index) }
        track.countSourceCPUTime(cpu)
        track.append(
          frame.samples, sourceChannels: frame.channels,
          capturedAt: clock.origin + .milliseconds(20 * index))
      }
    }
  }

  func stop() { ticker.stop() }
}

/// An app capturer (`RTCVideoCapturer`, `FPWCSVideoCapturer` hooks): its delivered frames are
/// encoded; `startCapture`/`stopCapture` are called when it adopts `FPWCSVideoCapturer`.
final class CapturerSource: NativeCaptureSource, @unchecked Sendable {
  // @unchecked Sendable: the capturer is only touched through its thread-safe
  // `setFrameHandler` and, for the hooks, from `start`/`stop`, which the connection serializes.
  private let capturer: RTCVideoCapturer
  private let track: VideoSendTrack
  private let clock: NativeMediaClock
  private let device: CaptureDevice?

  init(
    capturer: RTCVideoCapturer, track: VideoSendTrack, clock: NativeMediaClock,
    device: CaptureDevice?
  ) {
    self.capturer = capturer
    self.track = track
    self.clock = clock
    self.device = device
  }

  func start() {
    capturer.setFrameHandler { [track, clock] frame in
      guard let image = I420Image(frame) else { return }
      let timestamp = clock.videoTimestamp()
      track.queue.async { track.encode(image, timestamp: timestamp) }
    }
    (capturer as? any FPWCSVideoCapturer)?.startCapture(
      with: device,
      format: VideoCaptureFormat(width: track.parameters.width, height: track.parameters.height),
      fps: track.parameters.frameRate)
  }

  func stop() {
    (capturer as? any FPWCSVideoCapturer)?.stopCapture()
    capturer.setFrameHandler(nil)
  }
}

/// External PCM (`MediaBackend.deliverExternalAudio`) for a track whose source is external.
final class ExternalAudioSource: NativeCaptureSource {
  private let track: AudioSendTrack
  private let running = Mutex(false)

  init(track: AudioSendTrack) { self.track = track }

  func start() { running.withLock { $0 = true } }
  func stop() { running.withLock { $0 = false } }

  /// Queues `frame` for encoding; frames other than 48 kHz mono/stereo are dropped.
  func deliver(_ frame: AudioFrame) {
    guard running.withLock({ $0 }), frame.sampleRate == PCMAudioFrame.sampleRate else { return }
    let track = track
    // Delivered once recorded: the first sample is a frame's length old.
    let capturedAt =
      MediaInstant.now() - .seconds(Double(frame.frameCount) / Double(frame.sampleRate))
    track.queue.async {
      track.append(frame.samples, sourceChannels: frame.channels, capturedAt: capturedAt)
    }
  }
}

/// The media clock of one connection: RTP timestamps of captured pictures (90 kHz) and the
/// count of 20 ms audio frames due since capture started, from one monotonic origin.
struct NativeMediaClock: Sendable {
  let origin = MediaInstant.now()

  /// Seconds since the origin.
  func elapsed() -> Double {
    (MediaInstant.now() - origin).seconds
  }

  /// The 90 kHz RTP timestamp of a picture captured now (RFC 7741 §4.1).
  func videoTimestamp() -> UInt32 {
    UInt32(truncatingIfNeeded: Int64(elapsed() * 90_000))
  }

  /// 20 ms frames since the origin (whole ones: exact at a frame's end, where ticks fall).
  func elapsedAudioFrames() -> Int {
    Int((MediaInstant.now() - origin).nanoseconds / 20_000_000)
  }
}

/// A tick handler's counter. One serial queue uses it, so its lock is never contended; the
/// lock makes that a checked property rather than a promise.
final class QueueCounter: Sendable {
  private let count = Mutex(0)

  /// Returns the value and counts up.
  func next() -> Int {
    count.withLock { value in
      defer { value += 1 }
      return value
    }
  }

  /// Raises the value to `target` if it is below; returns the values passed over.
  func advance(to target: Int) -> Range<Int> {
    count.withLock { value in
      defer { value = max(value, target) }
      return value..<max(value, target)
    }
  }
}
