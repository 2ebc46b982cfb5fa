import Dispatch
import Synchronization
import WCSCodecs
import WCSDevices
import WCSMediaSeam
import WCSProtocols

/// A media file as a capture source (device id `file:<path>`): decoded by FFmpeg
/// (`MediaFileReader`: I420 at the track's size, 48 kHz PCM), released in real time by a
/// `MediaFilePacer` and looped, on its own serial queue. A file whose H.264 may be sent as it
/// is (`H264FilePassThrough`) is not decoded: its access units go to the track as they are,
/// paced by their pts, which also stamps them.
final class FileCaptureSource: NativeCaptureSource, @unchecked Sendable {
  // @unchecked Sendable: `reader`, `pacer`, `startedAt`, `pending` and the reader in
  // `h264File` are used on `queue` only; `passThrough` sits behind its mutex.
  private let queue = DispatchQueue(label: "WCSMedia.FileCaptureSource", qos: .userInitiated)
  private let reader: MediaFileReader
  private let pacer: MediaFilePacer
  private let videoTrack: VideoSendTrack?
  private let audioTrack: AudioSendTrack?
  private let clock: NativeMediaClock
  private let ticker: QueueTicker
  private var startedAt: MediaInstant?
  private let path: String
  private let onFailure: @Sendable (String) -> Void
  private let constraints: MediaConnectionRequest.Video?
  /// The file's H.264 read without decoding, or why it cannot be.
  private let h264File: Result<H264FileReader, H264FileReaderError>?
  /// Decided at the first tick: the file's access units are sent as they are (read by `stop`).
  private let passThrough = Mutex<Bool?>(nil)
  private var pending: H264FileAccessUnit?

  /// Opens `path`; throws `.deviceUnavailable` when FFmpeg cannot read it. `onFailure` gets
  /// the reason once when the file stops giving samples: a read error, or a pass that decoded
  /// nothing (a truncated or corrupt file opens but never yields a picture).
  init(
    path: String, videoTrack: VideoSendTrack?, audioTrack: AudioSendTrack?,
    clock: NativeMediaClock, constraints: MediaConnectionRequest.Video? = nil,
    onFailure: @escaping @Sendable (String) -> Void = { _ in }
  ) throws(MediaBackendError) {
    self.path = path
    self.onFailure = onFailure
    self.constraints = constraints
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
    h264File =
      videoTrack == nil
      ? nil
      : Result { () throws(H264FileReaderError) in try H264FileReader(path: path, loops: true) }
    self.videoTrack = videoTrack
    self.audioTrack = audioTrack
    self.clock = clock
    ticker = QueueTicker(queue: queue, interval: .milliseconds(10))
  }

  func start() {
    ticker.start { [self] in self.tick() }
  }

  func stop() {
    ticker.stop()
    // The track goes back to its encoder for the next source (a camera switch).
    if let track = videoTrack, passThrough.withLock({ $0 }) == true {
      track.queue.async { track.setPassThrough(false) }
    }
  }

  private func tick() {
    let now = MediaInstant.now()
    let origin = startedAt ?? now
    startedAt = origin
    if passThrough.withLock({ $0 }) ?? choosePath() {
      tickPassThrough(elapsed: now - origin, origin: origin)
      return
    }
    let samples: [MediaSample]
    do {
      samples = try pacer.dueSamples(at: (now - origin).duration)
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

  /// Whether the file passes through (`H264FilePassThrough`); tells the track either way.
  private func choosePath() -> Bool {
    guard let track = videoTrack else {
      passThrough.withLock { $0 = false }
      return false
    }
    let refusal: String?
    switch h264File {
    case .success(let file):
      refusal = H264FilePassThrough.refusal(
        file: file, constraints: constraints, negotiated: track.h264Format)
    case .failure(let error): refusal = "\(error)"
    case nil: refusal = "no video"
    }
    passThrough.withLock { $0 = refusal == nil }
    track.queue.async { track.setPassThrough(refusal == nil, refusal: refusal) }
    return refusal == nil
  }

  /// Sends the access units due `elapsed` after the first tick, stamped from `origin` on the
  /// connection's media clock plus their pts.
  private func tickPassThrough(elapsed: MediaDuration, origin: MediaInstant) {
    guard let track = videoTrack, case .success(let file) = h264File else { return }
    let seconds = elapsed.seconds
    let base = Int64(((origin - clock.origin).seconds * 90_000).rounded())
    do {
      while let unit = try pending ?? file.nextAccessUnit() {
        guard unit.ptsSeconds <= seconds else {
          pending = unit
          return
        }
        pending = nil
        let timestamp = UInt32(
          truncatingIfNeeded: base + Int64((unit.ptsSeconds * 90_000).rounded()))
        track.queue.async {
          track.passThrough(unit.data, isKeyFrame: unit.isKeyFrame, timestamp: timestamp)
        }
      }
    } catch {
      ticker.stop()
      onFailure("file \(path): \(error)")
      return
    }
    // A looped file only ends when a whole pass gave nothing.
    ticker.stop()
    onFailure("file \(path): no picture could be read")
  }
}
