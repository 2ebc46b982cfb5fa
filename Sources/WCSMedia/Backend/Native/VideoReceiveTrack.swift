import Dispatch
import Foundation
import Synchronization

/// The decode side of one played video track: RTP packets released by the receive stream's
/// jitter buffer → VP8 frame assembly and decoding (`VideoReceiver`) → the stream's renderer.
/// Runs on its own serial queue, never on the event loop.
final class VideoReceiveTrack: @unchecked Sendable {
  // @unchecked Sendable: `receiver` (and the A/V sync `renderQueue`, `releaseScheduled`) is used
  // on `queue` only; `statistics` sits behind a mutex.

  let queue = DispatchQueue(label: "WCSMedia.VideoReceiveTrack", qos: .userInitiated)
  private let receiver: VideoDecodePipeline<VideoFrame>
  let renderer: (any VideoRenderer)?
  private let onKeyFrameNeeded: @Sendable () -> Void
  private let stats = Mutex(VideoReceiver.Statistics())
  let stopped = Mutex(false)
  // A/V sync (VideoReceiveTrack+Sync.swift).
  let playoutSync: PlayoutSync?
  var renderQueue = VideoRenderQueue<VideoDecodePipeline<VideoFrame>.Frame>()
  var releaseScheduled = false

  /// - Parameter onKeyFrameNeeded: called (on the queue) when the picture is lost; the owner
  ///   asks the sender for a key frame (PLI).
  init(
    renderer: (any VideoRenderer)?, playoutSync: PlayoutSync? = nil,
    onKeyFrameNeeded: @escaping @Sendable () -> Void
  ) throws(VP8Error) {
    // Straight into the renderer's frame type: one copy out of libvpx per picture.
    receiver = try VideoDecodePipeline { decoder, data throws(VP8Error) in
      try decoder.decodeVideoFrame(data)
    }
    self.renderer = renderer
    self.playoutSync = playoutSync
    self.onKeyFrameNeeded = onKeyFrameNeeded
  }

  /// Decoder counters.
  var statistics: VideoReceiver.Statistics { stats.withLock { $0 } }

  /// Stops rendering: pictures still queued for decoding are dropped; returns once the
  /// decode queue is idle, so nothing reaches the renderer afterwards. Not on `queue`.
  func stop() {
    stopped.withLock { $0 = true }
    queue.sync {}
  }

  /// Queues packets released at `now` for decoding. Callable from any thread.
  func handle(_ packets: [ReceivedRTPPacket], now: ContinuousClock.Instant) {
    guard !packets.isEmpty else { return }
    queue.async {
      guard !self.stopped.withLock({ $0 }) else { return }
      let output = self.receiver.handle(packets, now: now)
      self.stats.withLock { $0 = self.receiver.statistics }
      if output.needsKeyFrame { self.onKeyFrameNeeded() }
      self.present(output.frames)
    }
  }
}
