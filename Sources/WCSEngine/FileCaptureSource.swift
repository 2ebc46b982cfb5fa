import Dispatch
import WCSCodecs
import WCSDevices
import WCSMediaSeam

/// A media file as a capture source (device id `file:<path>`): decoded by FFmpeg
/// (`MediaFileReader`: I420 at the track's size, 48 kHz PCM), released in real time by a
/// `MediaFilePacer` and looped, on its own serial queue.
final class FileCaptureSource: NativeCaptureSource, @unchecked Sendable {
  // @unchecked Sendable: `reader`, `pacer` and `startedAt` are used on `queue` only.
  private let queue = DispatchQueue(label: "WCSMedia.FileCaptureSource", qos: .userInitiated)
  private let reader: MediaFileReader
  private let pacer: MediaFilePacer
  private let videoTrack: VideoSendTrack?
  private let audioTrack: AudioSendTrack?
  private let clock: NativeMediaClock
  private let ticker: QueueTicker
  private var startedAt: ContinuousClock.Instant?
  private let path: String
  private let onFailure: @Sendable (String) -> Void

  /// Opens `path`; throws `.deviceUnavailable` when FFmpeg cannot read it. `onFailure` gets
  /// the reason once when the file stops giving samples: a read error, or a pass that decoded
  /// nothing (a truncated or corrupt file opens but never yields a picture).
  init(
    path: String, videoTrack: VideoSendTrack?, audioTrack: AudioSendTrack?,
    clock: NativeMediaClock, onFailure: @escaping @Sendable (String) -> Void = { _ in }
  ) throws(MediaBackendError) {
    self.path = path
    self.onFailure = onFailure
    do {
      reader = try MediaFileReader(
        path: path,
        videoSize: videoTrack.map { ($0.parameters.width, $0.parameters.height) },
        audioChannels: audioTrack?.channels ?? 1, decodeVideo: videoTrack != nil,
        decodeAudio: audioTrack != nil)
    } catch {
      throw .deviceUnavailable("file \(path): \(error)")
    }
    pacer = MediaFilePacer(source: reader, loops: true)
    self.videoTrack = videoTrack
    self.audioTrack = audioTrack
    self.clock = clock
    ticker = QueueTicker(queue: queue, interval: .milliseconds(10))
  }

  func start() {
    ticker.start { [self] in self.tick() }
  }

  func stop() { ticker.stop() }

  private func tick() {
    let now = ContinuousClock().now
    let origin = startedAt ?? now
    startedAt = origin
    let samples: [MediaSample]
    do {
      samples = try pacer.dueSamples(at: now - origin)
    } catch {
      ticker.stop()
      onFailure("file \(path): \(error)")
      return
    }
    // A looped file only finishes when a whole pass gave nothing: it will never give media.
    if pacer.isFinished {
      ticker.stop()
      onFailure("file \(path): no \(videoTrack != nil ? "picture" : "sound") could be decoded")
    }
    for sample in samples {
      switch sample {
      case .video(let frame):
        guard let track = videoTrack,
          let image = I420Image(
            width: frame.width, height: frame.height, y: frame.y, strideY: frame.yStride,
            u: frame.u, strideU: frame.uStride, v: frame.v, strideV: frame.vStride)
        else { continue }
        let timestamp = clock.videoTimestamp()
        track.queue.async { track.encode(image, timestamp: timestamp) }
      case .audio(let chunk):
        guard let track = audioTrack else { continue }
        // Released when due, like the pictures (stamped at release too).
        track.queue.async {
          track.append(chunk.samples, sourceChannels: chunk.channels, capturedAt: now)
        }
      }
    }
  }
}
