import Dispatch
import Foundation
import Synchronization
import WCSCodecs
import WCSEventLoop
import WCSMediaSeam
import WCSProtocols

/// The decode side of one played video track: RTP packets released by the receive stream's
/// jitter buffer → VP8 frame assembly and decoding (`VideoDecodePipeline`) → the stream's renderer.
///
/// Runs where its `DecodePlacement` says, decided once when the track is negotiated (`place`):
/// on the connection's event loop, sparing a hand-off and a worker wake-up per picture, or on its
/// own serial queue, so a large picture never holds the packets and timers of other streams
/// (docs/performance.md). Before `place`, and without a loop, on the queue.
final class VideoReceiveTrack: @unchecked Sendable {
  // @unchecked Sendable: the decode state is confined to the placement's thread (the loop, or
  // `queue`), which `place` fixes before the first packet; the counters sit behind a mutex.

  let queue = DispatchQueue(label: "WCSMedia.VideoReceiveTrack", qos: .userInitiated)
  let receiver: VideoDecodePipeline<VideoFrame>
  /// The H.264 pipeline used instead of `receiver` once the answer chose H.264 (`useH264`).
  private var h264: H264DecodePipeline?
  let renderer: (any VideoRenderer)?
  private let onKeyFrameNeeded: @Sendable () -> Void
  private let stats = Mutex(VideoDecodePipelineStatistics())
  /// Whether the track was stopped, and whether a `render` call is in progress: each picture
  /// is handed over only while not stopped, checked under the same lock `stop` sets it with.
  let renderGate = Mutex(RenderGate())
  /// The loop `handle` is called on (nil: none; pictures decode on the queue).
  let loop: EventLoop?
  /// Where pictures decode; `.queue` until `place`.
  private(set) var placement = DecodePlacement.queue
  /// Pictures decoded on the loop.
  private let decodedOnLoop = Atomic<Int>(0)
  /// The pipeline's output, kept between calls (taken out for the call and emptied), so a
  /// call makes no new array of frames.
  private var output = VideoDecodePipeline<VideoFrame>.Output()
  // A/V sync (VideoReceiveTrack+Sync.swift).
  let playoutSync: PlayoutSync?
  var renderQueue = VideoRenderQueue<VideoDecodePipeline<VideoFrame>.Frame>()
  var releaseScheduled = false

  /// - Parameters:
  ///   - loop: the loop `handle` is called on (nil: always on the track's queue).
  ///   - placement: where pictures decode, when known at creation (tests); else `place` it.
  ///   - onKeyFrameNeeded: called (on the placement's thread) when the picture is lost; the
  ///     owner asks the sender for a key frame (PLI).
  init(
    renderer: (any VideoRenderer)?, playoutSync: PlayoutSync? = nil, loop: EventLoop? = nil,
    placement: DecodePlacement = .queue, onKeyFrameNeeded: @escaping @Sendable () -> Void
  ) throws(VP8Error) {
    // Straight into the renderer's frame type: one copy out of libvpx per picture, into the
    // planes of the last picture rendered (handed back by `recycle`) when nothing kept it.
    receiver = try VideoDecodePipeline(decodeReusing: { decoder, data, spare throws(VP8Error) in
      try decoder.decodeVideoFrame(data, reusing: &spare)
    })
    self.renderer = renderer
    self.playoutSync = playoutSync
    self.loop = loop
    self.onKeyFrameNeeded = onKeyFrameNeeded
    if case .loop = placement, loop != nil { self.placement = placement }
  }

  deinit {
    // A track dropped without `stop` gives its share of the loop back all the same.
    guard let loop, case .loop(let share) = placement, !renderGate.withLock({ $0.stopped })
    else { return }
    loop.execute { loop.workBudget.release(share) }
  }

  /// Fixes where pictures decode, once, when the track is negotiated: a `.loop` placement holds
  /// its share of the loop's `workBudget` until `stop`. Call on the loop given at `init`, before
  /// the first packet is handed over; without a loop the track stays on its queue.
  func place(_ placement: DecodePlacement) {
    guard let loop, case .loop(let share) = placement, case .queue = self.placement else {
      return
    }
    loop.workBudget.hold(share)
    self.placement = placement
  }

  /// Decodes H.264 (RFC 6184) instead of VP8: the answer chose it. Call before the first
  /// packet is handed over, on the loop given at `init` (any thread without one).
  /// - Throws: `H264Error.initialization` when libavcodec has no H.264 decoder.
  func useH264() throws(H264Error) {
    h264 = try H264DecodePipeline()
  }

  /// Decoder counters.
  var statistics: VideoDecodePipelineStatistics { stats.withLock { $0 } }

  /// How many pictures were decoded on the loop rather than the queue.
  var picturesDecodedOnLoop: Int { decodedOnLoop.load(ordering: .relaxed) }

  /// Stops rendering: pictures still queued for decoding are dropped and no `render` call
  /// begins once this returns. Returns once the decode queue is idle, unless a `render` call is
  /// in progress: that one may be what stops the track (a renderer closing its connection,
  /// inline on the loop or from the queue while it waits for the loop), and waiting for it
  /// would deadlock. On the loop (where inline decoding runs), or from `render`.
  func stop() {
    let (rendering, wasStopped) = renderGate.withLock { gate in
      defer { gate.stopped = true }
      return (gate.rendering, gate.stopped)
    }
    if !wasStopped, let loop, case .loop(let share) = placement {
      if loop.inEventLoop {
        loop.workBudget.release(share)
      } else {
        loop.execute { loop.workBudget.release(share) }
      }
    }
    if !rendering { queue.sync {} }
  }

  /// Whether `stop` ran.
  var isStopped: Bool { renderGate.withLock { $0.stopped } }

  /// Hands `frame` to `renderer` unless the track was stopped (before this picture or by the
  /// renderer during the previous one). On the track's placement.
  func render(_ frame: VideoFrame, to renderer: any VideoRenderer) {
    let open = renderGate.withLock { gate in
      gate.rendering = !gate.stopped
      return gate.rendering
    }
    guard open else { return }
    renderer.render(frame)
    renderGate.withLock { $0.rendering = false }
  }

  /// Decodes packets released at `now`, on the track's placement. Call on the loop given at
  /// `init` (any thread without one).
  func handle(_ packets: [ReceivedRTPPacket], now: MediaInstant) {
    guard !packets.isEmpty else { return }
    if case .loop = placement {
      decodeAndPresent(packets, now: now)
      decodedOnLoop.add(1, ordering: .relaxed)
      return
    }
    queue.async { self.decodeAndPresent(packets, now: now) }
  }

  /// A new source (SSRC) took over the played stream: its packets are numbered afresh, so the
  /// assembler starts over before the first of them (`VideoDecodePipeline.restartSource`), in
  /// order with the pictures handed over before, on the track's placement. Call on the loop
  /// given at `init` (any thread without one), before handing over the new source's first
  /// packets.
  func sourceChanged() {
    if case .loop = placement {
      receiver.restartSource()
      h264?.restartSource()
      return
    }
    queue.async {
      self.receiver.restartSource()
      self.h264?.restartSource()
    }
  }

  /// Assembles, decodes and renders, on the track's placement.
  private func decodeAndPresent(_ packets: [ReceivedRTPPacket], now: MediaInstant) {
    guard !isStopped else { return }
    var output = VideoDecodePipeline<VideoFrame>.Output()
    swap(&output, &self.output)
    if let h264 {
      h264.handle(packets, now: now, into: &output)
      stats.withLock { $0 = h264.statistics }
    } else {
      receiver.handle(packets, now: now, into: &output)
      stats.withLock { $0 = receiver.statistics }
    }
    if output.needsKeyFrame { onKeyFrameNeeded() }
    output.needsKeyFrame = false
    present(&output.frames)
    swap(&output, &self.output)
  }
}

/// A video track's stop flag and whether its renderer is being called.
struct RenderGate {
  var stopped = false
  var rendering = false
}
